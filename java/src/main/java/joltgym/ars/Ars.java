package joltgym.ars;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Random;
import joltgym.Pool;
import joltgym.Task;

/**
 * Augmented Random Search (Mania, Guy and Recht 2018), the V2-t variant, on
 * a batched {@link Pool}, with nothing beyond the JDK and this library.
 *
 * <p>A linear policy M acts on normalized observations, (x - mean) / std, the
 * statistics of every state visited so far (V2). Each iteration draws N
 * Gaussian directions delta_k; worlds 2k and 2k+1 of one pool of 2N worlds
 * run one episode each with M + nu delta_k and M - nu delta_k, all stepped
 * together; the b directions with the best max(r+, r-) (the "-t") update M
 * += alpha / (b sigma_R) sum (r+ - r-) delta_k, sigma_R the standard
 * deviation of those 2b returns. As in the paper, training returns of the
 * robots that can fall (Hopper, Walker2d) leave out the alive bonus; the
 * evaluations use the true reward.
 *
 * <pre>
 *   java -cp joltgym.jar:jna.jar -Djna.library.path=... joltgym.ars.Ars \
 *       [--task half_cheetah] [--episodes 1920] [--directions 32] [--top 4]
 *       [--step-size 0.02] [--noise 0.03] [--seed 0] [--threads 2] [--out runs/ars]
 * </pre>
 *
 * Writes OUT/curve.csv (iteration, training episodes and steps, the mean and
 * standard deviation of the evaluation returns of M, seconds) and
 * OUT/policy.json (replayed by examples/evaluate.py), and prints the final
 * policy's return on --final-episodes episodes seeded --final-seed + i.
 */
public final class Ars {
  /**
   * The paper's V2-t hyperparameters per task, the alive bonus to leave out
   * of training returns, and its Table 1: the reward threshold and the
   * episodes V2-t needed to reach it (the default budget).
   */
  record Defaults(int directions, int top, double stepSize, double noise, double shift,
      double threshold, long episodes) {}

  static Defaults defaults(String task) {
    return switch (task) {
      case "hopper" -> new Defaults(8, 4, 0.01, 0.025, 1.0, 3120, 1973);
      case "walker2d" -> new Defaults(40, 30, 0.03, 0.025, 1.0, 4390, 24000);
      case "ant" -> new Defaults(60, 20, 0.015, 0.025, 1.0, 3580, 20800);
      case "swimmer" -> new Defaults(1, 1, 0.02, 0.01, 0.0, 325, 427);
      default -> new Defaults(32, 4, 0.02, 0.03, 0.0, 3430, 1707);  // half_cheetah
    };
  }

  /** Welford's running mean and variance of the states visited (merged after each iteration). */
  static final class RunningStat {
    long n;
    final double[] mean;
    final double[] m2;

    RunningStat(int dim) {
      mean = new double[dim];
      m2 = new double[dim];
    }

    void push(double[] x, int base) {
      ++n;
      for (int k = 0; k < mean.length; ++k) {
        double d = x[base + k] - mean[k];
        mean[k] += d / n;
        m2[k] += d * (x[base + k] - mean[k]);
      }
    }

    /** 1/std per dimension (0 where the state never varies), as ARS's filter. */
    double[] invStd() {
      double[] out = new double[mean.length];
      for (int k = 0; k < out.length; ++k) {
        double std = n > 1 ? Math.sqrt(m2[k] / (n - 1)) : 1.0;
        out[k] = std < 1e-7 ? 0.0 : 1.0 / std;
      }
      return out;
    }
  }

  final String task;
  final String envId;
  final int directions;
  final int top;
  final double stepSize;
  final double noise;
  final double shift;
  final long seed;
  final Pool pool;
  final int obsDim;
  final int actDim;
  final double[] low;
  final double[] high;
  final double[][] m;  // the policy's weights [actDim][obsDim]
  final RunningStat stat;
  double[] mean;
  double[] invStd;
  long trainEpisodes;
  long trainSteps;

