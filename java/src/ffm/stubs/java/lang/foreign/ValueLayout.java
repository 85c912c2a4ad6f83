// Compile-time stub of JDK 22's java.lang.foreign.ValueLayout; see docs/guides/java.md (FFM).
package java.lang.foreign;

public interface ValueLayout extends MemoryLayout {
  AddressLayout ADDRESS = null;
  OfByte JAVA_BYTE = null;
  OfInt JAVA_INT = null;
  OfLong JAVA_LONG = null;
  OfFloat JAVA_FLOAT = null;
  OfDouble JAVA_DOUBLE = null;

  @Override
  ValueLayout withName(String name);

  interface OfByte extends ValueLayout {
    @Override
    OfByte withName(String name);
  }

  interface OfInt extends ValueLayout {
    @Override
    OfInt withName(String name);
  }

  interface OfLong extends ValueLayout {
    @Override
    OfLong withName(String name);
  }

  interface OfFloat extends ValueLayout {
    @Override
    OfFloat withName(String name);
  }

  interface OfDouble extends ValueLayout {
    @Override
    OfDouble withName(String name);
  }
}
