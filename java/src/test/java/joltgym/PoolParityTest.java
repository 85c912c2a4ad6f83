package joltgym;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Bit-equality with Python's WorldPool: for every task and both layouts,
 * the same seed and actions give the same bytes in every buffer, at the
 * reset and at every step (episodes end and restart on the way).
 */
class PoolParityTest {
  @TestFactory
  List<DynamicTest> everyTaskAndBothLayoutsMatchPython() throws Exception {
    List<DynamicTest> tests = new ArrayList<>();
    for (String[] f : Reference.manifest("pool")) {
      // pool TASK DTYPE MODE NUM_ENVS LIMIT SEED STEPS FILE
      tests.add(DynamicTest.dynamicTest(f[1] + " " + f[2] + " " + f[3], () -> check(f)));
    }
    assertEquals(true, tests.size() > 0, "the manifest lists no pools");
    return tests;
  }

  private static byte[] take(ByteBuffer from, int n) {
    byte[] out = new byte[n];
    from.get(out);
    return out;
  }

  private static byte[] all(ByteBuffer b) {
    ByteBuffer d = b.duplicate();
    d.position(0);
    byte[] out = new byte[d.remaining()];
    d.get(out);
    return out;
  }

  private static byte[] realBytes(Pool pool, boolean obs) {
    int rows = pool.numEnvs() * pool.numAgents();
    int n = obs ? rows * pool.obsDim() : rows;
    ByteBuffer out = ByteBuffer.allocate(n * (pool.dtype() == Pool.Dtype.FLOAT64 ? 8 : 4))
        .order(java.nio.ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < n; ++i) {
      if (pool.dtype() == Pool.Dtype.FLOAT64) {
        out.putDouble(obs ? pool.obs64().get(i) : pool.reward64().get(i));
      } else {
        out.putFloat(obs ? pool.obs32().get(i) : pool.reward32().get(i));
      }
    }
    return out.array();
  }

  private static byte[] doubles(java.nio.DoubleBuffer b) {
    ByteBuffer out = ByteBuffer.allocate(b.capacity() * 8).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < b.capacity(); ++i) out.putDouble(b.get(i));
    return out.array();
  }

  private static byte[] ints(java.nio.IntBuffer b) {
    ByteBuffer out = ByteBuffer.allocate(b.capacity() * 4).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < b.capacity(); ++i) out.putInt(b.get(i));
    return out.array();
  }

  private static void compare(Pool pool, ByteBuffer ref, String where) {
    int rows = pool.numEnvs() * pool.numAgents();
    int real = pool.dtype() == Pool.Dtype.FLOAT64 ? 8 : 4;
    assertArrayEquals(take(ref, rows * pool.obsDim() * real), realBytes(pool, true), "obs at " + where);
    assertArrayEquals(take(ref, rows * real), realBytes(pool, false), "reward at " + where);
    assertArrayEquals(take(ref, rows), all(pool.terminated()), "terminated at " + where);
    assertArrayEquals(take(ref, rows), all(pool.truncated()), "truncated at " + where);
    assertArrayEquals(take(ref, rows * pool.infoLayout().width() * 8), doubles(pool.info()),
        "info at " + where);
    assertArrayEquals(take(ref, pool.numEnvs()), all(pool.resetKind()), "reset_kind at " + where);
    assertArrayEquals(take(ref, pool.numEnvs() * 4), ints(pool.elapsed()), "elapsed at " + where);
  }

  private static void check(String[] f) throws Exception {
    String task = f[1];
    Pool.Dtype dtype = f[2].equals("float64") ? Pool.Dtype.FLOAT64 : Pool.Dtype.FLOAT32;
    int numEnvs = Integer.parseInt(f[4]);
    int steps = Integer.parseInt(f[7]);
    ByteBuffer ref = Reference.bytes(f[8]);
    try (Pool pool = Pool.builder(task).numEnvs(numEnvs).numThreads(2).dtype(dtype)
        .autoresetMode(f[3]).maxEpisodeSteps(Integer.parseInt(f[5])).build()) {
      pool.reset(Long.parseLong(f[6]));
      compare(pool, ref, "reset");
      FloatBuffer actions = pool.actions();
      int count = actions.capacity();
      for (int t = 0; t < steps; ++t) {
        for (int i = 0; i < count; ++i) actions.put(i, ref.getFloat());
        pool.step();
        compare(pool, ref, "step " + t);
      }
      assertEquals(0, ref.remaining(), "the recording has more steps");
    }
  }
}
