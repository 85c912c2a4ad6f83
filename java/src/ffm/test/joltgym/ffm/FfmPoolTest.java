package joltgym.ffm;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.Buffer;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import joltgym.Box;
import joltgym.JoltgymException;
import joltgym.Pool;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.function.Executable;

/**
 * The FFM pool against the JNA library's {@link Pool} in the same JVM: the same seeds and
 * actions give the same bytes in every buffer (the JNA pool is itself bit-equal to Python's,
 * PoolParityTest); the C API's errors arrive as the same {@link JoltgymException}s.
 */
class FfmPoolTest {
  private static final int STEPS = 12;

  @TestFactory
  List<DynamicTest> bitEqualToTheJnaPool() {
    List<DynamicTest> tests = new ArrayList<>();
    String[][] cases = {{"half_cheetah", "next_step"}, {"hopper", "same_step"},
        {"sumo", "next_step"}, {"you_shall_not_pass", "same_step"}};
    for (String[] c : cases) {
      for (Pool.Dtype dtype : Pool.Dtype.values()) {
        tests.add(DynamicTest.dynamicTest(c[0] + " " + dtype + " " + c[1],
            () -> compareRollouts(c[0], dtype, c[1])));
      }
    }
    return tests;
  }

  private static void compareRollouts(String task, Pool.Dtype dtype, String mode) {
    int numEnvs = 3;
    int limit = 5;  // episodes end (truncated) and restart within the steps
    long seed = 21;
    Pool.Builder settings = Pool.builder(task).numEnvs(numEnvs).numThreads(2)
        .maxEpisodeSteps(limit).autoresetMode(mode).dtype(dtype);
    try (Pool jna = settings.build();
        FfmPool ffm = FfmPool.create(settings)) {
      assertEquals(jna.numAgents(), ffm.numAgents());
      assertEquals(jna.obsDim(), ffm.obsDim());
      assertEquals(jna.actDim(), ffm.actDim());
      jna.reset(seed);
      ffm.reset(seed);
      compare(jna, ffm, "reset");
      Box space = jna.actionSpace();
      SplittableRandom random = new SplittableRandom(seed);
      FloatBuffer actions = jna.actions();
      boolean ended = false;
      for (int t = 0; t < STEPS; ++t) {
        for (int i = 0; i < actions.capacity(); ++i) {
          int j = i % ffm.actDim();
          float a = (float) (space.low()[j] + random.nextDouble() * (space.high()[j] - space.low()[j]));
          actions.put(i, a);
          ffm.actions().setAtIndex(JAVA_FLOAT, i, a);
        }
        jna.step();
        ffm.step();
        compare(jna, ffm, "step " + t);
        for (int e = 0; e < numEnvs; ++e) {
          ended |= ffm.truncated(e * ffm.numAgents()) || ffm.terminated(e * ffm.numAgents());
        }
      }
      assertTrue(ended, "no episode ended: the steps did not cover a reset");
    }
  }

  private static byte[] bytes(Buffer jna) {
    return MemorySegment.ofBuffer(jna).toArray(JAVA_BYTE);
  }

  private static void compare(Pool jna, FfmPool ffm, String where) {
    boolean wide = jna.dtype() == Pool.Dtype.FLOAT64;
    assertArrayEquals(bytes(wide ? jna.obs64() : jna.obs32()), ffm.obs().toArray(JAVA_BYTE),
        "obs at " + where);
    assertArrayEquals(bytes(wide ? jna.reward64() : jna.reward32()),
        ffm.reward().toArray(JAVA_BYTE), "reward at " + where);
    assertArrayEquals(bytes(jna.terminated()), ffm.terminated().toArray(JAVA_BYTE),
        "terminated at " + where);
    assertArrayEquals(bytes(jna.truncated()), ffm.truncated().toArray(JAVA_BYTE),
        "truncated at " + where);
    assertArrayEquals(bytes(jna.info()), ffm.info().toArray(JAVA_BYTE), "info at " + where);
    assertArrayEquals(bytes(jna.finalObs()), ffm.finalObs().toArray(JAVA_BYTE),
        "final_obs at " + where);
    assertArrayEquals(bytes(jna.finalInfo()), ffm.finalInfo().toArray(JAVA_BYTE),
        "final_info at " + where);
    assertArrayEquals(bytes(jna.resetKind()), ffm.resetKind().toArray(JAVA_BYTE),
        "reset_kind at " + where);
    assertArrayEquals(bytes(jna.unstable()), ffm.unstable().toArray(JAVA_BYTE),
        "unstable at " + where);
    assertArrayEquals(bytes(jna.elapsed()), ffm.elapsed().toArray(JAVA_BYTE),
        "elapsed at " + where);
  }