  /**
   * clipActions false (the default, as the paper's code, modestyachts/ARS, steps its envs): the
   * policy's actions go to the env unclipped, so the control cost is paid on them (MuJoCo clamps
   * the controls); true: clipped to the action space first.
   */
  Ars(String taskName, int directions, int top, double stepSize, double noise, double shift,
      long seed, int threads, boolean clipActions) {
    Task t = Task.find(taskName);
    this.task = t.name();
    this.envId = t.envId();
    if (directions < 1 || top < 1 || top > directions) {
      throw new IllegalArgumentException("--top should be in [1, --directions], got " + top
          + " with " + directions + " directions");
    }
    this.directions = directions;
    this.top = top;
    this.stepSize = stepSize;
    this.noise = noise;
    this.shift = shift;
    this.seed = seed;
    pool = Pool.builder(task).numEnvs(2 * directions).numThreads(threads)
        .dtype(Pool.Dtype.FLOAT64).build();
    obsDim = pool.obsDim();
    actDim = pool.actDim();
    low = pool.actionSpace().low();
    high = pool.actionSpace().high();
    if (!clipActions) {
      Arrays.fill(low, Double.NEGATIVE_INFINITY);
      Arrays.fill(high, Double.POSITIVE_INFINITY);
    }
    m = new double[actDim][obsDim];
    stat = new RunningStat(obsDim);
    mean = new double[obsDim];
    invStd = new double[obsDim];
    Arrays.fill(invStd, 1.0);
  }

  LinearPolicy policy() {
    double[][] w = new double[actDim][];
    for (int j = 0; j < actDim; ++j) w[j] = m[j].clone();
    return new LinearPolicy(w, mean.clone(), invStd.clone(), low, high);
  }

  /**
   * One episode in each world of the pool (world i seeded resetSeed + i),
   * world i acting with weights[i]; returns each world's return (minus the
   * shift per step) and, when `visit` is given, pushes every state seen.
   */
  double[] episodes(double[][][] weights, long resetSeed, double rewardShift, RunningStat visit) {
    int n = pool.numEnvs();
    LinearPolicy p = new LinearPolicy(m, mean, invStd, low, high);
    double[] obs = new double[n * obsDim];
    float[] actions = new float[n * actDim];
    double[] returns = new double[n];
    boolean[] done = new boolean[n];
    int alive = n;
    pool.reset(resetSeed);
    java.nio.DoubleBuffer view = pool.obs64();
    java.nio.DoubleBuffer reward = pool.reward64();
    while (alive > 0) {
      view.get(0, obs);
      for (int w = 0; w < n; ++w) {
        if (done[w]) {
          Arrays.fill(actions, w * actDim, (w + 1) * actDim, 0f);
          continue;
        }
        if (visit != null) visit.push(obs, w * obsDim);
        p.act(weights[w], obs, w * obsDim, actions, w * actDim);
      }
      pool.step(actions);
      for (int w = 0; w < n; ++w) {
        if (done[w]) continue;
        returns[w] += reward.get(w) - rewardShift;
        if (visit != null) ++trainSteps;
        if (pool.terminated(w) || pool.truncated(w)) {
          done[w] = true;
          --alive;
        }
      }
    }
    return returns;
  }

  /** One ARS iteration: 2N perturbed episodes, the top-b update, the statistics merged. */
  void iterate(Random random, int iteration) {
    double[][][] deltas = new double[directions][actDim][obsDim];
    double[][][] weights = new double[2 * directions][actDim][obsDim];
    for (int k = 0; k < directions; ++k) {
      for (int j = 0; j < actDim; ++j) {
        for (int i = 0; i < obsDim; ++i) {
          double d = random.nextGaussian();
          deltas[k][j][i] = d;
          weights[2 * k][j][i] = m[j][i] + noise * d;
          weights[2 * k + 1][j][i] = m[j][i] - noise * d;
        }
      }
    }
    RunningStat visited = new RunningStat(obsDim);
    double[] r = episodes(weights, seed * 1_000_003L + 2L * directions * iteration, shift, visited);
    trainEpisodes += 2L * directions;
    Integer[] order = new Integer[directions];
    for (int k = 0; k < directions; ++k) order[k] = k;
    Arrays.sort(order, (a, b) -> Double.compare(Math.max(r[2 * b], r[2 * b + 1]),
        Math.max(r[2 * a], r[2 * a + 1])));
    double sum = 0;
    double sumSq = 0;
    for (int t = 0; t < top; ++t) {
      int k = order[t];
      sum += r[2 * k] + r[2 * k + 1];
      sumSq += r[2 * k] * r[2 * k] + r[2 * k + 1] * r[2 * k + 1];
    }
    double meanR = sum / (2 * top);
    double sigma = Math.sqrt(Math.max(sumSq / (2 * top) - meanR * meanR, 0.0));
    if (sigma < 1e-8) sigma = 1.0;
    double scale = stepSize / (top * sigma);
    for (int t = 0; t < top; ++t) {
      int k = order[t];
      double diff = (r[2 * k] - r[2 * k + 1]) * scale;
      for (int j = 0; j < actDim; ++j) {
        for (int i = 0; i < obsDim; ++i) m[j][i] += diff * deltas[k][j][i];
      }
    }
    merge(visited);
  }

