package joltgym;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/** The Gymnasium-shaped Env against Gymnasium's own env, and its contract. */
class EnvTest {
  @TestFactory
  List<DynamicTest> episodesAreGymnasiumsBitForBit() throws Exception {
    List<DynamicTest> tests = new ArrayList<>();
    for (String[] f : Reference.manifest("env")) {
      // env GYMNASIUM_ID SEED STEPS FILE
      tests.add(DynamicTest.dynamicTest(f[1], () -> {
        ByteBuffer ref = Reference.bytes(f[4]);
        try (Env env = Env.make(f[1])) {
          int od = env.observationSpace().size();
          int ad = env.actionSpace().size();
          Env.Reset r = env.reset(Long.parseLong(f[2]));
          assertArrayEquals(doubles(ref, od), r.observation(), "reset obs");
          int steps = Integer.parseInt(f[3]);
          for (int t = 0; t < steps; ++t) {
            float[] a = new float[ad];
            for (int j = 0; j < ad; ++j) a[j] = ref.getFloat();
            Env.Step s = env.step(a);
            assertArrayEquals(doubles(ref, od), s.observation(), "obs at step " + t);
            assertEquals(Double.doubleToRawLongBits(ref.getDouble()),
                Double.doubleToRawLongBits(s.reward()), "reward at step " + t);
            assertEquals(ref.get() != 0, s.terminated(), "terminated at step " + t);
            assertEquals(ref.get() != 0, s.truncated(), "truncated at step " + t);
          }
        }
      }));
    }
    assertTrue(tests.size() > 0);
    return tests;
  }

  private static double[] doubles(ByteBuffer b, int n) {
    double[] out = new double[n];
    for (int i = 0; i < n; ++i) out[i] = b.getDouble();
    return out;
  }

  @Test
  void spacesAndNamesAreGymnasiums() {
    try (Env env = Env.make("HalfCheetah-v5")) {
      assertEquals("half_cheetah", env.task().name());
      assertEquals("HalfCheetah-v5", env.task().referenceId());
      assertArrayEquals(new int[] {17}, env.observationSpace().shape());
      assertEquals("float64", env.observationSpace().dtype());
      assertArrayEquals(new int[] {6}, env.actionSpace().shape());
      assertEquals("float32", env.actionSpace().dtype());
      for (double l : env.actionSpace().low()) assertEquals(-1.0, l);
      for (double h : env.actionSpace().high()) assertEquals(1.0, h);
      assertEquals(1000, env.maxEpisodeSteps());
      assertEquals(0.05, env.dt(), 1e-12);
      env.actionSpace().seed(3);
      float[] a = env.actionSpace().sampleFloats();
      assertTrue(env.actionSpace().contains(a));
      Env.Reset r = env.reset(1);
      assertTrue(r.info().containsKey("x_position"), r.info().toString());
      Env.Step s = env.step(a);
      assertTrue(s.info().containsKey("reward_forward") && s.info().containsKey("reward_ctrl"),
          s.info().toString());
    }
    // Every spelling of a task: registry name, title, our id, the id it reproduces.
    for (String id : List.of("hopper", "Hopper", "joltgym_marl/Hopper-v0", "Hopper-v5")) {
      try (Env env = Env.make(id)) {
        assertEquals("hopper", env.task().name());
      }
    }
  }

  @Test
  void keywordArgumentsReachTheTask() {
    try (Env plain = Env.make("HalfCheetah-v5");
        Env doubled = Env.make("HalfCheetah-v5", Map.of("forward_reward_weight", 2.0,
            "max_episode_steps", 5))) {
      plain.reset(0);
      doubled.reset(0);
      float[] a = new float[6];
      Env.Step p = plain.step(a);
      Env.Step d = doubled.step(a);
      assertEquals(2.0 * (Double) p.info().get("reward_forward"),
          (Double) d.info().get("reward_forward"), 1e-12);
      assertEquals(5, doubled.maxEpisodeSteps());
      for (int t = 1; t < 4; ++t) assertFalse(doubled.step(a).truncated());
      assertTrue(doubled.step(a).truncated());
      JoltgymException e = assertThrows(JoltgymException.class, () -> doubled.step(a));
      assertEquals(JoltgymException.STATE, e.status());
      doubled.reset();
      assertFalse(doubled.step(a).truncated());
    }
  }

  @Test
  void gamesAreRefusedWithTheWayToThem() {
    JoltgymException e = assertThrows(JoltgymException.class, () -> Env.make("sumo_v0"));
    assertTrue(e.getMessage().contains("ParallelEnv.make"), e.getMessage());
  }

  @Test
  void renderingGivesAnImageOfTheSize() {
    try (Env env = Env.make("Hopper-v5", Map.of("width", 64, "height", 48))) {
      env.reset(0);
      var image = env.render();
      assertNotNull(image);
      assertEquals(64, image.getWidth());
      assertEquals(48, image.getHeight());
    }
  }
}
