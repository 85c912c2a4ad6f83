package joltgym;

import com.sun.jna.Pointer;
import com.sun.jna.Structure;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;

/**
 * The C API (include/joltgym_marl.h) bound by JNA's direct mapping, the
 * fastest JNA calls. Package-private: the public classes check every status
 * and turn failures into {@link JoltgymException}s.
 *
 * <p>The library is found through {@code -Djna.library.path} (or {@code
 * joltgym.library}, a full path to {@code libjoltgym_marl.so}).
 */
final class Native {
  static final int ABI_VERSION = 4;

  static {
    String path = System.getProperty("joltgym.library");
    com.sun.jna.Native.register(Native.class, path != null ? path : "joltgym_marl");
    int abi = jg_abi_version();
    if (abi != ABI_VERSION) {
      throw new UnsatisfiedLinkError("libjoltgym_marl has ABI " + abi
          + ", this library was written for ABI " + ABI_VERSION);
    }
  }

  private Native() {}

  /** jg_pool_config. */
  @Structure.FieldOrder({"num_threads", "max_episode_steps", "autoreset_mode", "batch_size",
      "dtype"})
  public static class Config extends Structure {
    public int num_threads;
    public int max_episode_steps;
    public String autoreset_mode;
    public int batch_size;
    public String dtype;
  }

  /** jg_dims. */
  @Structure.FieldOrder({"num_envs", "num_agents", "obs_dim", "act_dim", "info_width",
      "num_info_fields", "num_threads", "max_episode_steps", "dt", "batch_size", "real_size"})
  public static class Dims extends Structure {
    public int num_envs;
    public int num_agents;
    public int obs_dim;
    public int act_dim;
    public int info_width;
    public int num_info_fields;
    public int num_threads;
    public int max_episode_steps;
    public double dt;
    public int batch_size;
    public int real_size;
  }

  /** jg_buffers: one pointer per result buffer. */
  @Structure.FieldOrder({"obs", "reward", "terminated", "truncated", "info", "final_obs",
      "final_info", "reset_kind", "unstable", "elapsed", "obs64", "reward64", "final_obs64"})
  public static class Buffers extends Structure {
    public Pointer obs;
    public Pointer reward;
    public Pointer terminated;
    public Pointer truncated;
    public Pointer info;
    public Pointer final_obs;
    public Pointer final_info;
    public Pointer reset_kind;
    public Pointer unstable;
    public Pointer elapsed;
    public Pointer obs64;
    public Pointer reward64;
    public Pointer final_obs64;
  }

  /** jg_buffer_sizes: element counts (size_t, 64-bit here). */
  @Structure.FieldOrder({"obs", "reward", "terminated", "truncated", "info", "final_obs",
      "final_info", "reset_kind", "unstable", "elapsed", "obs64", "reward64", "final_obs64"})
  public static class BufferSizes extends Structure {
    public long obs;
    public long reward;
    public long terminated;
    public long truncated;
    public long info;
    public long final_obs;
    public long final_info;
    public long reset_kind;
    public long unstable;
    public long elapsed;
    public long obs64;
    public long reward64;
    public long final_obs64;
  }

  /** jg_task_info. */
  @Structure.FieldOrder({"name", "kind", "title", "env_id", "reference_id", "agent_prefix",
      "max_episode_steps", "num_params", "doc"})
  public static class TaskInfo extends Structure {
    public String name;
    public String kind;
    public String title;
    public String env_id;
    public String reference_id;
    public String agent_prefix;
    public int max_episode_steps;
    public int num_params;
    public String doc;
  }

  /** jg_param_info. */
  @Structure.FieldOrder({"name", "kind", "default_json", "doc"})
  public static class ParamInfo extends Structure {
    public String name;
    public String kind;
    public String default_json;
    public String doc;
  }

  /** jg_info_field. */
  @Structure.FieldOrder({"name", "offset", "size", "at_reset", "kind", "num_labels"})
  public static class InfoField extends Structure {
    public String name;
    public int offset;
    public int size;
    public int at_reset;
    public int kind;
    public int num_labels;
  }

  /** jg_render_config (ABI 4). */
  @Structure.FieldOrder({"width", "height", "camera_id", "camera_name"})
  public static class RenderConfig extends Structure {
    public int width;
    public int height;
    public int camera_id;
    public String camera_name;
  }

  static native int jg_abi_version();
  static native String jg_version();
  static native String jg_mujoco_version();
  static native String jg_status_name(int status);
  static native String jg_last_error();
  static native String jg_last_warnings();
  static native int jg_set_asset_dir(String path);

  static native int jg_task_count(int[] count);
  static native int jg_task_name(int index, PointerByReference name);
  static native int jg_task_info_get(String task, TaskInfo info);
  static native int jg_task_param(String task, int index, ParamInfo param);

  static native int jg_pool_create_json(String task, int numEnvs, Config config, String kwargsJson,
      LongByReference pool);
  static native int jg_pool_close(long pool);
  static native int jg_pool_dims(long pool, Dims dims);
  static native int jg_pool_action_bounds(long pool, float[] low, float[] high, long count);
  static native int jg_pool_info_field(long pool, int index, InfoField field);
  static native int jg_pool_info_label(long pool, int field, int label, PointerByReference text);
  static native int jg_pool_use_buffers(long pool, Buffers buffers, BufferSizes sizes);
  static native int jg_pool_reset(long pool, int hasSeed, long seed);
  static native int jg_pool_reset_one(long pool, int index, int hasSeed, long seed);
  static native int jg_pool_step(long pool, Pointer actions, long count);
  static native int jg_pool_send(long pool, Pointer actions, long count, Pointer envIds,
      long numIds);
  static native int jg_pool_recv(long pool, Pointer envIds, Pointer batch);
  static native int jg_pool_async_reset(long pool, int hasSeed, long seed);
  static native int jg_pool_in_flight(long pool, int[] count);
  static native int jg_pool_use_batch_buffers(long pool, Pointer envIds, long envIdsCount,
      Buffers batch, BufferSizes sizes);
  static native int jg_pool_render(long pool, int index, RenderConfig config, Pointer rgb,
      long size);
}
