// Compile-time stub of JDK 22's java.lang.foreign.FunctionDescriptor; see docs/guides/java.md (FFM).
package java.lang.foreign;

public interface FunctionDescriptor {
  static FunctionDescriptor of(MemoryLayout result, MemoryLayout... arguments) {
    throw new UnsupportedOperationException("stub");
  }
}
