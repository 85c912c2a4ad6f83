package joltgym;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/** Frames equal pixel for pixel to Python's render() with render_mode="rgb_array". */
class FrameTest {
  @TestFactory
  List<DynamicTest> framesArePythonsPixelForPixel() throws Exception {
    List<DynamicTest> tests = new ArrayList<>();
    for (String[] f : Reference.manifest("frame")) {
      // frame ID SEED WIDTH HEIGHT CAMERA_ID STEPS FILE
      tests.add(DynamicTest.dynamicTest(f[1] + " camera " + f[5], () -> {
        ByteBuffer ref = Reference.bytes(f[7]);
        int w = Integer.parseInt(f[3]);
        int h = Integer.parseInt(f[4]);
        try (Env env = Env.make(f[1], Map.of("width", w, "height", h,
            "camera_id", Integer.parseInt(f[5])))) {
          env.reset(Long.parseLong(f[2]));
          assertArrayEquals(take(ref, w * h * 3), env.renderRgb(), "the frame after reset");
          int steps = Integer.parseInt(f[6]);
          int ad = env.actionSpace().size();
          for (int t = 0; t < steps; ++t) {
            float[] a = new float[ad];
            for (int j = 0; j < ad; ++j) a[j] = ref.getFloat();
            env.step(a);
          }
          assertArrayEquals(take(ref, w * h * 3), env.renderRgb(), "the frame after " + steps + " steps");
          assertEquals(0, ref.remaining());
        }
      }));
    }
    assertTrue(tests.size() > 0);
    return tests;
  }

  private static byte[] take(ByteBuffer b, int n) {
    byte[] out = new byte[n];
    b.get(out);
    return out;
  }

  @Test
  void badSizesAndCamerasAreClearErrors() {
    try (Env env = Env.make("Hopper-v5", Map.of("width", 0, "height", 10))) {
      env.reset(0);
      JoltgymException e = assertThrows(JoltgymException.class, env::renderRgb);
      assertEquals(JoltgymException.VALUE, e.status());
      assertTrue(e.detail().contains("[1, 16384]"), e.detail());
    }
    try (Env env = Env.make("Hopper-v5", Map.of("width", 8, "height", 8, "camera_name", "nope"))) {
      env.reset(0);
      JoltgymException e = assertThrows(JoltgymException.class, env::renderRgb);
      assertTrue(e.detail().contains("camera_name should be one of"), e.detail());
    }
    try (Pool game = Pool.builder("sumo_v0").build()) {
      game.reset(0);
      JoltgymException e = assertThrows(JoltgymException.class, () -> game.renderRgb(0, 8, 8, -1, null));
      assertTrue(e.detail().contains("is a game"), e.detail());
    }
  }
}
