/* joltgym_marl's C API: pools of MuJoCo worlds driven from C, Java (JNA),
 * C#, Rust or Go without Python. The library, libjoltgym_marl, is the same
 * native core the Python module uses (one implementation of stepping,
 * seeding, resets and argument checks).
 *
 * Conventions
 *   - Every function returns a jg_status; JG_OK (0) is success. On failure,
 *     jg_last_error() gives the message (the words of the Python exception the
 *     same mistake raises). A rejected argument changes nothing; a MuJoCo
 *     error leaves the worlds it hit failed until they are reset, as in Python.
 *   - No call aborts the process on bad input: null handles and pointers,
 *     wrong sizes, unknown tasks or keys, bad values, stale handles and calls
 *     from two threads at once give an error status. MuJoCo's own errors are
 *     JG_ERR_MUJOCO / JG_ERR_OUT_OF_MEMORY; its warnings are kept for
 *     jg_last_warnings().
 *   - Handles (jg_pool) are opaque 64-bit numbers: a slot and a generation.
 *     A closed handle stays detectably stale (JG_ERR_STATE "WorldPool is
 *     closed"); 0 is never a valid handle.
 *   - Strings returned are owned by the library: registry strings live as
 *     long as the process, a pool's strings until it is closed, the error
 *     and warning texts until the next call on the same thread.
 *
 * Thread safety
 *   - The registry functions, jg_last_error() and jg_last_warnings() may be
 *     called from any thread at any time (the error texts are per thread).
 *   - Different pools may be used from different threads at once.
 *   - One pool: calls that touch its worlds or buffers (reset, step, send,
 *     recv, async_reset, in_flight, buffers, use_buffers, batch_buffers,
 *     use_batch_buffers, close) are exclusive. If another thread is inside
 *     the same pool, such a call returns JG_ERR_BUSY at once (it never waits,
 *     so it never deadlocks), except jg_pool_close, which waits for the call
 *     in flight to finish. Queries of fixed properties (dims, action bounds,
 *     info layout) may run concurrently with anything; after close they
 *     fail like every call on the stale handle.
 *   - A pool steps its worlds on its own native threads (num_threads counts
 *     the calling thread); no callback into the caller happens on them.
 *     Between jg_pool_send and the jg_pool_recv that returns a world, those
 *     threads write that world's rows of the pool's buffers (jg_buffers):
 *     read them once the world is received (or read the batch buffers).
 *   - fork(): a pool made before the fork can be used or closed in the
 *     child (a single-threaded child); worlds that were in flight at the
 *     fork are lost there (jg_pool_recv says so, JG_ERR_STATE), and a call
 *     another parent thread was inside at the fork does not make the
 *     child's calls busy. Pools made after the fork are unaffected.
 *
 * Layout: worlds are rows, every buffer is C-contiguous: obs [num_envs,
 * num_agents, obs_dim], actions [num_envs, num_agents, act_dim],
 * reward/terminated/truncated [num_envs, num_agents], info [num_envs,
 * num_agents, info_width], reset_kind/unstable/elapsed [num_envs]. Flags are
 * bool (one byte), info records float64, actions float32. Observations and
 * rewards come in one of two layouts, chosen per pool (jg_pool_config.dtype)
 * and told by jg_dims.real_size:
 *   - "float32" (the default): jg_buffers.obs, .reward, .final_obs, float*;
 *     Python's WorldPool(..., dtype=numpy.float32): the float64 values
 *     rounded once.
 *   - "float64" (ABI 3): jg_buffers.obs64, .reward64, .final_obs64, double*;
 *     Gymnasium v5's dtypes, the default of Python's single-agent robots
 *     (bit-equal to gymnasium.make("<Name>-v5")).
 * The other layout's three pointers are NULL. World i of a pool reset with
 * seed s is seeded s + i. The batch buffers jg_pool_recv fills have the same
 * layout with batch_size rows, and env_ids [batch_size] int32.
 */
#ifndef JOLTGYM_MARL_H_
#define JOLTGYM_MARL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(JG_BUILDING_LIBRARY)
#define JG_API __attribute__((visibility("default")))
#else
#define JG_API
#endif

