// Compile-time stub of JDK 22's java.lang.foreign.SymbolLookup; see docs/guides/java.md (FFM).
package java.lang.foreign;

import java.nio.file.Path;
import java.util.Optional;

public interface SymbolLookup {
  static SymbolLookup libraryLookup(Path path, Arena arena) {
    throw new UnsupportedOperationException("stub");
  }

  static SymbolLookup libraryLookup(String name, Arena arena) {
    throw new UnsupportedOperationException("stub");
  }

  Optional<MemorySegment> find(String name);
}
