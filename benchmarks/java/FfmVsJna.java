// JNA against the FFM API (java.lang.foreign) on the same C API, in one JVM (a Java >= 22),
// in interleaved rounds; benchmarks/java_ffm.py compiles and runs it and prints the medians.
//
//   java --enable-native-access=ALL-UNNAMED -cp joltgym.jar:joltgym-ffm.jar:jna.jar:classes \
//        -Djna.library.path=FOLDER FfmVsJna task num_envs num_threads steps calls rounds actions_file
//
// Each round measures, in alternating order (JNA first in even rounds, FFM first in odd ones):
//  * per call: `calls` calls of jg_abi_version() (no arguments) and of
//    jg_pool_in_flight(pool, int32_t*) (a handle and a pointer into native memory), each through
//    JNA's direct mapping and through an FFM downcall handle (and one marked Linker.Option.critical,
//    which skips the thread-state change: for short calls only); prints ns/call;
//  * per batched step: `steps` steps of num_envs worlds through joltgym.Pool (JNA) and through
//    joltgym.ffm.FfmPool, the same seed and actions (float32 [16, num_envs, num_agents, act_dim],
//    cycled), the rewards and flags read in place, as benchmarks/java/LibraryHost.java does;
//    prints env-steps/s and the reward sums, which must be equal.
// Output lines: "result ROUND NAME VALUE".
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import joltgym.Pool;
import joltgym.ffm.FfmPool;

public final class FfmVsJna {
  /** The two calls bound by JNA's direct mapping, its fastest calls. */
  static final class Jna {
    static {
      Native.register("joltgym_marl");
    }

    static native int jg_abi_version();

    static native int jg_pool_in_flight(long pool, Pointer count);
  }

  /** The same two calls (and pool creation, to get a handle) as FFM downcall handles. */
  static final class Ffm {
    static final MethodHandle ABI_VERSION;
    static final MethodHandle ABI_VERSION_CRITICAL;
    static final MethodHandle IN_FLIGHT;
    static final MethodHandle IN_FLIGHT_CRITICAL;
    static final MethodHandle CREATE;
    static final MethodHandle CLOSE;

