package joltgym.ffm;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import joltgym.JoltgymException;
import joltgym.Pool;

/**
 * N worlds of one task stepped in one call, {@link joltgym.Pool}'s batched
 * step bound by the Foreign Function and Memory API (JDK 22 and later)
 * instead of JNA: the same C API calls on the same buffers, so the same
 * seeds and actions give the same bytes.
 *
 * <p>The result buffers are native memory of the pool's own {@link Arena},
 * which the C API writes in place ({@code jg_pool_use_buffers}); read them
 * through the segments ({@link #obs()}, {@link #reward()}, ...), whose
 * layout is the header's (rows are agents of worlds). {@link #close()}
 * closes the arena too: a segment used after it throws {@link
 * IllegalStateException} instead of reading freed memory.
 *
 * <p>One thread at a time: the C API refuses a second thread inside the same
 * pool ({@code JG_ERR_BUSY}). Failures are {@link JoltgymException}s with
 * the C API's status and message, as in the JNA library.
 */
public final class FfmPool implements AutoCloseable {
  /**
   * Makes a pool from the JNA library's builder, whose settings it shares:
   * {@code FfmPool.create(Pool.builder("half_cheetah").numEnvs(64))}. A
   * pool here steps synchronously, so {@code batchSize} must stay 0.
   */
  public static FfmPool create(Pool.Builder settings) {
    if (settings.dtype() == null) {
      throw new JoltgymException(JoltgymException.VALUE,
          "dtype should be float32 or float64, got null");
    }
    if (settings.batchSize() != 0) {
      throw new JoltgymException(JoltgymException.VALUE,
          "batch_size should be 0 (FfmPool steps every world in one call, no send/recv), got "
              + settings.batchSize());
    }
    return new FfmPool(settings);
  }

  private final Arena arena = Arena.ofShared();
  private final long handle;
  private final Pool.Dtype dtype;
  private final int numEnvs;
  private final int numAgents;
  private final int obsDim;
  private final int actDim;
  private final int infoWidth;
  private final MemorySegment actions;
  private final long actionCount;
  // Indices of CApi.BUFFERS (jg_buffers' fields).
  private static final int OBS = 0;
  private static final int REWARD = 1;
  private static final int TERMINATED = 2;
  private static final int TRUNCATED = 3;
  private static final int INFO = 4;
  private static final int FINAL_OBS = 5;
  private static final int FINAL_INFO = 6;
  private static final int RESET_KIND = 7;
  private static final int UNSTABLE = 8;
  private static final int ELAPSED = 9;
  private static final int OBS64 = 10;
  private static final int REWARD64 = 11;
  private static final int FINAL_OBS64 = 12;

  private final MemorySegment[] buffers = new MemorySegment[CApi.BUFFERS.length];
  private volatile boolean closed;

  private FfmPool(Pool.Builder b) {
    dtype = b.dtype();
    long made = 0;
    try {
      MemorySegment task = arena.allocateFrom(b.task());
      MemorySegment config = arena.allocate(CApi.CONFIG);
      config.set(JAVA_INT, CApi.offset(CApi.CONFIG, "num_threads"), b.numThreads());
      config.set(JAVA_INT, CApi.offset(CApi.CONFIG, "max_episode_steps"),
          b.maxEpisodeSteps() != null ? b.maxEpisodeSteps() : taskMaxEpisodeSteps(task));
      config.set(ADDRESS, CApi.offset(CApi.CONFIG, "autoreset_mode"),
          b.autoresetMode() != null ? arena.allocateFrom(b.autoresetMode()) : MemorySegment.NULL);
      config.set(ADDRESS, CApi.offset(CApi.CONFIG, "dtype"), arena.allocateFrom(dtype.toString()));
      MemorySegment kwargs = arena.allocateFrom(b.kwargsJson());
      MemorySegment out = arena.allocate(JAVA_LONG);
      int status = (int) CApi.jg_pool_create_json.invokeExact(task, b.numEnvs(), config, kwargs, out);
      CApi.check(status);
      made = out.get(JAVA_LONG, 0);

      MemorySegment dims = arena.allocate(CApi.DIMS);
      CApi.check((int) CApi.jg_pool_dims.invokeExact(made, dims));
      numEnvs = dims.get(JAVA_INT, CApi.offset(CApi.DIMS, "num_envs"));
      numAgents = dims.get(JAVA_INT, CApi.offset(CApi.DIMS, "num_agents"));
      obsDim = dims.get(JAVA_INT, CApi.offset(CApi.DIMS, "obs_dim"));
      actDim = dims.get(JAVA_INT, CApi.offset(CApi.DIMS, "act_dim"));
      infoWidth = dims.get(JAVA_INT, CApi.offset(CApi.DIMS, "info_width"));
      useOwnBuffers(made);
      actionCount = (long) numEnvs * numAgents * actDim;
      actions = arena.allocate(4 * actionCount, 64);
    } catch (Throwable t) {
      if (made != 0) {
        try {
          int ignored = (int) CApi.jg_pool_close.invokeExact(made);
        } catch (Throwable second) {
          t.addSuppressed(second);
        }
      }
      arena.close();
      throw CApi.rethrow(t);
    }
    handle = made;
  }

  private int taskMaxEpisodeSteps(MemorySegment task) throws Throwable {
    MemorySegment info = arena.allocate(CApi.TASK_INFO);
    CApi.check((int) CApi.jg_task_info_get.invokeExact(task, info));
    return info.get(JAVA_INT, CApi.offset(CApi.TASK_INFO, "max_episode_steps"));
  }

