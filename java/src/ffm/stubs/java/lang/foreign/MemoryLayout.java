// Compile-time stub of JDK 22's java.lang.foreign.MemoryLayout; see docs/guides/java.md (FFM).
package java.lang.foreign;

public interface MemoryLayout {
  static StructLayout structLayout(MemoryLayout... elements) {
    throw new UnsupportedOperationException("stub");
  }

  static PaddingLayout paddingLayout(long byteSize) {
    throw new UnsupportedOperationException("stub");
  }

  long byteSize();

  long byteOffset(PathElement... elements);

  MemoryLayout withName(String name);

  interface PathElement {
    static PathElement groupElement(String name) {
      throw new UnsupportedOperationException("stub");
    }
  }
}
