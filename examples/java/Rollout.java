// Drives a pool of worlds from Java through the C API (libjoltgym_marl) with
// JNA: no Python, no copies. Observations, rewards and flags are read through
// direct ByteBuffers over the library's own buffers; the actions are written
// into native memory the pool copies from.
//
//   javac -cp /usr/share/java/jna.jar -d build/java examples/java/Rollout.java
//   java -cp /usr/share/java/jna.jar:build/java -Djna.library.path=build/capi \
//        Rollout [task] [num_envs] [steps] [seed] [num_threads] [actions_file]
//   (defaults: half_cheetah 64 1000 0 0; num_threads 0 = one per CPU)
//
// With actions_file (float32 [16, num_envs, num_agents, act_dim], as
// benchmarks/java_host.py writes it for raw_step_limit too) the actions are
// those, cycled over the steps, instead of the policy's.
//
// The policy is examples/c/rollout.c's fixed linear one, action[j] =
// clip(sum_k W[j][k] * obs[k], low[j], high[j]) with W[j][k] = ((j * obs_dim
// + k) % 7 - 3) / 10 summed in double in k order, so the returns printed are
// bit-identical to the C program's and to Python's (tests/test_capi.py).
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.Structure;
import com.sun.jna.ptr.LongByReference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;

public final class Rollout {
  /** The C API, bound by JNA's direct mapping (the fastest JNA calls). */
  static final class Jg {
    static {
      Native.register("joltgym_marl");
    }

    @Structure.FieldOrder({"num_threads", "max_episode_steps", "autoreset_mode", "batch_size",
        "dtype"})
    public static class Config extends Structure {
      public int num_threads;
      public int max_episode_steps;
      public String autoreset_mode;
      public int batch_size;  // 0: num_envs (only send/recv use it)
      public String dtype;  // null: "float32" (obs, reward); "float64": obs64, reward64
    }

    @Structure.FieldOrder({"num_envs", "num_agents", "obs_dim", "act_dim", "info_width",
        "num_info_fields", "num_threads", "max_episode_steps", "dt", "batch_size", "real_size"})
    public static class Dims extends Structure {
      public int num_envs, num_agents, obs_dim, act_dim, info_width, num_info_fields, num_threads,
          max_episode_steps;
      public double dt;
      public int batch_size;
      public int real_size;  // 4: the float32 layout, 8: the float64 one
    }

    @Structure.FieldOrder({"obs", "reward", "terminated", "truncated", "info", "final_obs",
        "final_info", "reset_kind", "unstable", "elapsed", "obs64", "reward64", "final_obs64"})
    public static class Buffers extends Structure {
      public Pointer obs, reward, terminated, truncated, info, final_obs, final_info, reset_kind,
          unstable, elapsed, obs64, reward64, final_obs64;
    }

    static native int jg_abi_version();
    static native String jg_last_error();
    static native String jg_status_name(int status);
    static native int jg_pool_create(String task, int numEnvs, Config config, Pointer keys,
        Pointer values, int numKwargs, LongByReference pool);
    static native int jg_pool_dims(long pool, Dims dims);
    static native int jg_pool_buffers(long pool, Buffers buffers);
    static native int jg_pool_action_bounds(long pool, float[] low, float[] high, long count);
    static native int jg_pool_reset(long pool, int hasSeed, long seed);
    static native int jg_pool_step(long pool, Pointer actions, long count);
    static native int jg_pool_close(long pool);
  }

  static final int JG_ABI_VERSION = 4;
  static final int JG_RESET = 1;

  static void check(int status, String call) {
    if (status != 0) {
      throw new IllegalStateException(
          call + " failed: " + Jg.jg_status_name(status) + ": " + Jg.jg_last_error());
    }
  }

  static ByteBuffer view(Pointer p, long bytes) {
    return p.getByteBuffer(0, bytes).order(ByteOrder.nativeOrder());
  }

