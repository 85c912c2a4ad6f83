package joltgym;

import java.awt.image.BufferedImage;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * One single-agent world as a Gymnasium {@code Env}: {@code
 * gymnasium.make("HalfCheetah-v5", **kwargs)} is {@code Env.make("HalfCheetah-v5",
 * kwargs)}, with the same physics, float64 observations and rewards, reward
 * terms (info keys), termination and truncation, bit for bit.
 *
 * <p>Besides the task's keyword arguments, {@code make} takes Gymnasium's
 * {@code max_episode_steps} and the rendering ones, {@code width}, {@code
 * height} (default 480), {@code camera_id} and {@code camera_name} (for
 * {@link #render()}; {@code render_mode} is accepted and ignored: frames are
 * always available). One thread at a time; after {@link #close()} every call
 * throws.
 */
public final class Env implements AutoCloseable {
  /** What {@link #reset} returns. */
  public record Reset(double[] observation, Map<String, Object> info) {}

  /** What {@link #step} returns. */
  public record Step(double[] observation, double reward, boolean terminated, boolean truncated,
      Map<String, Object> info) {}

  private static final Set<String> ENV_KWARGS =
      Set.of("max_episode_steps", "render_mode", "width", "height", "camera_id", "camera_name");

  private final Pool pool;
  private final Task task;
  private final float[] action;
  private final int width;
  private final int height;
  private final int cameraId;
  private final String cameraName;
  private boolean started;
  private boolean ended;

  private Env(Task task, Map<String, ?> kwargs) {
    if (task.isGame()) {
      throw new JoltgymException(JoltgymException.VALUE, task.name()
          + " is a game (several agents): use ParallelEnv.make(\"" + task.envId() + "\")");
    }
    Map<String, Object> taskKwargs = new LinkedHashMap<>();
    Integer maxSteps = null;
    int w = 480;
    int h = 480;
    int cam = -1;
    String camName = null;
    for (Map.Entry<String, ?> e : kwargs.entrySet()) {
      String k = e.getKey();
      Object v = e.getValue();
      if (!ENV_KWARGS.contains(k)) {
        taskKwargs.put(k, v);
      } else if (k.equals("max_episode_steps")) {
        maxSteps = v == null ? null : integer(k, v);
      } else if (k.equals("width")) {
        w = integer(k, v);
      } else if (k.equals("height")) {
        h = integer(k, v);
      } else if (k.equals("camera_id")) {
        cam = v == null ? -1 : integer(k, v);
      } else if (k.equals("camera_name")) {
        camName = v == null ? null : v.toString();
      }
    }
    this.task = task;
    this.width = w;
    this.height = h;
    this.cameraId = cam;
    this.cameraName = camName;
    Pool.Builder b = Pool.builder(task.name()).numEnvs(1).numThreads(1)
        .dtype(Pool.Dtype.FLOAT64).kwargs(taskKwargs);
    if (maxSteps != null) b.maxEpisodeSteps(maxSteps);
    pool = b.build();
    action = new float[pool.actDim()];
  }

  private static int integer(String key, Object v) {
    if (v instanceof Integer || v instanceof Long || v instanceof Short) {
      return ((Number) v).intValue();
    }
    throw new JoltgymException(JoltgymException.TYPE,
        key + " should be an int, got " + (v == null ? "null" : v.getClass().getSimpleName()));
  }

  /** The env of a task name or Gymnasium id ("HalfCheetah-v5", "joltgym_marl/Ant-v0", "hopper"). */
  public static Env make(String id) {
    return new Env(Task.find(id), Map.of());
  }

  /** The same with keyword arguments (the task's, plus max_episode_steps and the rendering ones). */
  public static Env make(String id, Map<String, ?> kwargs) {
    return new Env(Task.find(id), kwargs);
  }

  public Task task() {
    return task;
  }

  public Box observationSpace() {
    return pool.observationSpace();
  }

  public Box actionSpace() {
    return pool.actionSpace();
  }

  public int maxEpisodeSteps() {
    return pool.maxEpisodeSteps();
  }

  /** Simulated seconds per step. */
  public double dt() {
    return pool.dt();
  }

  /** The underlying one-world pool (its buffers hold the last results). */
  public Pool pool() {
    return pool;
  }

  /** Starts an episode seeded `seed` (Gymnasium's reset(seed=seed)). */
  public Reset reset(long seed) {
    pool.reset(seed);
    return afterReset();
  }

  /** Starts an episode continuing the random stream (reset() without a seed). */
  public Reset reset() {
    pool.reset();
    return afterReset();
  }

  private Reset afterReset() {
    started = true;
    ended = false;
    return new Reset(observation(), pool.info(0));
  }

  private double[] observation() {
    double[] out = new double[pool.obsDim()];
    pool.obs(0, out);
    return out;
  }

  /** One step (actDim float32 values). */
  public Step step(float[] a) {
    if (pool.isClosed()) {
      throw new JoltgymException(JoltgymException.STATE, "Env is closed");
    }
    if (!started) {
      throw new JoltgymException(JoltgymException.STATE, "Cannot call env.step() before calling env.reset()");
    }
    if (ended) {
      throw new JoltgymException(JoltgymException.STATE,
          "the episode has ended (terminated or truncated): call reset() before step()");
    }
    if (a == null || a.length != action.length) {
      throw new JoltgymException(JoltgymException.VALUE, "action should hold " + action.length
          + " values, got " + (a == null ? "null" : a.length));
    }
    pool.step(a);
    boolean terminated = pool.terminated(0);
    boolean truncated = pool.truncated(0);
    ended = terminated || truncated;
    return new Step(observation(), pool.reward(0), terminated, truncated, pool.info(0));
  }

  /** One step of a double action (rounded to float32, as Gymnasium's float32 action space). */
  public Step step(double[] a) {
    if (a == null) return step((float[]) null);
    float[] f = new float[a.length];
    for (int i = 0; i < a.length; ++i) f[i] = (float) a[i];
    return step(f);
  }

  /**
   * An RGB frame of the world (width x height from make's kwargs, 480 x 480
   * by default), equal pixel for pixel to Python's {@code render()} with
   * {@code render_mode="rgb_array"}.
   */
  public BufferedImage render() {
    return Pool.toImage(renderRgb(), width, height);
  }

  /** {@link #render()} as height rows of width * 3 RGB bytes, top row first. */
  public byte[] renderRgb() {
    return pool.renderRgb(0, width, height, cameraId, cameraName);
  }

  /** Frees the world; idempotent. */
  @Override
  public void close() {
    pool.close();
  }
}
