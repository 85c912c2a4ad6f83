// Compile-time stub of JDK 22's java.lang.foreign.MemorySegment; see docs/guides/java.md (FFM).
package java.lang.foreign;

import java.nio.ByteBuffer;

public interface MemorySegment {
  MemorySegment NULL = null;

  static MemorySegment ofBuffer(java.nio.Buffer buffer) {
    throw new UnsupportedOperationException("stub");
  }

  static MemorySegment ofArray(byte[] array) {
    throw new UnsupportedOperationException("stub");
  }

  static void copy(MemorySegment source, long sourceOffset, MemorySegment destination,
      long destinationOffset, long bytes) {
    throw new UnsupportedOperationException("stub");
  }

  long address();

  long byteSize();

  MemorySegment reinterpret(long newSize);

  MemorySegment asSlice(long offset, long newSize);

  ByteBuffer asByteBuffer();

  byte[] toArray(ValueLayout.OfByte elementLayout);

  long mismatch(MemorySegment other);

  String getString(long offset);

  byte get(ValueLayout.OfByte layout, long offset);

  int get(ValueLayout.OfInt layout, long offset);

  long get(ValueLayout.OfLong layout, long offset);

  float get(ValueLayout.OfFloat layout, long offset);

  double get(ValueLayout.OfDouble layout, long offset);

  MemorySegment get(AddressLayout layout, long offset);

  void set(ValueLayout.OfInt layout, long offset, int value);

  void set(ValueLayout.OfLong layout, long offset, long value);

  void set(AddressLayout layout, long offset, MemorySegment value);

  byte getAtIndex(ValueLayout.OfByte layout, long index);

  int getAtIndex(ValueLayout.OfInt layout, long index);

  float getAtIndex(ValueLayout.OfFloat layout, long index);

  double getAtIndex(ValueLayout.OfDouble layout, long index);

  void setAtIndex(ValueLayout.OfFloat layout, long index, float value);
}
