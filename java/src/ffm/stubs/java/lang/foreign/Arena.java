// Compile-time stub of JDK 22's java.lang.foreign.Arena; see docs/guides/java.md (FFM).
package java.lang.foreign;

public interface Arena extends SegmentAllocator, AutoCloseable {
  static Arena global() {
    throw new UnsupportedOperationException("stub");
  }

  static Arena ofConfined() {
    throw new UnsupportedOperationException("stub");
  }

  static Arena ofShared() {
    throw new UnsupportedOperationException("stub");
  }

  @Override
  MemorySegment allocate(long byteSize, long byteAlignment);

  @Override
  void close();
}
