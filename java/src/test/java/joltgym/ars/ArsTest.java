package joltgym.ars;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** ARS in a short form: it learns, and a run is a function of its seed. */
class ArsTest {
  private static double[][] train(long seed, int iterations) {
    Ars ars = new Ars("half_cheetah", 8, 4, 0.02, 0.03, 0.0, seed, 2, false);
    try {
      Random random = new Random(seed);
      for (int i = 0; i < iterations; ++i) ars.iterate(random, i);
      assertEquals(iterations * 16L, ars.trainEpisodes);
      return ars.policy().weights;
    } finally {
      ars.pool.close();
    }
  }

  @Test
  void shortRunsAreDeterministicAndMoveThePolicy() {
    // Short episodes keep this quick: the pool's truncation is the task's 1000
    // steps, so use few iterations.
    double[][] a = train(1, 2);
    double[][] b = train(1, 2);
    for (int j = 0; j < a.length; ++j) assertArrayEquals(a[j], b[j]);
    double[][] c = train(2, 2);
    assertNotEquals(a[0][0], c[0][0]);
    double norm = 0;
    for (double[] row : a) for (double v : row) norm += v * v;
    assertTrue(norm > 0, "the policy moved");
  }

  @Test
  void runningStatisticsMergeLikeOnePass() {
    Ars ars = new Ars("swimmer", 1, 1, 0.02, 0.01, 0.0, 0, 1, false);
    try {
      int d = ars.obsDim;
      Random random = new Random(5);
      double[] xs = new double[7 * d];
      for (int i = 0; i < xs.length; ++i) xs[i] = random.nextGaussian() * (1 + i % d);
      Ars.RunningStat all = new Ars.RunningStat(d);
      Ars.RunningStat first = new Ars.RunningStat(d);
      Ars.RunningStat second = new Ars.RunningStat(d);
      for (int r = 0; r < 7; ++r) {
        all.push(xs, r * d);
        (r < 3 ? first : second).push(xs, r * d);
      }
      ars.merge(first);
      ars.merge(second);
      assertEquals(all.n, ars.stat.n);
      for (int k = 0; k < d; ++k) {
        assertEquals(all.mean[k], ars.mean[k], 1e-12);
        assertEquals(all.m2[k], ars.stat.m2[k], 1e-9);
        assertEquals(1.0 / Math.sqrt(all.m2[k] / (all.n - 1)), ars.invStd[k], 1e-9);
      }
    } finally {
      ars.pool.close();
    }
  }
}
