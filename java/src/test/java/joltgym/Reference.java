package joltgym;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Assumptions;

/**
 * The Python side's recordings (tests/test_java.py writes them with
 * joltgym_marl's own WorldPool, Gymnasium and its renderer) in the folder
 * named by -Djoltgym.reference.
 */
final class Reference {
  private Reference() {}

  static Path dir() {
    String d = System.getProperty("joltgym.reference");
    Assumptions.assumeTrue(d != null, "no -Djoltgym.reference: run through tests/test_java.py");
    return Path.of(d);
  }

  /** manifest.txt: one whitespace-separated record per line. */
  static List<String[]> manifest(String kind) throws IOException {
    List<String[]> out = new ArrayList<>();
    for (String line : Files.readAllLines(dir().resolve("manifest.txt"))) {
      String[] f = line.trim().split("\\s+");
      if (f.length > 0 && f[0].equals(kind)) out.add(f);
    }
    return out;
  }

  static ByteBuffer bytes(String file) throws IOException {
    return ByteBuffer.wrap(Files.readAllBytes(dir().resolve(file))).order(ByteOrder.LITTLE_ENDIAN);
  }

  static Properties properties(String file) throws IOException {
    Properties p = new Properties();
    try (var in = Files.newBufferedReader(dir().resolve(file))) {
      p.load(in);
    }
    return p;
  }
}