/* The ABI this header describes; jg_abi_version() returns the library's.
 * A program should check they are equal before any other call.
 *   1: the first.
 *   2: asynchronous stepping (jg_pool_send, jg_pool_recv, jg_pool_async_reset,
 *      jg_pool_in_flight, jg_pool_batch_buffers, jg_pool_use_batch_buffers);
 *      jg_pool_config and jg_dims each gained a last field, batch_size, so a
 *      program built for version 1 must be rebuilt.
 *   3: the float64 layout: jg_pool_config.dtype, jg_dims.real_size, and
 *      jg_buffers / jg_buffer_sizes' obs64, reward64, final_obs64 (new last
 *      fields: a program built for version 2 must be rebuilt).
 *   4: frames: jg_pool_render and jg_render_config (nothing else changed: a
 *      program built for version 3 runs unchanged). */
#define JG_ABI_VERSION 4

typedef enum jg_status {
  JG_OK = 0,
  JG_ERR_VALUE = 1,          /* a bad value (Python: ValueError) */
  JG_ERR_TYPE = 2,           /* a wrong kind or unknown keyword (TypeError) */
  JG_ERR_INDEX = 3,          /* an index out of range (IndexError) */
  JG_ERR_STATE = 4,          /* wrong lifecycle: before reset, after close, failed world */
  JG_ERR_FILE_NOT_FOUND = 5, /* a model file that does not exist (FileNotFoundError) */
  JG_ERR_MUJOCO = 6,         /* MuJoCo raised an error (joltgym_marl.MujocoError) */
  JG_ERR_OUT_OF_MEMORY = 7,  /* out of memory (MemoryError) */
  JG_ERR_HANDLE = 8,         /* a null handle, or a number that never was a handle */
  JG_ERR_BUSY = 9,           /* another thread is inside this pool */
  JG_ERR_NULL = 10,          /* a required pointer argument is NULL */
  JG_ERR_INTERNAL = 11       /* anything else (a bug: please report it) */
} jg_status;

/* An open pool: 0 is never valid. */
typedef uint64_t jg_pool;

/* ---- library --------------------------------------------------------------- */

JG_API uint32_t jg_abi_version(void);
/* The library's version ("0.1.0") and MuJoCo's ("3.x.y"). */
JG_API const char* jg_version(void);
JG_API const char* jg_mujoco_version(void);
/* "JG_ERR_VALUE", ... ("unknown status" otherwise). */
JG_API const char* jg_status_name(jg_status status);
/* The message of the last failed call on this thread ("" after a success). */
JG_API const char* jg_last_error(void);
/* MuJoCo's warnings during the last call on this thread, one per line ("" if
 * none); the Python module raises these as MujocoWarning. */
JG_API const char* jg_last_warnings(void);
/* Folder where bare model file names (xml_file="ant.xml") are looked up. The
 * default is the `assets` folder beside the library (the wheel's layout),
 * else the source tree's it was built from. Call it before creating pools
 * (not while another thread creates one). */
JG_API jg_status jg_set_asset_dir(const char* path);

/* ---- the task registry ----------------------------------------------------- */

typedef struct jg_task_info {
  const char* name;          /* "half_cheetah" */
  const char* kind;          /* "single_agent" or "game" */
  const char* title;         /* "HalfCheetah" */
  const char* env_id;        /* "joltgym_marl/HalfCheetah-v0" or "sumo_v0" */
  const char* reference_id;  /* "HalfCheetah-v5", or "" */
  const char* agent_prefix;  /* games: agents are "<prefix>_<k>" */
  int32_t max_episode_steps; /* the task's truncation (max_cycles of games) */
  int32_t num_params;        /* keyword arguments, see jg_task_param */
  const char* doc;           /* action / observation / reward / info tables */
} jg_task_info;

typedef struct jg_param_info {
  const char* name;          /* "forward_reward_weight" */
  const char* kind;          /* "float", "int", "bool", "range", "str", "body", "optional_float" */
  const char* default_json;  /* the default as JSON: 1.0, [0.7, "inf"], "ant.xml", null */
  const char* doc;
} jg_param_info;