  /** Chan et al.'s parallel merge of this iteration's states into the running statistics. */
  void merge(RunningStat add) {
    if (add.n == 0) return;
    long n = stat.n + add.n;
    for (int k = 0; k < obsDim; ++k) {
      double d = add.mean[k] - stat.mean[k];
      stat.mean[k] += d * add.n / n;
      stat.m2[k] += add.m2[k] + d * d * ((double) stat.n * add.n / n);
    }
    stat.n = n;
    mean = stat.mean.clone();
    invStd = stat.invStd();
  }

  /** The returns of M (no noise, true reward) in every world of the pool, seeded evalSeed + i. */
  double[] evaluate(long evalSeed) {
    double[][][] weights = new double[pool.numEnvs()][][];
    Arrays.fill(weights, m);
    return episodes(weights, evalSeed, 0.0, null);
  }

  static double meanOf(double[] x) {
    double s = 0;
    for (double v : x) s += v;
    return s / x.length;
  }

  static double stdOf(double[] x) {
    double mu = meanOf(x);
    double s = 0;
    for (double v : x) s += (v - mu) * (v - mu);
    return Math.sqrt(s / x.length);
  }

  /** Returns of `policy` on `episodes` episodes seeded firstSeed + i (a pool of that many float64 worlds). */
  public static double[] evaluatePolicy(String task, LinearPolicy policy, int episodes,
      long firstSeed, int threads) {
    try (Pool p = Pool.builder(task).numEnvs(episodes).numThreads(threads)
        .dtype(Pool.Dtype.FLOAT64).build()) {
      int od = p.obsDim();
      int ad = p.actDim();
      double[] obs = new double[episodes * od];
      float[] actions = new float[episodes * ad];
      double[] returns = new double[episodes];
      boolean[] done = new boolean[episodes];
      int alive = episodes;
      p.reset(firstSeed);
      while (alive > 0) {
        p.obs64().get(0, obs);
        for (int w = 0; w < episodes; ++w) {
          if (done[w]) continue;
          policy.act(obs, w * od, actions, w * ad);
        }
        p.step(actions);
        for (int w = 0; w < episodes; ++w) {
          if (done[w]) continue;
          returns[w] += p.reward(w);
          if (p.terminated(w) || p.truncated(w)) {
            done[w] = true;
            --alive;
          }
        }
      }
      return returns;
    }
  }

  static final String USAGE = String.join("\n",
      "usage: joltgym.ars.Ars [--task half_cheetah] [--episodes N] [--directions N] [--top B]",
      "                       [--step-size A] [--noise NU] [--seed S] [--threads T] [--eval-every K]",
      "                       [--threshold R] [--final-episodes E] [--final-seed S] [--out DIR]",
      "                       [--clip-actions no|yes]",
      "Augmented Random Search (V2-t, Mania, Guy and Recht 2018) with linear policies on a",
      "batched pool. Defaults: the paper's V2-t hyperparameters for the task, its threshold and",
      "its episodes to reach it as the budget (half_cheetah: 3430 in 1707 episodes); --threads 2;",
      "--eval-every 1; --out runs/ars_<task>_<seed>; --clip-actions no (the actions go to the",
      "env unclipped, as the paper's code steps its envs; yes: clipped to the action space).",
      "Writes curve.csv (row by row) and policy.json (examples/evaluate.py replays it) into --out.");

