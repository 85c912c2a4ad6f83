// The Java library's batched step (joltgym.Pool, java/) driven as
// examples/java/Rollout.java drives the raw C API: the same task, worlds,
// threads and actions (float32 [16, num_envs, num_agents, act_dim], cycled),
// each step staged into the pool's action buffer, stepped, and the rewards
// and flags read in place. benchmarks/java_host.py runs it beside the raw
// example and the C++ limit.
//
//   java -cp joltgym.jar:jna.jar:classes -Djna.library.path=... LibraryHost \
//        task num_envs steps seed num_threads actions_file
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import joltgym.Pool;

public final class LibraryHost {
  public static void main(String[] args) throws Exception {
    if (args.length > 0 && (args[0].equals("--help") || args[0].equals("-h"))) {
      System.out.println("usage: LibraryHost task num_envs steps seed num_threads actions_file\n"
          + "Steps a joltgym.Pool with the file's actions, cycled; prints env-steps/s.");
      return;
    }
    String task = args[0];
    int numEnvs = Integer.parseInt(args[1]);
    int steps = Integer.parseInt(args[2]);
    long seed = Long.parseLong(args[3]);
    int threads = Integer.parseInt(args[4]);
    FloatBuffer given = ByteBuffer.wrap(java.nio.file.Files.readAllBytes(java.nio.file.Path.of(args[5])))
        .order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer();
    try (Pool pool = Pool.builder(task).numEnvs(numEnvs).numThreads(threads).build()) {
      FloatBuffer actions = pool.actions();
      FloatBuffer reward = pool.reward32();
      ByteBuffer terminated = pool.terminated();
      ByteBuffer truncated = pool.truncated();
      int count = actions.capacity();
      if (given.capacity() != 16 * count) {
        throw new IllegalStateException("the actions file should hold 16 x " + count + " floats");
      }
      int agents = pool.numAgents();
      pool.reset(seed);
      double total = 0;
      int episodes = 0;
      final int warmup = Math.min(50, steps / 10);
      long start = System.nanoTime();
      for (int t = 0; t < steps; ++t) {
        if (t == warmup) start = System.nanoTime();
        given.position((t % 16) * count).limit((t % 16) * count + count);
        actions.clear();
        actions.put(given);
        given.clear();
        pool.step();
        for (int e = 0; e < numEnvs; ++e) {
          if (pool.resetKind(e) == Pool.RESET) continue;
          total += reward.get(e * agents);
          if (terminated.get(e * agents) != 0 || truncated.get(e * agents) != 0) ++episodes;
        }
      }
      double elapsed = (System.nanoTime() - start) / 1e9;
      System.out.println("episodes: " + episodes + ", reward sum: " + total);
      System.out.printf("env-steps/s: %.0f%n", (double) (steps - warmup) * numEnvs / elapsed);
    }
  }
}
