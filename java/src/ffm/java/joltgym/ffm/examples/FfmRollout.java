package joltgym.ffm.examples;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;

import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;
import joltgym.Pool;
import joltgym.ffm.FfmPool;

/**
 * The FFM binding's first program: a pool of worlds stepped through java.lang.foreign with
 * random actions in [-1, 1], the results read in place. Needs a Java >= 22 and
 * --enable-native-access=ALL-UNNAMED; no JNA.
 */
public final class FfmRollout {
  private FfmRollout() {}

  public static void main(String[] args) {
    if (args.length > 0 && (args[0].equals("--help") || args[0].equals("-h"))) {
      System.out.println("usage: FfmRollout [task] [num_envs] [steps]\n(defaults: half_cheetah 64 "
          + "200) Steps a pool through the FFM binding; prints the episodes and the rate.");
      return;
    }
    String task = args.length > 0 ? args[0] : "half_cheetah";
    int numEnvs = args.length > 1 ? Integer.parseInt(args[1]) : 64;
    int steps = args.length > 2 ? Integer.parseInt(args[2]) : 200;
    SplittableRandom random = new SplittableRandom(0);
    try (FfmPool pool = FfmPool.create(Pool.builder(task).numEnvs(numEnvs).numThreads(2))) {
      pool.reset(0);
      MemorySegment actions = pool.actions();
      long count = actions.byteSize() / 4;
      double rewards = 0;
      int episodes = 0;
      long start = System.nanoTime();
      for (int t = 0; t < steps; ++t) {
        for (long i = 0; i < count; ++i) {
          actions.setAtIndex(JAVA_FLOAT, i, (float) (2 * random.nextDouble() - 1));
        }
        pool.step();
        for (int e = 0; e < numEnvs; ++e) {
          int row = e * pool.numAgents();
          rewards += pool.reward(row);
          if (pool.terminated(row) || pool.truncated(row)) ++episodes;
        }
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      System.out.printf("%s: %d worlds x %d steps through FFM, %d episodes ended, mean reward "
          + "%.4f, %.0f env-steps/s (%s)%n", task, numEnvs, steps, episodes,
          rewards / ((double) numEnvs * steps), numEnvs * steps / seconds,
          Runtime.version());
    }
  }
}