    static {
      String folder = System.getProperty("jna.library.path");
      SymbolLookup library = SymbolLookup.libraryLookup(
          Path.of(folder, System.mapLibraryName("joltgym_marl")), Arena.global());
      Linker linker = Linker.nativeLinker();
      FunctionDescriptor abi = FunctionDescriptor.of(ValueLayout.JAVA_INT);
      FunctionDescriptor inFlight =
          FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS);
      MemorySegment abiSymbol = library.find("jg_abi_version").orElseThrow();
      MemorySegment inFlightSymbol = library.find("jg_pool_in_flight").orElseThrow();
      ABI_VERSION = linker.downcallHandle(abiSymbol, abi);
      ABI_VERSION_CRITICAL = linker.downcallHandle(abiSymbol, abi, Linker.Option.critical(false));
      IN_FLIGHT = linker.downcallHandle(inFlightSymbol, inFlight);
      IN_FLIGHT_CRITICAL =
          linker.downcallHandle(inFlightSymbol, inFlight, Linker.Option.critical(false));
      CREATE = linker.downcallHandle(library.find("jg_pool_create_json").orElseThrow(),
          FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT,
              ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.ADDRESS));
      CLOSE = linker.downcallHandle(library.find("jg_pool_close").orElseThrow(),
          FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
    }
  }

  private static long sink;

  static double jnaAbi(int calls) {
    long start = System.nanoTime();
    long sum = 0;
    for (int i = 0; i < calls; ++i) {
      sum += Jna.jg_abi_version();
    }
    long elapsed = System.nanoTime() - start;
    sink += sum;
    return (double) elapsed / calls;
  }

  static double ffmAbi(int calls, boolean critical) throws Throwable {
    long start = System.nanoTime();
    long sum = 0;
    if (critical) {
      for (int i = 0; i < calls; ++i) {
        sum += (int) Ffm.ABI_VERSION_CRITICAL.invokeExact();
      }
    } else {
      for (int i = 0; i < calls; ++i) {
        sum += (int) Ffm.ABI_VERSION.invokeExact();
      }
    }
    long elapsed = System.nanoTime() - start;
    sink += sum;
    return (double) elapsed / calls;
  }

  static double jnaInFlight(int calls, long pool, Pointer count) {
    long start = System.nanoTime();
    long sum = 0;
    for (int i = 0; i < calls; ++i) {
      sum += Jna.jg_pool_in_flight(pool, count);
    }
    long elapsed = System.nanoTime() - start;
    sink += sum + count.getInt(0);
    return (double) elapsed / calls;
  }

  static double ffmInFlight(int calls, long pool, MemorySegment count, boolean critical)
      throws Throwable {
    long start = System.nanoTime();
    long sum = 0;
    if (critical) {
      for (int i = 0; i < calls; ++i) {
        sum += (int) Ffm.IN_FLIGHT_CRITICAL.invokeExact(pool, count);
      }
    } else {
      for (int i = 0; i < calls; ++i) {
        sum += (int) Ffm.IN_FLIGHT.invokeExact(pool, count);
      }
    }
    long elapsed = System.nanoTime() - start;
    sink += sum + count.get(ValueLayout.JAVA_INT, 0);
    return (double) elapsed / calls;
  }

  /** A step loop's rate and reward sum. */
  record Rollout(double envStepsPerSec, double rewardSum) {}

  static Rollout jnaSteps(Pool pool, FloatBuffer given, int steps) {
    FloatBuffer actions = pool.actions();
    int count = actions.capacity();
    int agents = pool.numAgents();
    int numEnvs = pool.numEnvs();
    FloatBuffer reward = pool.reward32();
    ByteBuffer terminated = pool.terminated();
    ByteBuffer truncated = pool.truncated();
    pool.reset(0);
    double total = 0;
    long episodes = 0;
    long start = System.nanoTime();
    for (int t = 0; t < steps; ++t) {
      given.position((t % 16) * count).limit((t % 16) * count + count);
      actions.clear();
      actions.put(given);
      given.clear();
      pool.step();
      for (int e = 0; e < numEnvs; ++e) {
        if (pool.resetKind(e) == Pool.RESET) continue;
        total += reward.get(e * agents);
        if (terminated.get(e * agents) != 0 || truncated.get(e * agents) != 0) ++episodes;
      }
    }
    double elapsed = (System.nanoTime() - start) / 1e9;
    sink += episodes;
    return new Rollout((double) steps * numEnvs / elapsed, total);
  }

  static Rollout ffmSteps(FfmPool pool, MemorySegment given, int steps) {
    MemorySegment actions = pool.actions();
    long bytes = actions.byteSize();
    int agents = pool.numAgents();
    int numEnvs = pool.numEnvs();
    pool.reset(0);
    double total = 0;
    long episodes = 0;
    long start = System.nanoTime();
    for (int t = 0; t < steps; ++t) {
      MemorySegment.copy(given, (t % 16) * bytes, actions, 0, bytes);
      pool.step();
      for (int e = 0; e < numEnvs; ++e) {
        if (pool.resetKind(e) == Pool.RESET) continue;
        total += pool.reward(e * agents);
        if (pool.terminated(e * agents) || pool.truncated(e * agents)) ++episodes;
      }
    }
    double elapsed = (System.nanoTime() - start) / 1e9;
    sink += episodes;
    return new Rollout((double) steps * numEnvs / elapsed, total);
  }

  static void print(int round, String name, double value) {
    System.out.println("result " + round + " " + name + " " + value);
  }

  public static void main(String[] args) throws Throwable {
    if (args.length > 0 && (args[0].equals("--help") || args[0].equals("-h"))) {
      System.out.println("usage: FfmVsJna task num_envs num_threads steps calls rounds actions_file\n"
          + "JNA against FFM on the C API: ns/call and batched env-steps/s, interleaved rounds.");
      return;
    }
    String task = args[0];
    int numEnvs = Integer.parseInt(args[1]);
    int threads = Integer.parseInt(args[2]);
    int steps = Integer.parseInt(args[3]);
    int calls = Integer.parseInt(args[4]);
    int rounds = Integer.parseInt(args[5]);
    byte[] file = Files.readAllBytes(Path.of(args[6]));
    FloatBuffer givenJna = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer();
    try (Arena arena = Arena.ofConfined();
        Pool jna = Pool.builder(task).numEnvs(numEnvs).numThreads(threads).build();
        FfmPool ffm = FfmPool.create(Pool.builder(task).numEnvs(numEnvs).numThreads(threads))) {
      MemorySegment givenFfm = arena.allocate(file.length, 64);
      MemorySegment.copy(MemorySegment.ofArray(file), 0, givenFfm, 0, file.length);
      if (givenJna.capacity() != 16 * jna.actions().capacity()) {
        throw new IllegalStateException(
            "the actions file should hold 16 x " + jna.actions().capacity() + " floats");
      }
      // A pool of one world for jg_pool_in_flight, made through the C API directly.
      MemorySegment handleOut = arena.allocate(ValueLayout.JAVA_LONG);
      int status = (int) Ffm.CREATE.invokeExact(arena.allocateFrom(task), 1, MemorySegment.NULL,
          MemorySegment.NULL, handleOut);
      if (status != 0) throw new IllegalStateException("jg_pool_create_json: status " + status);
      long handle = handleOut.get(ValueLayout.JAVA_LONG, 0);
      Memory countJna = new Memory(4);
      MemorySegment countFfm = arena.allocate(ValueLayout.JAVA_INT);
      // Round 0 warms both sides up (JIT, pools' threads) and is not reported.
      for (int round = 0; round <= rounds; ++round) {
        for (int side = 0; side < 2; ++side) {
          boolean ffmTurn = (side == 1) == (round % 2 == 0);
          if (ffmTurn) {
            double abi = ffmAbi(calls, false);
            double abiCritical = ffmAbi(calls, true);
            double inFlight = ffmInFlight(calls, handle, countFfm, false);
            double inFlightCritical = ffmInFlight(calls, handle, countFfm, true);
            Rollout r = ffmSteps(ffm, givenFfm, steps);
            if (round > 0) {
              print(round, "ffm_abi_ns", abi);
              print(round, "ffm_critical_abi_ns", abiCritical);
              print(round, "ffm_in_flight_ns", inFlight);
              print(round, "ffm_critical_in_flight_ns", inFlightCritical);
              print(round, "ffm_step_rate", r.envStepsPerSec());
              print(round, "ffm_reward_sum", r.rewardSum());
            }
          } else {
            double abi = jnaAbi(calls);
            double inFlight = jnaInFlight(calls, handle, countJna);
            Rollout r = jnaSteps(jna, givenJna, steps);
            if (round > 0) {
              print(round, "jna_abi_ns", abi);
              print(round, "jna_in_flight_ns", inFlight);
              print(round, "jna_step_rate", r.envStepsPerSec());
              print(round, "jna_reward_sum", r.rewardSum());
            }
          }
        }
      }
      status = (int) Ffm.CLOSE.invokeExact(handle);
      if (status != 0) throw new IllegalStateException("jg_pool_close: status " + status);
    }
    System.out.println("sink " + sink);
  }
}