JG_API jg_status jg_task_count(int32_t* count);
/* index in [0, count), in name order. */
JG_API jg_status jg_task_name(int32_t index, const char** name);
JG_API jg_status jg_task_info_get(const char* task, jg_task_info* info);
JG_API jg_status jg_task_param(const char* task, int32_t index, jg_param_info* param);
/* The whole registry as one JSON object: name -> {name, kind, title, env_id,
 * reference_id, agent_prefix, max_episode_steps, params: [{name, kind,
 * default, doc}]} (without the docs' tables, which jg_task_info_get gives). */
JG_API jg_status jg_tasks_json(const char** json);

/* ---- pools ------------------------------------------------------------------ */

typedef struct jg_pool_config {
  int32_t num_threads;        /* 0: as many as the CPUs this process may use (capped at num_envs) */
  int32_t max_episode_steps;  /* truncation; 0: never (Python's default is 1000) */
  const char* autoreset_mode; /* "next_step" (NULL) or "same_step" */
  int32_t batch_size;         /* worlds per jg_pool_recv, in [1, num_envs]; 0: num_envs (ABI 2) */
  const char* dtype;          /* observations and rewards: "float32" (NULL) or "float64" (ABI 3) */
} jg_pool_config;

/* A pool of num_envs worlds of `task` with keyword arguments given as
 * key/value strings. Each value is read as JSON (0.5, true, [0.1, 0.5],
 * "ant.xml", null; "inf" and "-inf" as numbers in a range); a value that is
 * not JSON is taken as a string (xml_file=ant.xml). `config` may be NULL
 * (num_threads 0, max_episode_steps 1000, "next_step", batch_size 0,
 * "float32"). */
JG_API jg_status jg_pool_create(const char* task, int32_t num_envs, const jg_pool_config* config,
                                const char* const* keys, const char* const* values,
                                int32_t num_kwargs, jg_pool* pool);
/* The same with the keyword arguments as one JSON object ("{}" or NULL: none). */
JG_API jg_status jg_pool_create_json(const char* task, int32_t num_envs,
                                     const jg_pool_config* config, const char* kwargs_json,
                                     jg_pool* pool);
/* Joins the pool's threads and frees its worlds and buffers (pointers from
 * jg_pool_buffers and jg_pool_batch_buffers become invalid). Worlds in
 * flight are dropped (each worker finishes the world it is stepping); that
 * is no error. Closing a closed handle is JG_ERR_STATE. */
JG_API jg_status jg_pool_close(jg_pool pool);

typedef struct jg_dims {
  int32_t num_envs;
  int32_t num_agents;
  int32_t obs_dim;     /* per agent */
  int32_t act_dim;     /* per agent */
  int32_t info_width;  /* float64 values per agent's info record */
  int32_t num_info_fields;
  int32_t num_threads;
  int32_t max_episode_steps;
  double dt;           /* simulated seconds per step */
  int32_t batch_size;  /* worlds per jg_pool_recv (ABI 2) */
  int32_t real_size;   /* bytes per observation and reward value: 4 (float32
                          layout: obs, reward, final_obs) or 8 (float64 layout:
                          obs64, reward64, final_obs64) (ABI 3) */
} jg_dims;

JG_API jg_status jg_pool_dims(jg_pool pool, jg_dims* dims);
/* Per-agent action bounds, act_dim values each (float32, as in Python). */
JG_API jg_status jg_pool_action_bounds(jg_pool pool, float* low, float* high, size_t count);

/* The info record: fields of `size` float64 values at `offset` in each
 * agent's row (Python's InfoDecoder reads them the same way). */
typedef enum jg_info_kind {
  JG_INFO_REAL = 0,     /* a float (an array when size > 1) */
  JG_INFO_INTEGER = 1,  /* an integer stored as a float64 */
  JG_INFO_LABEL = 2     /* an index into the field's labels ("win", ...) */
} jg_info_kind;

typedef struct jg_info_field {
  const char* name;
  int32_t offset;
  int32_t size;
  int32_t at_reset;     /* 1: also written by resets */
  int32_t kind;         /* a jg_info_kind */
  int32_t num_labels;
} jg_info_field;

JG_API jg_status jg_pool_info_field(jg_pool pool, int32_t index, jg_info_field* field);
JG_API jg_status jg_pool_info_label(jg_pool pool, int32_t field, int32_t label, const char** text);

