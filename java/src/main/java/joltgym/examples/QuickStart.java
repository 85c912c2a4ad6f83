package joltgym.examples;

import java.util.Map;
import joltgym.Env;
import joltgym.ParallelEnv;
import joltgym.Pool;

/**
 * The Java guide's first program: a Gymnasium-style episode, a batched pool
 * read in place, and a game's bout.
 */
public final class QuickStart {
  private QuickStart() {}

  public static void main(String[] args) {
    if (args.length > 0 && (args[0].equals("--help") || args[0].equals("-h"))) {
      System.out.println("usage: QuickStart\nOne HalfCheetah-v5 episode, 16 pooled Hopper worlds, "
          + "one sumo_v0 bout with random actions.");
      return;
    }
    // gymnasium.make("HalfCheetah-v5", ctrl_cost_weight=0.1)
    try (Env env = Env.make("HalfCheetah-v5", Map.of("ctrl_cost_weight", 0.1))) {
      Env.Reset reset = env.reset(42);
      System.out.println("obs " + reset.observation().length + " values, info " + reset.info().keySet());
      double ret = 0;
      for (boolean done = false; !done; ) {
        Env.Step s = env.step(env.actionSpace().sampleFloats());
        ret += s.reward();
        done = s.terminated() || s.truncated();
      }
      System.out.printf("episode return %.2f%n", ret);
    }
    // 16 worlds stepped in one call; results read in place.
    try (Pool pool = Pool.builder("Hopper-v5").numEnvs(16).numThreads(2).dtype(Pool.Dtype.FLOAT64).build()) {
      pool.reset(0);
      java.nio.FloatBuffer actions = pool.actions();
      for (int t = 0; t < 100; ++t) {
        for (int i = 0; i < actions.capacity(); ++i) actions.put(i, 0.1f);
        pool.step();
      }
      System.out.printf("world 0 after 100 steps: reward %.3f, x_velocity %.3f%n", pool.reward(0),
          (Double) pool.info(0).get("x_velocity"));
    }
    // A game: two ants in a ring.
    try (ParallelEnv game = ParallelEnv.make("sumo_v0", Map.of("max_cycles", 200))) {
      game.reset(7);
      ParallelEnv.Arrays last = null;
      while (!game.agents().isEmpty()) {
        float[][] a = new float[game.numAgents()][];
        for (int k = 0; k < a.length; ++k) a[k] = game.actionSpace(game.possibleAgents().get(k)).sampleFloats();
        last = game.stepArrays(a);
      }
      System.out.println("agents " + game.possibleAgents() + ", outcomes " + java.util.Arrays.toString(last.outcomes())
          + " (0 ongoing, 1 win, 2 loss, 3 draw)");
    }
  }
}
