package joltgym.examples;

import java.awt.image.BufferedImage;
import java.io.File;
import java.io.IOException;
import java.util.Map;
import javax.imageio.ImageIO;
import joltgym.Env;

/**
 * Renders a few frames of a robot stepped with random actions and writes
 * them as PNGs: frames without Python (MuJoCo's renderer, headless EGL).
 *
 * <pre>
 *   java -cp joltgym.jar:jna.jar -Djna.library.path=... joltgym.examples.RenderFrames \
 *       [env_id] [frames] [every] [out_dir] [width] [height]
 *   (defaults: HalfCheetah-v5 4 10 runs/frames 480 480)
 * </pre>
 */
public final class RenderFrames {
  private RenderFrames() {}

  public static void main(String[] args) throws IOException {
    if (args.length > 0 && (args[0].equals("--help") || args[0].equals("-h"))) {
      System.out.println("usage: RenderFrames [env_id] [frames] [every] [out_dir] [width] [height]\n"
          + "Steps the env with seeded random actions and writes every `every`-th frame as\n"
          + "out_dir/frame_NNN.png (defaults: HalfCheetah-v5 4 10 runs/frames 480 480).");
      return;
    }
    String id = args.length > 0 ? args[0] : "HalfCheetah-v5";
    int frames = args.length > 1 ? Integer.parseInt(args[1]) : 4;
    int every = args.length > 2 ? Integer.parseInt(args[2]) : 10;
    File dir = new File(args.length > 3 ? args[3] : "runs/frames");
    int width = args.length > 4 ? Integer.parseInt(args[4]) : 480;
    int height = args.length > 5 ? Integer.parseInt(args[5]) : 480;
    if (!dir.isDirectory() && !dir.mkdirs()) throw new IOException("cannot create " + dir);
    try (Env env = Env.make(id, Map.of("width", width, "height", height))) {
      env.actionSpace().seed(0);
      env.reset(0);
      for (int f = 0; f < frames; ++f) {
        BufferedImage image = env.render();
        File file = new File(dir, String.format("frame_%03d.png", f));
        ImageIO.write(image, "png", file);
        System.out.println("wrote " + file + " (" + image.getWidth() + "x" + image.getHeight() + ")");
        for (int s = 0; s < every; ++s) {
          Env.Step step = env.step(env.actionSpace().sampleFloats());
          if (step.terminated() || step.truncated()) env.reset();
        }
      }
    }
  }
}
