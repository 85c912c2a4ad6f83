package joltgym;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.FloatBuffer;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** Errors as exceptions carrying the C API's (Python's) words; closing; use after close. */
class ErrorsTest {
  private static void assertPythonWords(String key, JoltgymException e) throws Exception {
    Properties python = Reference.properties("errors.properties");
    String words = python.getProperty(key);
    assertTrue(words != null, "no Python message recorded for " + key);
    assertTrue(e.detail().contains(words), "Java: " + e.detail() + "\nPython: " + words);
  }

  @Test
  void badInputGetsPythonsWords() throws Exception {
    JoltgymException task = assertThrows(JoltgymException.class, () -> Pool.builder("half_cheetahx").build());
    assertEquals(JoltgymException.VALUE, task.status());
    assertEquals("JG_ERR_VALUE", task.statusName());
    assertPythonWords("unknown_task", task);
    JoltgymException kwarg = assertThrows(JoltgymException.class,
        () -> Pool.builder("half_cheetah").kwarg("forward_reward_weigth", 1.0).build());
    assertEquals(JoltgymException.TYPE, kwarg.status());
    assertPythonWords("unknown_kwarg", kwarg);
    JoltgymException value = assertThrows(JoltgymException.class,
        () -> Pool.builder("half_cheetah").kwarg("reset_noise_scale", "big").build());
    assertPythonWords("bad_kwarg_value", value);
    JoltgymException envs = assertThrows(JoltgymException.class, () -> Pool.builder("hopper").numEnvs(0).build());
    assertPythonWords("zero_envs", envs);
    try (Pool pool = Pool.builder("hopper").numEnvs(2).build()) {
      JoltgymException early = assertThrows(JoltgymException.class, pool::step);
      assertPythonWords("step_before_reset", early);
      pool.reset(0);
      FloatBuffer a = pool.actions();
      a.put(1, Float.NaN);
      JoltgymException nan = assertThrows(JoltgymException.class, pool::step);
      assertEquals(JoltgymException.VALUE, nan.status());
      assertPythonWords("nan_action", nan);
      a.put(1, 0f);
      pool.step();  // the refused step changed nothing: the pool goes on
      assertThrows(JoltgymException.class, () -> pool.step(new float[5]));
      JoltgymException index = assertThrows(JoltgymException.class, () -> pool.resetOne(7, 1L));
      assertEquals(JoltgymException.INDEX, index.status());
    }
    JoltgymException type = assertThrows(JoltgymException.class,
        () -> Pool.builder("hopper").kwarg("xml_file", new Object()).build());
    assertEquals(JoltgymException.TYPE, type.status());
  }

  @Test
  void closeIsIdempotentAndUseAfterCloseThrowsNeverCrashes() {
    Pool pool = Pool.builder("half_cheetah").numEnvs(4).dtype(Pool.Dtype.FLOAT64).build();
    pool.reset(0);
    var obs = pool.obs64();
    double before = obs.get(3);
    pool.close();
    pool.close();
    assertTrue(pool.isClosed());
    for (Runnable call : new Runnable[] {pool::step, () -> pool.reset(1), pool::reset, pool::inFlight,
        () -> pool.resetOne(0, null), pool::recv, () -> pool.renderRgb(0, 8, 8, -1, null)}) {
      JoltgymException e = assertThrows(JoltgymException.class, call::run);
      assertEquals(JoltgymException.STATE, e.status());
      assertTrue(e.getMessage().contains("closed"), e.getMessage());
    }
    // The buffers handed out are Java's memory: still readable, frozen.
    assertEquals(before, obs.get(3));
    assertEquals(before, pool.obs(0, 3));
    Env env = Env.make("Hopper-v5");
    env.reset(0);
    env.close();
    env.close();
    assertThrows(JoltgymException.class, () -> env.step(new float[3]));
    assertThrows(JoltgymException.class, () -> env.reset(0));
  }

  @Test
  void manyPoolsOpenAndClose() {
    for (int i = 0; i < 50; ++i) {
      try (Pool pool = Pool.builder("swimmer").numEnvs(3).numThreads(2).build()) {
        pool.reset(i);
        pool.step();
      }
    }
  }

  @Test
  void keywordArgumentsOfEveryKind() {
    try (Pool pool = Pool.builder("ant").kwargs(Map.of("healthy_z_range", new double[] {0.2, Double.POSITIVE_INFINITY},
        "include_cfrc_ext_in_observation", false, "xml_file", "ant.xml", "contact_force_range", java.util.List.of(-1.0, 1.0))).build()) {
      pool.reset(0);
    }
  }
}