  @Test
  void anotherSeedGivesOtherObservations() {
    try (FfmPool a = FfmPool.create(Pool.builder("half_cheetah").numEnvs(2));
        FfmPool b = FfmPool.create(Pool.builder("half_cheetah").numEnvs(2))) {
      a.reset(0);
      b.reset(1);
      assertNotEquals(-1L, a.obs().mismatch(b.obs()));
    }
  }

  /** The same mistake through both bindings: the same status and the same words. */
  private static void sameError(Executable jna, Executable ffm, int status) {
    JoltgymException expected = assertThrows(JoltgymException.class, jna);
    JoltgymException got = assertThrows(JoltgymException.class, ffm);
    assertEquals(status, got.status(), got.getMessage());
    assertEquals(expected.detail(), got.detail());
    assertTrue(!got.detail().isEmpty());
  }

  @Test
  void theCApisErrorsArriveAsExceptionsWithItsWords() {
    Pool.Builder typo = Pool.builder("half_cheetah").kwarg("forward_reward_weigth", 1.0);
    sameError(typo::build, () -> FfmPool.create(typo), JoltgymException.TYPE);
    sameError(() -> Pool.builder("hopper").numEnvs(0).build(),
        () -> FfmPool.create(Pool.builder("hopper").numEnvs(0)), JoltgymException.VALUE);
    sameError(() -> Pool.builder("hopper").dtype(null).build(),
        () -> FfmPool.create(Pool.builder("hopper").dtype(null)), JoltgymException.VALUE);
    JoltgymException batch = assertThrows(JoltgymException.class,
        () -> FfmPool.create(Pool.builder("hopper").numEnvs(4).batchSize(2)));
    assertEquals(JoltgymException.VALUE, batch.status());
    assertTrue(batch.detail().contains("batch_size should be 0"), batch.detail());
    assertTrue(batch.detail().contains("got 2"), batch.detail());
    JoltgymException task = assertThrows(JoltgymException.class,
        () -> FfmPool.create(Pool.builder("half_cheetahx")));
    assertEquals(JoltgymException.VALUE, task.status());
    assertTrue(task.detail().contains("half_cheetahx"), task.detail());
    try (Pool jna = Pool.builder("hopper").numEnvs(2).build();
        FfmPool ffm = FfmPool.create(Pool.builder("hopper").numEnvs(2))) {
      sameError(jna::step, ffm::step, JoltgymException.STATE);  // before a reset
      jna.reset(0);
      ffm.reset(0);
      jna.actions().put(1, Float.NaN);
      ffm.actions().setAtIndex(JAVA_FLOAT, 1, Float.NaN);
      sameError(jna::step, ffm::step, JoltgymException.VALUE);
      ffm.actions().setAtIndex(JAVA_FLOAT, 1, 0f);
      ffm.step();  // the refused step changed nothing: the pool goes on
    }
  }

  @Test
  void closeIsIdempotentAndTheMemoryIsGoneAfterIt() {
    FfmPool pool =
        FfmPool.create(Pool.builder("half_cheetah").numEnvs(2).dtype(Pool.Dtype.FLOAT64));
    pool.reset(0);
    MemorySegment obs = pool.obs();
    pool.close();
    pool.close();
    JoltgymException step = assertThrows(JoltgymException.class, pool::step);
    assertEquals(JoltgymException.STATE, step.status());
    assertEquals("FfmPool is closed", step.detail());
    // The arena is closed: a read is an exception, never freed memory.
    assertThrows(IllegalStateException.class, () -> obs.toArray(JAVA_BYTE));
  }
}
