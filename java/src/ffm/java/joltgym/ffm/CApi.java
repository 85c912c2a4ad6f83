package joltgym.ffm;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.File;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import joltgym.JoltgymException;

/**
 * The C API calls a batched step needs (include/joltgym_marl.h), bound by
 * the Foreign Function and Memory API: one downcall handle per function, one
 * layout per struct. Package-private: {@link FfmPool} checks every status.
 *
 * <p>The library is {@code -Djoltgym.library=<path of libjoltgym_marl.so>},
 * else the first {@code libjoltgym_marl.so} in the folders of {@code
 * jna.library.path} (so the JNA library's flags serve both) or {@code
 * java.library.path}, else whatever the dynamic loader finds by that name.
 */
final class CApi {
  static final int ABI_VERSION = 4;
  static final int OK = 0;

  /** The result buffers of jg_buffers / jg_buffer_sizes, in the header's order. */
  static final String[] BUFFERS = {"obs", "reward", "terminated", "truncated", "info",
      "final_obs", "final_info", "reset_kind", "unstable", "elapsed", "obs64", "reward64",
      "final_obs64"};

  static final StructLayout CONFIG = MemoryLayout.structLayout(
      JAVA_INT.withName("num_threads"),
      JAVA_INT.withName("max_episode_steps"),
      ADDRESS.withName("autoreset_mode"),
      JAVA_INT.withName("batch_size"),
      MemoryLayout.paddingLayout(4),
      ADDRESS.withName("dtype"));

  static final StructLayout DIMS = MemoryLayout.structLayout(
      JAVA_INT.withName("num_envs"),
      JAVA_INT.withName("num_agents"),
      JAVA_INT.withName("obs_dim"),
      JAVA_INT.withName("act_dim"),
      JAVA_INT.withName("info_width"),
      JAVA_INT.withName("num_info_fields"),
      JAVA_INT.withName("num_threads"),
      JAVA_INT.withName("max_episode_steps"),
      JAVA_DOUBLE.withName("dt"),
      JAVA_INT.withName("batch_size"),
      JAVA_INT.withName("real_size"));

  static final StructLayout TASK_INFO = MemoryLayout.structLayout(
      ADDRESS.withName("name"),
      ADDRESS.withName("kind"),
      ADDRESS.withName("title"),
      ADDRESS.withName("env_id"),
      ADDRESS.withName("reference_id"),
      ADDRESS.withName("agent_prefix"),
      JAVA_INT.withName("max_episode_steps"),
      JAVA_INT.withName("num_params"),
      ADDRESS.withName("doc"));

  static final StructLayout BUFFER_POINTERS = struct(ADDRESS);
  static final StructLayout BUFFER_SIZES = struct(JAVA_LONG);

  private static final Linker LINKER = Linker.nativeLinker();
  private static final SymbolLookup LIBRARY =
      SymbolLookup.libraryLookup(libraryPath(), Arena.global());

  static final MethodHandle jg_abi_version = bind("jg_abi_version", JAVA_INT);
  static final MethodHandle jg_last_error = bind("jg_last_error", ADDRESS);
  static final MethodHandle jg_task_info_get =
      bind("jg_task_info_get", JAVA_INT, ADDRESS, ADDRESS);
  static final MethodHandle jg_pool_create_json =
      bind("jg_pool_create_json", JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
  static final MethodHandle jg_pool_close = bind("jg_pool_close", JAVA_INT, JAVA_LONG);
  static final MethodHandle jg_pool_dims = bind("jg_pool_dims", JAVA_INT, JAVA_LONG, ADDRESS);
  static final MethodHandle jg_pool_use_buffers =
      bind("jg_pool_use_buffers", JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS);
  static final MethodHandle jg_pool_reset =
      bind("jg_pool_reset", JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG);
  static final MethodHandle jg_pool_step =
      bind("jg_pool_step", JAVA_INT, JAVA_LONG, ADDRESS, JAVA_LONG);

  static {
    int abi = abiVersion();
    if (abi != ABI_VERSION) {
      throw new UnsatisfiedLinkError("libjoltgym_marl has ABI " + abi
          + ", joltgym.ffm was written for ABI " + ABI_VERSION);
    }
  }

  private CApi() {}

  private static StructLayout struct(MemoryLayout element) {
    MemoryLayout[] fields = new MemoryLayout[BUFFERS.length];
    for (int i = 0; i < fields.length; ++i) {
      fields[i] = element.withName(BUFFERS[i]);
    }
    return MemoryLayout.structLayout(fields);
  }

  private static Path libraryPath() {
    String given = System.getProperty("joltgym.library");
    if (given != null) {
      return Path.of(given);
    }
    String file = System.mapLibraryName("joltgym_marl");
    for (String property : new String[] {"jna.library.path", "java.library.path"}) {
      for (String folder : System.getProperty(property, "").split(File.pathSeparator)) {
        Path candidate = Path.of(folder.isEmpty() ? "." : folder, file);
        if (!folder.isEmpty() && Files.isRegularFile(candidate)) {
          return candidate;
        }
      }
    }
    return Path.of(file);
  }

  private static MethodHandle bind(String name, MemoryLayout result, MemoryLayout... arguments) {
    MemorySegment symbol = LIBRARY.find(name).orElseThrow(
        () -> new UnsatisfiedLinkError("libjoltgym_marl has no symbol " + name));
    return LINKER.downcallHandle(symbol, FunctionDescriptor.of(result, arguments));
  }

  /** The byte offset of a named field of a struct layout. */
  static long offset(StructLayout layout, String field) {
    return layout.byteOffset(groupElement(field));
  }

  /** A C string the library owns, as a Java string ("" for NULL). */
  static String string(MemorySegment pointer) {
    if (pointer.address() == 0) {
      return "";
    }
    return pointer.reinterpret(Long.MAX_VALUE).getString(0);
  }

  static int abiVersion() {
    try {
      return (int) jg_abi_version.invokeExact();
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** Throws the C API's error for a failed status (its message is read on the calling thread). */
  static void check(int status) {
    if (status != OK) {
      MemorySegment message;
      try {
        message = (MemorySegment) jg_last_error.invokeExact();
      } catch (Throwable t) {
        throw rethrow(t);
      }
      throw new JoltgymException(status, string(message));
    }
  }

  /** A downcall's Throwable: unchecked ones as they are, anything else wrapped. */
  static RuntimeException rethrow(Throwable t) {
    if (t instanceof RuntimeException) {
      throw (RuntimeException) t;
    }
    if (t instanceof Error) {
      throw (Error) t;
    }
    throw new IllegalStateException(t);
  }
}