  public static void main(String[] args) throws IOException {
    String task = "half_cheetah";
    Long episodes = null;
    Integer directions = null;
    Integer topB = null;
    Double step = null;
    Double nu = null;
    long seed = 0;
    int threads = 2;
    int evalEvery = 1;
    Double threshold = null;
    int finalEpisodes = 10;
    long finalSeed = 1000;
    String out = null;
    boolean clip = false;
    for (int i = 0; i < args.length; ++i) {
      String a = args[i];
      if (a.equals("--help") || a.equals("-h")) {
        System.out.println(USAGE);
        return;
      }
      if (i + 1 >= args.length) {
        System.err.println(USAGE + "\nerror: " + a + " needs a value");
        System.exit(2);
      }
      String v = args[++i];
      switch (a) {
        case "--task" -> task = v;
        case "--episodes" -> episodes = Long.parseLong(v);
        case "--directions" -> directions = Integer.parseInt(v);
        case "--top" -> topB = Integer.parseInt(v);
        case "--step-size" -> step = Double.parseDouble(v);
        case "--noise" -> nu = Double.parseDouble(v);
        case "--seed" -> seed = Long.parseLong(v);
        case "--threads" -> threads = Integer.parseInt(v);
        case "--eval-every" -> evalEvery = Integer.parseInt(v);
        case "--threshold" -> threshold = Double.parseDouble(v);
        case "--final-episodes" -> finalEpisodes = Integer.parseInt(v);
        case "--final-seed" -> finalSeed = Long.parseLong(v);
        case "--out" -> out = v;
        case "--clip-actions" -> {
          if (!v.equals("yes") && !v.equals("no")) {
            System.err.println(USAGE + "\nerror: --clip-actions should be yes or no, got " + v);
            System.exit(2);
          }
          clip = v.equals("yes");
        }
        default -> {
          System.err.println(USAGE + "\nerror: unknown option " + a);
          System.exit(2);
        }
      }
    }
    String name = Task.find(task).name();
    Defaults d = defaults(name);
    Ars ars = new Ars(name, directions != null ? directions : d.directions(),
        topB != null ? topB : d.top(), step != null ? step : d.stepSize(),
        nu != null ? nu : d.noise(), d.shift(), seed, threads, clip);
    long budget = episodes != null ? episodes : d.episodes();
    double target = threshold != null ? threshold : d.threshold();
    Path dir = Path.of(out != null ? out : "runs/ars_" + name + "_" + seed);
    Files.createDirectories(dir);
    System.out.printf(Locale.ROOT, "ARS V2-t on %s: %d directions, top %d, step %.4g, noise %.4g, "
        + "seed %d, %d threads, budget %d episodes, threshold %.0f%n", name, ars.directions, ars.top,
        ars.stepSize, ars.noise, seed, ars.pool.numThreads(), budget, target);
    Path curve = dir.resolve("curve.csv");
    // Written row by row: an interrupted run keeps its curve so far.
    Files.writeString(curve, "iteration,episodes,steps,eval_return_mean,eval_return_std,seconds\n",
        StandardCharsets.UTF_8);
    Random random = new Random(seed);
    long start = System.nanoTime();
    long reached = -1;
    int iteration = 0;
    while (ars.trainEpisodes + 2L * ars.directions <= budget) {
      ars.iterate(random, iteration);
      ++iteration;
      if (iteration % evalEvery == 0 || ars.trainEpisodes + 2L * ars.directions > budget) {
        double[] r = ars.evaluate(1_000_000_000L + iteration * 1000L);
        double mu = meanOf(r);
        double seconds = (System.nanoTime() - start) / 1e9;
        Files.writeString(curve, String.format(Locale.ROOT, "%d,%d,%d,%.3f,%.3f,%.2f%n", iteration,
            ars.trainEpisodes, ars.trainSteps, mu, stdOf(r), seconds), StandardCharsets.UTF_8,
            java.nio.file.StandardOpenOption.APPEND);
        System.out.printf(Locale.ROOT, "iteration %3d  episodes %6d  steps %9d  return %9.1f ± %7.1f"
            + "  %6.1f s%n", iteration, ars.trainEpisodes, ars.trainSteps, mu, stdOf(r), seconds);
        if (reached < 0 && mu >= target) {
          reached = ars.trainEpisodes;
          System.out.printf(Locale.ROOT, "threshold %.0f reached after %d episodes, %.1f s%n",
              target, reached, seconds);
        }
      }
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    LinearPolicy policy = ars.policy();
    policy.save(dir.resolve("policy.json"), name, ars.envId, String.format(Locale.ROOT,
        "ARS V2-t, seed %d, %d episodes, %d directions, top %d, actions %s", seed,
        ars.trainEpisodes, ars.directions, ars.top, clip ? "clipped" : "unclipped"));
    ars.pool.close();
    double[] finalReturns = evaluatePolicy(name, policy, finalEpisodes, finalSeed, threads);
    System.out.printf(Locale.ROOT, "trained in %.1f s; wrote %s and %s%n", seconds,
        dir.resolve("curve.csv"), dir.resolve("policy.json"));
    System.out.println(reached >= 0 ? "threshold reached: yes, after " + reached + " episodes"
        : "threshold reached: no");
    StringBuilder sb = new StringBuilder("final returns (seeds " + finalSeed + "+i):");
    for (double r : finalReturns) sb.append(' ').append(Double.toString(r));
    System.out.println(sb);
    System.out.printf(Locale.ROOT, "final mean return %.1f ± %.1f%n", meanOf(finalReturns),
        stdOf(finalReturns));
  }
}
