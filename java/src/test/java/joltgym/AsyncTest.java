package joltgym;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.FloatBuffer;
import org.junit.jupiter.api.Test;

/** send/recv: each world's results bit-identical to step()'s for the same actions. */
class AsyncTest {
  @Test
  void sendRecvMatchesStepWorldByWorld() {
    int n = 6;
    int steps = 25;
    for (Pool.Dtype dtype : Pool.Dtype.values()) {
      try (Pool sync = Pool.builder("hopper").numEnvs(n).numThreads(2).dtype(dtype).maxEpisodeSteps(10).build();
          Pool async = Pool.builder("hopper").numEnvs(n).numThreads(2).dtype(dtype).maxEpisodeSteps(10)
              .batchSize(2).build()) {
        int ad = sync.actDim();
        int od = sync.obsDim();
        // Expected: step() with action(world, t) for every world.
        double[][][] expected = new double[steps + 1][n][od];
        double[][] rewards = new double[steps + 1][n];
        sync.reset(3);
        for (int w = 0; w < n; ++w) for (int k = 0; k < od; ++k) expected[0][w][k] = sync.obs(w, k);
        FloatBuffer a = sync.actions();
        for (int t = 0; t < steps; ++t) {
          for (int w = 0; w < n; ++w) for (int j = 0; j < ad; ++j) a.put(w * ad + j, action(w, t, j));
          sync.step();
          for (int w = 0; w < n; ++w) {
            for (int k = 0; k < od; ++k) expected[t + 1][w][k] = sync.obs(w, k);
            rewards[t + 1][w] = sync.reward(w);
          }
        }
        int[] count = new int[n];  // results received per world (the reset's first)
        async.asyncReset(3);
        FloatBuffer send = async.sendActions();
        int[] ids = new int[2];
        int received = 0;
        while (received < n * (steps + 1)) {
          Pool.Batch b = async.recv();
          int out = 0;
          for (int k = 0; k < b.size(); ++k) {
            int w = b.envId(k);
            int t = count[w]++;
            ++received;
            for (int i = 0; i < od; ++i) {
              assertEquals(Double.doubleToRawLongBits(expected[t][w][i]),
                  Double.doubleToRawLongBits(b.obs(k, i)), "world " + w + " obs at " + t);
            }
            if (t > 0) {
              assertEquals(Double.doubleToRawLongBits(rewards[t][w]), Double.doubleToRawLongBits(b.reward(k)));
            }
            if (t < steps) {
              for (int j = 0; j < ad; ++j) send.put(out * ad + j, action(w, t, j));
              ids[out++] = w;
            }
          }
          if (out > 0) async.send(ids, out);
          if (async.inFlight() < 2 && received < n * (steps + 1)) break;
        }
        for (int w = 0; w < n; ++w) assertEquals(true, count[w] >= 1);
        JoltgymException e = assertThrows(JoltgymException.class, () -> async.send(new int[] {0, 0}, 2));
        assertTrue(e.status() == JoltgymException.VALUE || e.status() == JoltgymException.STATE, e.getMessage());
      }
    }
  }

  private static float action(int w, int t, int j) {
    return (float) Math.sin(0.37 * w + 0.11 * t + 1.3 * j);
  }
}
