// The route teams use today, for comparison with the C API: a Java program
// driving Gymnasium envs in a Python subprocess over a pipe
// (benchmarks/_gym_pipe_worker.py speaks the protocol).
//
//   java GymPipeHost <python> <worker.py> <envs> <steps> <actions_file>
//
// actions_file: float32 [16, envs, act_dim], cycled over the steps (the same
// actions benchmarks/java_host.py gives the C API host and raw_step_limit).
// Prints env-steps/s of the stepping loop (process start and resets excluded).
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

public final class GymPipeHost {
  public static void main(String[] args) throws IOException, InterruptedException {
    if (args.length != 5) {
      System.out.println("usage: GymPipeHost <python> <worker.py> <envs> <steps> <actions_file>");
      return;
    }
    int envs = Integer.parseInt(args[2]);
    int steps = Integer.parseInt(args[3]);
    ByteBuffer given = ByteBuffer.wrap(Files.readAllBytes(Path.of(args[4])))
        .order(ByteOrder.LITTLE_ENDIAN);
    Process worker = new ProcessBuilder(args[0], args[1], "--envs", Integer.toString(envs))
        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    DataInputStream in = new DataInputStream(new BufferedInputStream(worker.getInputStream(), 1 << 20));
    OutputStream out = new BufferedOutputStream(worker.getOutputStream(), 1 << 20);

    // Header line, then the reset observations.
    StringBuilder header = new StringBuilder();
    for (int c = in.read(); c != '\n'; c = in.read()) {
      if (c < 0) throw new IOException("the worker ended before its header");
      header.append((char) c);
    }
    String[] dims = header.toString().trim().split(" ");
    int obsDim = Integer.parseInt(dims[0]);
    int actDim = Integer.parseInt(dims[1]);
    byte[] obs = new byte[4 * envs * obsDim];
    in.readFully(obs);
    int actBytes = 4 * envs * actDim;
    if (given.capacity() != 16 * actBytes) {
      throw new IOException("the actions file should hold 16 x " + envs * actDim + " floats");
    }
    byte[] actions = new byte[actBytes];
    byte[] rewards = new byte[4 * envs];
    byte[] flags = new byte[2 * envs];
    ByteBuffer rewardView = ByteBuffer.wrap(rewards).order(ByteOrder.LITTLE_ENDIAN);
    double total = 0.0;
    long start = System.nanoTime();
    for (int t = 0; t < steps; ++t) {
      given.position((t % 16) * actBytes);
      given.get(actions);
      out.write(actions);
      out.flush();
      in.readFully(obs);
      in.readFully(rewards);
      in.readFully(flags);
      for (int i = 0; i < envs; ++i) total += rewardView.getFloat(4 * i);
    }
    double elapsed = (System.nanoTime() - start) / 1e9;
    out.close();
    worker.waitFor();
    System.out.printf("reward sum: %s%n", Double.toString(total));
    System.out.printf("env-steps/s: %.0f%n", (double) steps * envs / elapsed);
  }
}