/* What a call did to each world (jg_buffers.reset_kind). */
enum { JG_STEPPED = 0, JG_RESET = 1, JG_AUTORESET = 2 };

/* The buffers a pool writes results into. A pool uses either obs, reward
 * and final_obs (float32 layout) or obs64, reward64 and final_obs64 (float64
 * layout); the other three are NULL (see Layout above). */
typedef struct jg_buffers {
  float* obs;
  float* reward;
  bool* terminated;
  bool* truncated;
  double* info;
  float* final_obs;     /* same_step auto-reset: the ended episode's last obs */
  double* final_info;   /* ... and info */
  uint8_t* reset_kind;  /* per world: JG_STEPPED, JG_RESET or JG_AUTORESET */
  bool* unstable;       /* per world: a physics blow-up ended the episode */
  int32_t* elapsed;     /* per world: steps in the current episode */
  double* obs64;        /* float64 layout (ABI 3): obs, */
  double* reward64;     /* reward */
  double* final_obs64;  /* and final_obs */
} jg_buffers;

/* Element counts of caller-provided buffers (same fields as jg_buffers). */
typedef struct jg_buffer_sizes {
  size_t obs, reward, terminated, truncated, info, final_obs, final_info, reset_kind, unstable,
      elapsed, obs64, reward64, final_obs64;
} jg_buffer_sizes;

/* The buffers in use. The pool's own stay at the same addresses, with
 * contents updated by every reset and step, until the pool is closed:
 * read them in place (zero-copy), e.g. through Java direct ByteBuffers. */
JG_API jg_status jg_pool_buffers(jg_pool pool, jg_buffers* buffers);
/* Makes the pool write into the caller's memory from now on (zero-copy the
 * other way): each non-NULL field of `buffers` replaces the pool's own and
 * must hold at least the elements the layout needs (`sizes`, required when
 * `buffers` is given; a field of the layout the pool does not use must be
 * NULL); the current contents are copied over. The memory
 * must stay valid until the next jg_pool_use_buffers or close. NULL
 * `buffers` goes back to the pool's own (contents copied back).
 * JG_ERR_STATE while worlds are in flight (their results are being
 * written). */
JG_API jg_status jg_pool_use_buffers(jg_pool pool, const jg_buffers* buffers,
                                     const jg_buffer_sizes* sizes);

/* Resets every world. With has_seed, world i is seeded seed + i; without,
 * each world continues its random stream (fresh entropy for a world never
 * seeded), as Python's reset_all(seed=None). */
JG_API jg_status jg_pool_reset(jg_pool pool, int32_t has_seed, uint64_t seed);
/* Resets world `index` (seeded `seed` with has_seed); JG_ERR_STATE while
 * that world is in flight. */
JG_API jg_status jg_pool_reset_one(jg_pool pool, int32_t index, int32_t has_seed, uint64_t seed);
/* One step of every world. `actions` is [num_envs, num_agents, act_dim]
 * float32 (`count` values, checked; non-finite values are rejected), copied
 * before the worlds step. Results are in the buffers. JG_ERR_STATE while
 * worlds are in flight. */
JG_API jg_status jg_pool_step(jg_pool pool, const float* actions, size_t count);

/* ---- asynchronous stepping (ABI 2) -------------------------------------------
 * EnvPool's send/recv, Python's WorldPool.send / recv / async_reset: send
 * queues one step of some worlds and returns at once, the pool's threads
 * step them while the caller works, and recv returns the first batch_size
 * worlds to finish with their results. A world is "in flight" from the send
 * (or async_reset) that queues it until the recv that returns it. Each
 * world's results depend only on its seed and its actions, never on the
 * batching or the timing: bit-identical to jg_pool_step's.
 *
 *   jg_pool_async_reset(pool, 1, seed);            every world in flight
 *   for (;;) {
 *     jg_pool_recv(pool, &ids, &batch);            batch_size worlds
 *     ...actions[k] from batch.obs row k, for world ids[k]...
 *     jg_pool_send(pool, actions, count, ids, batch_size);
 *   }
 *
 * Worlds run at their own pace: recv needs batch_size of them in flight, so
 * to receive every world's n-th step keep sending the worlds that are
 * through (examples/c/async_rollout.c does). */

