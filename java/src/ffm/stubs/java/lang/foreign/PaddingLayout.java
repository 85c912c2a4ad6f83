// Compile-time stub of JDK 22's java.lang.foreign.PaddingLayout; see docs/guides/java.md (FFM).
package java.lang.foreign;

public interface PaddingLayout extends MemoryLayout {
  @Override
  PaddingLayout withName(String name);
}
