// Compile-time stub of JDK 22's java.lang.foreign.AddressLayout; see docs/guides/java.md (FFM).
package java.lang.foreign;

public interface AddressLayout extends ValueLayout {
  @Override
  AddressLayout withName(String name);
}
