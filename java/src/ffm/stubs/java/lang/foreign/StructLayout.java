// Compile-time stub of JDK 22's java.lang.foreign.StructLayout (its GroupLayout parent left out:
// calls resolve through the super-interfaces at run time); see docs/guides/java.md (FFM).
package java.lang.foreign;

public interface StructLayout extends MemoryLayout {
  @Override
  StructLayout withName(String name);
}
