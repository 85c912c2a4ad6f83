// Compile-time stub of JDK 22's java.lang.foreign.Linker; see docs/guides/java.md (FFM).
//
// The stubs in this folder declare only the types and methods joltgym.ffm and its benchmark
// call, with the JDK's names and signatures, so that JDK 17's javac can compile against them
// (patched into java.base). They are never shipped: at run time, on a JDK >= 22, the JDK's own
// classes answer to the same names and descriptors.
package java.lang.foreign;

import java.lang.invoke.MethodHandle;

public interface Linker {
  static Linker nativeLinker() {
    throw new UnsupportedOperationException("stub");
  }

  MethodHandle downcallHandle(MemorySegment address, FunctionDescriptor function, Option... options);

  interface Option {
    static Option critical(boolean allowHeapAccess) {
      throw new UnsupportedOperationException("stub");
    }
  }
}
