// Compile-time stub of JDK 22's java.lang.foreign.SegmentAllocator; see docs/guides/java.md (FFM).
package java.lang.foreign;

public interface SegmentAllocator {
  MemorySegment allocate(long byteSize, long byteAlignment);

  default MemorySegment allocate(MemoryLayout layout) {
    throw new UnsupportedOperationException("stub");
  }

  default MemorySegment allocateFrom(String text) {
    throw new UnsupportedOperationException("stub");
  }
}
