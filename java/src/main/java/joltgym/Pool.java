package joltgym;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.LongByReference;
import java.awt.image.BufferedImage;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * N worlds of one task stepped in one call: Python's {@code WorldPool} (and
 * EnvPool's) over the C API. Rows are agents of worlds (row = world *
 * numAgents + agent), every buffer C-contiguous as in the header.
 *
 * <p><b>Zero copies.</b> The results live in direct buffers the pool writes
 * in place on every reset and step (through {@code jg_pool_use_buffers}: the
 * memory is Java's, so a buffer kept past {@link #close()} stays readable,
 * frozen, and can never crash the JVM). Actions are staged in {@link
 * #actions()}, native memory the pool copies from. Read them through the
 * typed views ({@link #obs32()} or {@link #obs64()} by the layout, {@link
 * #reward32()}/{@link #reward64()}, {@link #terminated()}, ...) or the
 * per-row getters.
 *
 * <p><b>Layouts.</b> {@link Dtype#FLOAT32} (the C API's default, Python's
 * {@code WorldPool(..., dtype=numpy.float32)}) or {@link Dtype#FLOAT64}
 * (Gymnasium v5's dtype, bit-equal to {@code gymnasium.make("<Name>-v5")}).
 *
 * <p><b>Asynchronous stepping</b> is EnvPool's send/recv: {@link
 * #asyncReset}, then {@link #recv()} (the first batchSize worlds to finish,
 * in the {@link Batch} views) and {@link #send(int[], int)} (their next
 * actions, staged in {@link #sendActions()}).
 *
 * <p><b>Threads.</b> One thread at a time: a call from a second thread while
 * one is inside throws JG_ERR_BUSY, and every call after {@link #close()}
 * JG_ERR_STATE.
 */
public final class Pool implements AutoCloseable {
  /** The float layout of observations and rewards. */
  public enum Dtype {
    FLOAT32("float32", 4),
    FLOAT64("float64", 8);

    final String cName;
    final int bytes;

    Dtype(String cName, int bytes) {
      this.cName = cName;
      this.bytes = bytes;
    }

    /** "float32" or "float64". */
    public String toString() {
      return cName;
    }
  }

  /** What a call did to a world: {@link #resetKind(int)}. */
  public static final int STEPPED = 0;
  public static final int RESET = 1;
  public static final int AUTORESET = 2;

  /** Builds a pool: {@code Pool.builder("half_cheetah").numEnvs(64).build()}. */
  public static final class Builder {
    private final String task;
    private int numEnvs = 1;
    private int numThreads = 0;
    private Integer maxEpisodeSteps;
    private String autoresetMode = "next_step";
    private int batchSize = 0;
    private Dtype dtype = Dtype.FLOAT32;
    private final Map<String, Object> kwargs = new LinkedHashMap<>();

    private Builder(String task) {
      this.task = task;
    }

    /** Worlds (default 1). */
    public Builder numEnvs(int n) {
      numEnvs = n;
      return this;
    }

    /** Threads, counting the caller's (0, the default: one per CPU, capped at numEnvs). */
    public Builder numThreads(int n) {
      numThreads = n;
      return this;
    }

    /** Truncation (default: the task's, 1000 for the robots; 0: never). */
    public Builder maxEpisodeSteps(int n) {
      maxEpisodeSteps = n;
      return this;
    }

    /** "next_step" (the default) or "same_step". */
    public Builder autoresetMode(String mode) {
      autoresetMode = mode;
      return this;
    }

    /** Worlds per {@link #recv()} (0, the default: numEnvs). */
    public Builder batchSize(int n) {
      batchSize = n;
      return this;
    }

    public Builder dtype(Dtype d) {
      dtype = d;
      return this;
    }

    /** A keyword argument of the task (numbers, booleans, strings, arrays, null). */
    public Builder kwarg(String key, Object value) {
      kwargs.put(key, value);
      return this;
    }

    public Builder kwargs(Map<String, ?> more) {
      kwargs.putAll(more);
      return this;
    }

    public Pool build() {
      return new Pool(task, numEnvs, numThreads, maxEpisodeSteps, autoresetMode, batchSize, dtype,
          kwargs);
    }

    // The settings as they stand, for another binding of the same C API (joltgym.ffm.FfmPool).

    public String task() {
      return task;
    }

    public int numEnvs() {
      return numEnvs;
    }

    public int numThreads() {
      return numThreads;
    }

    /** The truncation set, or null for the task's own. */
    public Integer maxEpisodeSteps() {
      return maxEpisodeSteps;
    }

    public String autoresetMode() {
      return autoresetMode;
    }

    public int batchSize() {
      return batchSize;
    }

    public Dtype dtype() {
      return dtype;
    }

    /** The keyword arguments as the JSON object the C API takes. */
    public String kwargsJson() {
      return Json.object(kwargs);
    }
  }

  public static Builder builder(String task) {
    return new Builder(task);
  }

  /** The results of one {@link #recv()}: rows are the batch's worlds, {@link #envIds()} says which. */
  public final class Batch {
    final Results results;
    final IntBuffer envIds;

    Batch(Results results, IntBuffer envIds) {
      this.results = results;
      this.envIds = envIds;
    }

    /** The worlds of the rows (batchSize ids). */
    public IntBuffer envIds() {
      return envIds.duplicate();
    }

    public int envId(int k) {
      return envIds.get(k);
    }

    public int size() {
      return dims.batch_size;
    }

    public FloatBuffer obs32() {
      return results.obs32();
    }

    public DoubleBuffer obs64() {
      return results.obs64();
    }

    public double obs(int row, int k) {
      return results.obs(row, k);
    }

    public double reward(int row) {
      return results.reward(row);
    }

    public boolean terminated(int row) {
      return results.terminated.get(row) != 0;
    }

    public boolean truncated(int row) {
      return results.truncated.get(row) != 0;
    }

    public int resetKind(int k) {
      return results.resetKind.get(k);
    }

    public DoubleBuffer info() {
      return results.info.duplicate();
    }

    public Map<String, Object> info(int row) {
      return infoLayout.decode(results.info, row, results.resetKind.get(row / dims.num_agents) == RESET);
    }
  }

  /** One set of result buffers (the step buffers, or the batch buffers). */
  final class Results {
    final ByteBuffer obs;
    final ByteBuffer reward;
    final ByteBuffer terminated;
    final ByteBuffer truncated;
    final DoubleBuffer info;
    final ByteBuffer finalObs;
    final DoubleBuffer finalInfo;
    final ByteBuffer resetKind;
    final ByteBuffer unstable;
    final IntBuffer elapsed;
    final FloatBuffer obs32;
    final DoubleBuffer obs64;
    final FloatBuffer reward32;
    final DoubleBuffer reward64;
    final Native.Buffers pointers = new Native.Buffers();
    final Native.BufferSizes sizes = new Native.BufferSizes();

    Results(int worlds) {
      int rows = worlds * dims.num_agents;
      int real = dtype.bytes;
      obs = direct((long) rows * dims.obs_dim * real);
      reward = direct((long) rows * real);
      terminated = direct(rows);
      truncated = direct(rows);
      ByteBuffer infoBytes = direct((long) rows * dims.info_width * 8);
      info = infoBytes.asDoubleBuffer();
      finalObs = direct((long) rows * dims.obs_dim * real);
      ByteBuffer finalInfoBytes = direct((long) rows * dims.info_width * 8);
      finalInfo = finalInfoBytes.asDoubleBuffer();
      resetKind = direct(worlds);
      unstable = direct(worlds);
      ByteBuffer elapsedBytes = direct(4L * worlds);
      elapsed = elapsedBytes.asIntBuffer();
      obs32 = dtype == Dtype.FLOAT32 ? obs.asFloatBuffer() : null;
      obs64 = dtype == Dtype.FLOAT64 ? obs.asDoubleBuffer() : null;
      reward32 = dtype == Dtype.FLOAT32 ? reward.asFloatBuffer() : null;
      reward64 = dtype == Dtype.FLOAT64 ? reward.asDoubleBuffer() : null;
      long obsCount = (long) rows * dims.obs_dim;
      if (dtype == Dtype.FLOAT32) {
        pointers.obs = address(obs);
        pointers.reward = address(reward);
        pointers.final_obs = address(finalObs);
        sizes.obs = obsCount;
        sizes.reward = rows;
        sizes.final_obs = obsCount;
      } else {
        pointers.obs64 = address(obs);
        pointers.reward64 = address(reward);
        pointers.final_obs64 = address(finalObs);
        sizes.obs64 = obsCount;
        sizes.reward64 = rows;
        sizes.final_obs64 = obsCount;
      }
      pointers.terminated = address(terminated);
      pointers.truncated = address(truncated);
      pointers.info = address(infoBytes);
      pointers.final_info = address(finalInfoBytes);
      pointers.reset_kind = address(resetKind);
      pointers.unstable = address(unstable);
      pointers.elapsed = address(elapsedBytes);
      sizes.terminated = rows;
      sizes.truncated = rows;
      sizes.info = (long) rows * dims.info_width;
      sizes.final_info = (long) rows * dims.info_width;
      sizes.reset_kind = worlds;
      sizes.unstable = worlds;
      sizes.elapsed = worlds;
      pointers.write();
      sizes.write();
    }

    FloatBuffer obs32() {
      if (obs32 == null) throw layout("obs32", Dtype.FLOAT32);
      return obs32.duplicate();
    }

    DoubleBuffer obs64() {
      if (obs64 == null) throw layout("obs64", Dtype.FLOAT64);
      return obs64.duplicate();
    }

    double obs(int row, int k) {
      int i = row * dims.obs_dim + k;
      return obs32 != null ? obs32.get(i) : obs64.get(i);
    }

    double reward(int row) {
      return reward32 != null ? reward32.get(row) : reward64.get(row);
    }
  }

  private final Guard guard = new Guard("Pool");
  private final String task;
  private final long handle;
  private final Native.Dims dims = new Native.Dims();
  private final Dtype dtype;
  private final String autoresetMode;
  private final InfoLayout infoLayout;
  private final Box actionSpace;
  private final Box observationSpace;
  private final Results results;
  private final ByteBuffer actionBytes;
  private final FloatBuffer actions;
  private final Pointer actionPointer;
  private final long actionCount;
  // Async: the actions and ids of a send, the batch buffers of a recv.
  private final ByteBuffer sendBytes;
  private final FloatBuffer sendActions;
  private final Pointer sendPointer;
  private final ByteBuffer idBytes;
  private final IntBuffer sendIds;
  private final Pointer sendIdsPointer;
  private Results batchResults;
  private IntBuffer batchIds;
  private Batch batch;

  private Pool(String taskName, int numEnvs, int numThreads, Integer maxEpisodeSteps,
      String autoresetMode, int batchSize, Dtype dtype, Map<String, Object> kwargs) {
    if (dtype == null) {
      throw new JoltgymException(JoltgymException.VALUE,
          "dtype should be float32 or float64, got null");
    }
    Task t = Task.find(taskName);
    this.task = t.name();
    this.dtype = dtype;
    this.autoresetMode = autoresetMode;
    Native.Config config = new Native.Config();
    config.num_threads = numThreads;
    config.max_episode_steps = maxEpisodeSteps != null ? maxEpisodeSteps : t.maxEpisodeSteps();
    config.autoreset_mode = autoresetMode;
    config.batch_size = batchSize;
    config.dtype = dtype.cName;
    LongByReference h = new LongByReference();
    JoltgymException.check(Native.jg_pool_create_json(task, numEnvs, config,
        Json.object(kwargs), h));
    handle = h.getValue();
    try {
      JoltgymException.check(Native.jg_pool_dims(handle, dims));
      infoLayout = new InfoLayout(handle, dims);
      float[] low = new float[dims.act_dim];
      float[] high = new float[dims.act_dim];
      JoltgymException.check(Native.jg_pool_action_bounds(handle, low, high, dims.act_dim));
      double[] l = new double[low.length];
      double[] hi = new double[high.length];
      for (int i = 0; i < low.length; ++i) {
        l[i] = low[i];
        hi[i] = high[i];
      }
      actionSpace = new Box(new int[] {dims.act_dim}, l, hi, "float32");
      observationSpace = Box.of(new int[] {dims.obs_dim}, Double.NEGATIVE_INFINITY,
          Double.POSITIVE_INFINITY, dtype.cName);
      results = new Results(dims.num_envs);
      JoltgymException.check(Native.jg_pool_use_buffers(handle, results.pointers, results.sizes));
      actionCount = (long) dims.num_envs * dims.num_agents * dims.act_dim;
      actionBytes = direct(4 * actionCount);
      actions = actionBytes.asFloatBuffer();
      actionPointer = address(actionBytes);
      sendBytes = direct(4 * actionCount);
      sendActions = sendBytes.asFloatBuffer();
      sendPointer = address(sendBytes);
      idBytes = direct(4L * dims.num_envs);
      sendIds = idBytes.asIntBuffer();
      sendIdsPointer = address(idBytes);
    } catch (RuntimeException e) {
      Native.jg_pool_close(handle);
      throw e;
    }
  }

  private static ByteBuffer direct(long bytes) {
    if (bytes > Integer.MAX_VALUE - 64) {
      throw new JoltgymException(JoltgymException.OUT_OF_MEMORY,
          "a buffer of " + bytes + " bytes is more than a Java buffer holds");
    }
    // Aligned for doubles (and cache lines); zeroed like the pool's own.
    ByteBuffer raw = ByteBuffer.allocateDirect((int) bytes + 64);
    long address = Pointer.nativeValue(com.sun.jna.Native.getDirectBufferPointer(raw));
    int offset = (int) ((64 - address % 64) % 64);
    raw.position(offset).limit(offset + (int) bytes);
    return raw.slice().order(ByteOrder.nativeOrder());
  }

  private static Pointer address(ByteBuffer buffer) {
    return com.sun.jna.Native.getDirectBufferPointer(buffer);
  }

  private static JoltgymException layout(String what, Dtype needed) {
    return new JoltgymException(JoltgymException.STATE, what + " needs a pool of dtype "
        + needed + ", this pool's is " + (needed == Dtype.FLOAT32 ? "float64" : "float32"));
  }

  // -- shape ------------------------------------------------------------------------------

  /** The registry name of the task. */
  public String task() {
    return task;
  }

  public int numEnvs() {
    return dims.num_envs;
  }

  public int numAgents() {
    return dims.num_agents;
  }

  public int obsDim() {
    return dims.obs_dim;
  }

  public int actDim() {
    return dims.act_dim;
  }

  public int numThreads() {
    return dims.num_threads;
  }

  public int maxEpisodeSteps() {
    return dims.max_episode_steps;
  }

  public int batchSize() {
    return dims.batch_size;
  }

  /** Simulated seconds per step. */
  public double dt() {
    return dims.dt;
  }

  public Dtype dtype() {
    return dtype;
  }

  public String autoresetMode() {
    return autoresetMode;
  }

  /** One agent's action space (the same for every agent). */
  public Box actionSpace() {
    return actionSpace;
  }

  /** One agent's observation space (unbounded, of the pool's dtype). */
  public Box observationSpace() {
    return observationSpace;
  }

  public InfoLayout infoLayout() {
    return infoLayout;
  }

  // -- stepping -----------------------------------------------------------------------------

  /** Resets every world, world i seeded seed + i. */
  public void reset(long seed) {
    guard.enter();
    try {
      JoltgymException.check(Native.jg_pool_reset(handle, 1, seed));
    } finally {
      guard.exit();
    }
  }

  /** Resets every world, each continuing its random stream (fresh entropy if never seeded). */
  public void reset() {
    guard.enter();
    try {
      JoltgymException.check(Native.jg_pool_reset(handle, 0, 0));
    } finally {
      guard.exit();
    }
  }

  /** Resets world `index` (seeded with `seed` if not null). */
  public void resetOne(int index, Long seed) {
    guard.enter();
    try {
      JoltgymException.check(
          Native.jg_pool_reset_one(handle, index, seed != null ? 1 : 0, seed != null ? seed : 0));
    } finally {
      guard.exit();
    }
  }

  /**
   * The staged actions, [numEnvs, numAgents, actDim] float32 in native
   * memory: fill them, then {@link #step()}. The same buffer for the pool's
   * life (this returns a fresh view of it, position 0).
   */
  public FloatBuffer actions() {
    return actions.duplicate();
  }

  /** One step of every world with the staged {@link #actions()}; results in the buffers. */
  public void step() {
    guard.enter();
    try {
      JoltgymException.check(Native.jg_pool_step(handle, actionPointer, actionCount));
    } finally {
      guard.exit();
    }
  }

  /** Stages `a` (numEnvs * numAgents * actDim values) and steps. */
  public void step(float[] a) {
    guard.enter();
    try {
      if (a == null || a.length != actionCount) {
        throw new JoltgymException(JoltgymException.VALUE, "actions should hold " + actionCount
            + " values ([" + dims.num_envs + ", " + dims.num_agents + ", " + dims.act_dim
            + "]), got " + (a == null ? "null" : a.length));
      }
      actions.put(0, a);
      JoltgymException.check(Native.jg_pool_step(handle, actionPointer, actionCount));
    } finally {
      guard.exit();
    }
  }

  // -- results (the pool's buffers, written in place) ----------------------------------------

  /** Observations, [numEnvs, numAgents, obsDim] (float32 layout). */
  public FloatBuffer obs32() {
    return results.obs32();
  }

  /** Observations, [numEnvs, numAgents, obsDim] (float64 layout). */
  public DoubleBuffer obs64() {
    return results.obs64();
  }

  /** Observation element k of agent row `row`, in either layout. */
  public double obs(int row, int k) {
    return results.obs(row, k);
  }

  /** Copies agent row `row`'s observation into out (obsDim values). */
  public void obs(int row, double[] out) {
    int base = row * dims.obs_dim;
    if (results.obs64 != null) {
      results.obs64.get(base, out, 0, dims.obs_dim);
    } else {
      for (int k = 0; k < dims.obs_dim; ++k) out[k] = results.obs32.get(base + k);
    }
  }

  /** Rewards, [numEnvs, numAgents] (float32 layout). */
  public FloatBuffer reward32() {
    if (results.reward32 == null) throw layout("reward32", Dtype.FLOAT32);
    return results.reward32.duplicate();
  }

  /** Rewards, [numEnvs, numAgents] (float64 layout). */
  public DoubleBuffer reward64() {
    if (results.reward64 == null) throw layout("reward64", Dtype.FLOAT64);
    return results.reward64.duplicate();
  }

  public double reward(int row) {
    return results.reward(row);
  }

  /** Terminations, [numEnvs, numAgents], one byte each (0 or 1). */
  public ByteBuffer terminated() {
    return results.terminated.duplicate().order(ByteOrder.nativeOrder());
  }

  public boolean terminated(int row) {
    return results.terminated.get(row) != 0;
  }

  /** Truncations, [numEnvs, numAgents], one byte each. */
  public ByteBuffer truncated() {
    return results.truncated.duplicate().order(ByteOrder.nativeOrder());
  }

  public boolean truncated(int row) {
    return results.truncated.get(row) != 0;
  }

  /** Info records, [numEnvs, numAgents, infoLayout().width()] float64. */
  public DoubleBuffer info() {
    return results.info.duplicate();
  }

  /** Agent row `row`'s info as a map (reset info after a reset). */
  public Map<String, Object> info(int row) {
    return infoLayout.decode(results.info, row,
        results.resetKind.get(row / dims.num_agents) == RESET);
  }

  /** Same-step auto-reset: the ended episodes' last observations (rows whose world's resetKind is AUTORESET). */
  public ByteBuffer finalObs() {
    return results.finalObs.duplicate().order(ByteOrder.nativeOrder());
  }

  /** ... and their info records. */
  public DoubleBuffer finalInfo() {
    return results.finalInfo.duplicate();
  }

  /** Per world: {@link #STEPPED}, {@link #RESET} or {@link #AUTORESET}. */
  public ByteBuffer resetKind() {
    return results.resetKind.duplicate();
  }

  public int resetKind(int world) {
    return results.resetKind.get(world);
  }

  /** Per world: a physics blow-up ended the episode. */
  public ByteBuffer unstable() {
    return results.unstable.duplicate();
  }

  public boolean unstable(int world) {
    return results.unstable.get(world) != 0;
  }

  /** Per world: steps in the current episode. */
  public IntBuffer elapsed() {
    return results.elapsed.duplicate();
  }

  public int elapsed(int world) {
    return results.elapsed.get(world);
  }

  // -- asynchronous stepping ------------------------------------------------------------------

  /** Resets every world (seeded seed + i) and puts them all in flight. */
  public void asyncReset(long seed) {
    guard.enter();
    try {
      ensureBatch();
      JoltgymException.check(Native.jg_pool_async_reset(handle, 1, seed));
    } finally {
      guard.exit();
    }
  }

  /**
   * The staged actions of a {@link #send(int[], int)}: row k (numAgents *
   * actDim values) is the k-th id's.
   */
  public FloatBuffer sendActions() {
    return sendActions.duplicate();
  }

  /** Queues one step of the first `count` worlds of envIds with the staged {@link #sendActions()}; returns at once. */
  public void send(int[] envIds, int count) {
    guard.enter();
    try {
      if (envIds == null || count < 0 || count > envIds.length || count > dims.num_envs) {
        throw new JoltgymException(JoltgymException.VALUE, "send needs count in [0, "
            + Math.min(dims.num_envs, envIds == null ? 0 : envIds.length) + "], got " + count);
      }
      sendIds.put(0, envIds, 0, count);
      JoltgymException.check(Native.jg_pool_send(handle, sendPointer,
          (long) count * dims.num_agents * dims.act_dim, sendIdsPointer, count));
    } finally {
      guard.exit();
    }
  }

  /** Queues the batch's worlds again with the staged {@link #sendActions()} (row k for batch row k). */
  public void send(Batch received) {
    guard.enter();
    try {
      int n = dims.batch_size;
      for (int k = 0; k < n; ++k) sendIds.put(k, received.envIds.get(k));
      JoltgymException.check(Native.jg_pool_send(handle, sendPointer,
          (long) n * dims.num_agents * dims.act_dim, sendIdsPointer, n));
    } finally {
      guard.exit();
    }
  }

  /** Waits for the first batchSize worlds in flight; their results in the returned views (the same object every call). */
  public Batch recv() {
    guard.enter();
    try {
      ensureBatch();
      JoltgymException.check(Native.jg_pool_recv(handle, Pointer.NULL, Pointer.NULL));
      return batch;
    } finally {
      guard.exit();
    }
  }

  /** Worlds sent and not yet received. */
  public int inFlight() {
    guard.enter();
    try {
      int[] count = new int[1];
      JoltgymException.check(Native.jg_pool_in_flight(handle, count));
      return count[0];
    } finally {
      guard.exit();
    }
  }

  private void ensureBatch() {
    if (batch != null) return;
    Results r = new Results(dims.batch_size);
    ByteBuffer ids = direct(4L * dims.batch_size);
    JoltgymException.check(Native.jg_pool_use_batch_buffers(handle, address(ids), dims.batch_size,
        r.pointers, r.sizes));
    batchResults = r;
    batchIds = ids.asIntBuffer();
    batch = new Batch(batchResults, batchIds);
  }

  // -- frames -----------------------------------------------------------------------------------

  /**
   * An RGB frame of world `world` (height rows of width * 3 bytes, top row
   * first), as Python's {@code render()} with {@code render_mode="rgb_array"}
   * gives it: MuJoCo's renderer, headless through EGL. cameraId -1 and a
   * null cameraName: the task's default camera.
   */
  public byte[] renderRgb(int world, int width, int height, int cameraId, String cameraName) {
    guard.enter();
    try {
      Native.RenderConfig config = new Native.RenderConfig();
      config.width = width;
      config.height = height;
      config.camera_id = cameraId;
      config.camera_name = cameraName;
      long size = (long) Math.max(width, 0) * Math.max(height, 0) * 3;
      if (size > Integer.MAX_VALUE - 64) {
        throw new JoltgymException(JoltgymException.VALUE,
            "width and height should give a frame of at most 2 GB, got " + width + "x" + height);
      }
      ByteBuffer pixels = direct(size);
      JoltgymException.check(Native.jg_pool_render(handle, world, config, address(pixels), size));
      byte[] out = new byte[(int) size];
      pixels.get(0, out);
      return out;
    } finally {
      guard.exit();
    }
  }

  /** {@link #renderRgb} as a {@link BufferedImage} (TYPE_3BYTE_BGR). */
  public BufferedImage render(int world, int width, int height, int cameraId, String cameraName) {
    return toImage(renderRgb(world, width, height, cameraId, cameraName), width, height);
  }

  static BufferedImage toImage(byte[] rgb, int width, int height) {
    BufferedImage image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
    int[] row = new int[width];
    for (int y = 0; y < height; ++y) {
      int base = y * width * 3;
      for (int x = 0; x < width; ++x) {
        int i = base + 3 * x;
        row[x] = ((rgb[i] & 0xff) << 16) | ((rgb[i + 1] & 0xff) << 8) | (rgb[i + 2] & 0xff);
      }
      image.setRGB(0, y, width, 1, row, 0, width);
    }
    return image;
  }

  // -- lifecycle --------------------------------------------------------------------------------

  public boolean isClosed() {
    return guard.isClosed();
  }

  /**
   * Joins the pool's threads and frees its worlds; idempotent. Every later
   * call throws JG_ERR_STATE; buffers already handed out stay readable
   * (their last contents). From a second thread while one is inside, it
   * throws JG_ERR_BUSY.
   */
  @Override
  public void close() {
    if (guard.isClosed()) return;
    guard.enter();
    guard.closeHeld();
    JoltgymException.check(Native.jg_pool_close(handle));
  }

  @Override
  public String toString() {
    return "Pool(" + task + ", " + dims.num_envs + " worlds, " + dtype + ")";
  }
}