  /** Allocates every result buffer of the layout in the arena and makes the pool write there. */
  private void useOwnBuffers(long pool) throws Throwable {
    long rows = (long) numEnvs * numAgents;
    boolean wide = dtype == Pool.Dtype.FLOAT64;
    long[] counts = {
        wide ? 0 : rows * obsDim, wide ? 0 : rows, rows, rows, rows * infoWidth,
        wide ? 0 : rows * obsDim, rows * infoWidth, numEnvs, numEnvs, numEnvs,
        wide ? rows * obsDim : 0, wide ? rows : 0, wide ? rows * obsDim : 0};
    long[] elementBytes = {4, 4, 1, 1, 8, 4, 8, 1, 1, 4, 8, 8, 8};
    MemorySegment pointers = arena.allocate(CApi.BUFFER_POINTERS);
    MemorySegment sizes = arena.allocate(CApi.BUFFER_SIZES);
    for (int i = 0; i < counts.length; ++i) {
      String name = CApi.BUFFERS[i];
      MemorySegment memory = MemorySegment.NULL;
      if (counts[i] > 0) {
        memory = arena.allocate(counts[i] * elementBytes[i], 64);  // zeroed, like the pool's own
        buffers[i] = memory;
      }
      pointers.set(ADDRESS, CApi.offset(CApi.BUFFER_POINTERS, name), memory);
      sizes.set(JAVA_LONG, CApi.offset(CApi.BUFFER_SIZES, name), counts[i]);
    }
    CApi.check((int) CApi.jg_pool_use_buffers.invokeExact(pool, pointers, sizes));
  }

  // -- shape ------------------------------------------------------------------------------

  public int numEnvs() {
    return numEnvs;
  }

  public int numAgents() {
    return numAgents;
  }

  public int obsDim() {
    return obsDim;
  }

  public int actDim() {
    return actDim;
  }

  /** float64 values per agent's info record. */
  public int infoWidth() {
    return infoWidth;
  }

  public Pool.Dtype dtype() {
    return dtype;
  }

  // -- calls ------------------------------------------------------------------------------

  /** Resets every world, world i seeded seed + i. */
  public void reset(long seed) {
    ensureOpen();
    int status;
    try {
      status = (int) CApi.jg_pool_reset.invokeExact(handle, 1, seed);
    } catch (Throwable t) {
      throw CApi.rethrow(t);
    }
    CApi.check(status);
  }

  /** Steps every world with the actions staged in {@link #actions()}. */
  public void step() {
    ensureOpen();
    int status;
    try {
      status = (int) CApi.jg_pool_step.invokeExact(handle, actions, actionCount);
    } catch (Throwable t) {
      throw CApi.rethrow(t);
    }
    CApi.check(status);
  }

  /** Closes the pool and frees its memory; closing again does nothing. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    int status;
    try {
      status = (int) CApi.jg_pool_close.invokeExact(handle);
    } catch (Throwable t) {
      throw CApi.rethrow(t);
    }
    arena.close();
    CApi.check(status);
  }

  /** The float64 layout: obs64, reward64 and final_obs64 instead of obs, reward, final_obs. */
  private boolean wide() {
    return dtype == Pool.Dtype.FLOAT64;
  }

  private void ensureOpen() {
    if (closed) {
      throw new JoltgymException(JoltgymException.STATE, "FfmPool is closed");
    }
  }

  // -- buffers: native memory written in place --------------------------------------------

  /** Actions, float32 [numEnvs, numAgents, actDim]: stage them here before {@link #step()}. */
  public MemorySegment actions() {
    return actions;
  }

  /** Observations [numEnvs, numAgents, obsDim], float32 or float64 by {@link #dtype()}. */
  public MemorySegment obs() {
    return buffers[wide() ? OBS64 : OBS];
  }

  /** Rewards [numEnvs, numAgents], float32 or float64 by {@link #dtype()}. */
  public MemorySegment reward() {
    return buffers[wide() ? REWARD64 : REWARD];
  }

  /** Flags [numEnvs, numAgents], one byte each. */
  public MemorySegment terminated() {
    return buffers[TERMINATED];
  }

  public MemorySegment truncated() {
    return buffers[TRUNCATED];
  }

  /** Info records [numEnvs, numAgents, infoWidth] float64. */
  public MemorySegment info() {
    return buffers[INFO];
  }

  /** The ended episode's last observation (same_step auto-resets). */
  public MemorySegment finalObs() {
    return buffers[wide() ? FINAL_OBS64 : FINAL_OBS];
  }

  public MemorySegment finalInfo() {
    return buffers[FINAL_INFO];
  }

  /** Per world: what the last call did (0 stepped, 1 reset, 2 auto-reset). */
  public MemorySegment resetKind() {
    return buffers[RESET_KIND];
  }

  /** Per world: a physics blow-up ended the episode (one byte). */
  public MemorySegment unstable() {
    return buffers[UNSTABLE];
  }

  /** Per world: steps in the current episode (int32). */
  public MemorySegment elapsed() {
    return buffers[ELAPSED];
  }

  /** The reward of a row (agent of a world) in either layout. */
  public double reward(int row) {
    return wide() ? buffers[REWARD64].getAtIndex(JAVA_DOUBLE, row)
        : buffers[REWARD].getAtIndex(JAVA_FLOAT, row);
  }

  public boolean terminated(int row) {
    return buffers[TERMINATED].get(JAVA_BYTE, row) != 0;
  }

  public boolean truncated(int row) {
    return buffers[TRUNCATED].get(JAVA_BYTE, row) != 0;
  }

  public int resetKind(int world) {
    return buffers[RESET_KIND].get(JAVA_BYTE, world);
  }
}