/* Queues one step of each of the `num_ids` worlds in `env_ids` (distinct,
 * in [0, num_envs), reset, not in flight) and returns at once. `actions` is
 * [num_ids, num_agents, act_dim] float32 (`count` values, checked; row k is
 * world env_ids[k]'s), copied before the call returns. A rejected call
 * queues nothing. */
JG_API jg_status jg_pool_send(jg_pool pool, const float* actions, size_t count,
                              const int32_t* env_ids, size_t num_ids);
/* Waits for the first batch_size worlds in flight to finish (stepping queued
 * ones on the calling thread meanwhile) and writes their results into the
 * batch buffers: row k of each is world env_ids[k]'s (jg_buffers layout with
 * batch_size rows instead of num_envs; final_obs/final_info only in rows
 * whose reset_kind is JG_AUTORESET). `env_ids` and `batch`, either may be
 * NULL, receive the batch buffers' addresses, which stay put like the
 * pool's buffers (jg_pool_batch_buffers gives them too). JG_ERR_STATE if
 * fewer than batch_size worlds are in flight. A MuJoCo error in a received
 * world (JG_ERR_MUJOCO, JG_ERR_OUT_OF_MEMORY) still returns the batch: the
 * failed world is no longer in flight and waits for a reset. */
JG_API jg_status jg_pool_recv(jg_pool pool, int32_t** env_ids, jg_buffers* batch);
/* jg_pool_reset, then every world in flight with its reset observation:
 * recv returns worlds 0 .. batch_size-1, then the next batch_size, ... */
JG_API jg_status jg_pool_async_reset(jg_pool pool, int32_t has_seed, uint64_t seed);
/* Worlds sent (or async_reset) and not yet received. */
JG_API jg_status jg_pool_in_flight(jg_pool pool, int32_t* count);
/* The batch buffers recv writes (the pool's own unless replaced). */
JG_API jg_status jg_pool_batch_buffers(jg_pool pool, int32_t** env_ids, jg_buffers* batch);
/* Makes recv write into the caller's memory, as jg_pool_use_buffers does
 * for the step buffers: a non-NULL `env_ids` (room for `env_ids_count`
 * ids, at least batch_size) and each non-NULL field of `batch` (sizes in
 * `sizes`, for batch_size rows) replace the pool's own; NULL `env_ids` and
 * NULL `batch` go back to the pool's own. The current contents are copied
 * over; the memory must stay valid until the next call of this or close. */
JG_API jg_status jg_pool_use_batch_buffers(jg_pool pool, int32_t* env_ids, size_t env_ids_count,
                                           const jg_buffers* batch, const jg_buffer_sizes* sizes);

/* ---- frames (ABI 4) ------------------------------------------------------------
 * An RGB frame of one world of a single-agent task, equal pixel for pixel to
 * Python's env.render() with render_mode="rgb_array" (Gymnasium's
 * MujocoRenderer under MUJOCO_GL=egl) for the same state: MuJoCo's renderer in
 * a headless EGL context, the v5 env's default camera, its size. Each world
 * keeps its renderer (and its free camera, placed on the first frame from the
 * state then, as Python's) until the pool is closed or a frame of another
 * size or camera is asked for. EGL is opened at run time (libEGL.so.1 and
 * libOpenGL.so.0 or libGL.so.1; Debian's libegl1 and libgl1-mesa-dri): the
 * library builds and runs without it, and a frame then fails with
 * JG_ERR_STATE and a message naming what is missing. Games are refused
 * (JG_ERR_VALUE): Python colours their agents and follows the leader. */
typedef struct jg_render_config {
  int32_t width;            /* pixels, in [1, 16384] (Python's default: 480) */
  int32_t height;           /* pixels, in [1, 16384] (480) */
  int32_t camera_id;        /* -1: the free camera of the v5 env; else a model camera */
  const char* camera_name;  /* NULL or a model camera's name (not with camera_id >= 0) */
} jg_render_config;

/* Renders world `index` (not in flight) into `rgb`: height rows of width * 3
 * bytes (RGB), top row first; `size` must be height * width * 3. The world is
 * not changed. */
JG_API jg_status jg_pool_render(jg_pool pool, int32_t index, const jg_render_config* config,
                                uint8_t* rgb, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* JOLTGYM_MARL_H_ */