  public static void main(String[] args) {
    if (args.length > 0 && (args[0].equals("--help") || args[0].equals("-h"))) {
      System.out.println("usage: Rollout [task] [num_envs] [steps] [seed] [num_threads] [actions_file]\n"
          + "Steps num_envs worlds of task with a fixed linear policy; prints env-steps/s\n"
          + "and each finished episode's return (defaults: half_cheetah 64 1000 0 0).");
      return;
    }
    String task = args.length > 0 ? args[0] : "half_cheetah";
    int numEnvs = args.length > 1 ? Integer.parseInt(args[1]) : 64;
    int steps = args.length > 2 ? Integer.parseInt(args[2]) : 1000;
    long seed = args.length > 3 ? Long.parseUnsignedLong(args[3]) : 0L;
    int numThreads = args.length > 4 ? Integer.parseInt(args[4]) : 0;
    FloatBuffer given = null;
    if (args.length > 5) {
      try {
        given = ByteBuffer.wrap(java.nio.file.Files.readAllBytes(java.nio.file.Path.of(args[5])))
            .order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer();
      } catch (java.io.IOException e) {
        throw new IllegalStateException("cannot read " + args[5] + ": " + e);
      }
    }

    if (Jg.jg_abi_version() != JG_ABI_VERSION) {
      throw new IllegalStateException("libjoltgym_marl has ABI " + Jg.jg_abi_version()
          + ", this program was written for " + JG_ABI_VERSION);
    }
    Jg.Config config = new Jg.Config();
    config.num_threads = numThreads;
    config.max_episode_steps = 1000;
    config.autoreset_mode = "next_step";
    LongByReference handle = new LongByReference();
    check(Jg.jg_pool_create(task, numEnvs, config, null, null, 0, handle), "jg_pool_create");
    long pool = handle.getValue();
    Jg.Dims d = new Jg.Dims();
    check(Jg.jg_pool_dims(pool, d), "jg_pool_dims");
    Jg.Buffers b = new Jg.Buffers();
    check(Jg.jg_pool_buffers(pool, b), "jg_pool_buffers");
    float[] low = new float[d.act_dim];
    float[] high = new float[d.act_dim];
    check(Jg.jg_pool_action_bounds(pool, low, high, d.act_dim), "jg_pool_action_bounds");

    // Direct buffers over the pool's memory: the same addresses for the
    // pool's life, refreshed by every step.
    int rows = d.num_envs * d.num_agents;
    FloatBuffer obs = view(b.obs, 4L * rows * d.obs_dim).asFloatBuffer();
    FloatBuffer reward = view(b.reward, 4L * rows).asFloatBuffer();
    ByteBuffer terminated = view(b.terminated, rows);
    ByteBuffer truncated = view(b.truncated, rows);
    ByteBuffer resetKind = view(b.reset_kind, d.num_envs);
    long actCount = (long) rows * d.act_dim;
    Memory actionMemory = new Memory(4L * actCount);
    FloatBuffer actions = actionMemory.getByteBuffer(0, 4L * actCount)
        .order(ByteOrder.nativeOrder()).asFloatBuffer();
    double[][] w = new double[d.act_dim][d.obs_dim];
    for (int j = 0; j < d.act_dim; ++j) {
      for (int k = 0; k < d.obs_dim; ++k) w[j][k] = ((j * d.obs_dim + k) % 7 - 3) / 10.0;
    }
    System.out.printf("task %s, %d worlds, %d agents, %d steps, seed %s, %d threads%n", task,
        d.num_envs, d.num_agents, steps, Long.toUnsignedString(seed), d.num_threads);

    check(Jg.jg_pool_reset(pool, 1, seed), "jg_pool_reset");
    double[] returns = new double[d.num_envs];
    StringBuilder episodesOut = new StringBuilder();
    int episodes = 0;
    // The clock starts after a short warm-up (the JIT compiles this loop and
    // JNA links its calls during the first steps), so the rate is the steady one.
    final int warmup = Math.min(50, steps / 10);
    long start = System.nanoTime();
    if (given != null && given.capacity() != 16 * (int) actCount) {
      throw new IllegalStateException("the actions file should hold 16 x " + actCount + " floats");
    }
    for (int t = 0; t < steps; ++t) {
      if (t == warmup) start = System.nanoTime();
      if (given != null) {
        int offset = (t % 16) * (int) actCount;
        for (int i = 0; i < actCount; ++i) actions.put(i, given.get(offset + i));
      }
      for (int i = 0; given == null && i < rows; ++i) {
        int base = i * d.obs_dim;
        for (int j = 0; j < d.act_dim; ++j) {
          double acc = 0.0;
          double[] wj = w[j];
          for (int k = 0; k < d.obs_dim; ++k) acc += wj[k] * (double) obs.get(base + k);
          if (acc < low[j]) acc = low[j];
          if (acc > high[j]) acc = high[j];
          actions.put(i * d.act_dim + j, (float) acc);
        }
      }
      check(Jg.jg_pool_step(pool, actionMemory, actCount), "jg_pool_step");
      for (int e = 0; e < d.num_envs; ++e) {
        if (resetKind.get(e) == JG_RESET) continue;  // next_step auto-reset: no reward
        int agent0 = e * d.num_agents;
        returns[e] += (double) reward.get(agent0);
        if (terminated.get(agent0) != 0 || truncated.get(agent0) != 0) {
          episodesOut.append(String.format("episode world=%d step=%d return=%s bits=%016x%n", e,
              t + 1, Double.toString(returns[e]), Double.doubleToRawLongBits(returns[e])));
          returns[e] = 0.0;
          ++episodes;
        }
      }
    }
    double elapsed = (System.nanoTime() - start) / 1e9;
    System.out.print(episodesOut);
    System.out.println("episodes: " + episodes);
    System.out.printf("env-steps/s: %.0f%n", (double) (steps - warmup) * d.num_envs / elapsed);
    check(Jg.jg_pool_close(pool), "jg_pool_close");
  }
}
