/* Bad input through the C API, for the sanitized run (tests/test_capi.py
 * builds this with -fsanitize=address,undefined against the sanitized
 * library, and runs it with leak checking on): every call must return the
 * expected status with a message, and nothing may crash, leak or touch freed
 * memory. Prints one line per check; exits non-zero on the first failure. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "joltgym_marl.h"

static int failures = 0;

static void expect(jg_status got, jg_status want, const char* what) {
  const char* message = jg_last_error();
  const int ok = got == want && (want == JG_OK || (message != NULL && message[0] != '\0'));
  printf("%s %s: %s (%s)\n", ok ? "ok" : "FAIL", what, jg_status_name(got), message);
  if (!ok) ++failures;
}

typedef struct {
  jg_pool pool;
  const float* actions;
  size_t count;
  int ok, busy, other;
} Stepper;

static void* step_many(void* arg) {
  Stepper* s = arg;
  for (int i = 0; i < 200; ++i) {
    const jg_status status = jg_pool_step(s->pool, s->actions, s->count);
    if (status == JG_OK) ++s->ok;
    else if (status == JG_ERR_BUSY) ++s->busy;
    else ++s->other;
  }
  return NULL;
}

int main(void) {
  jg_pool pool = 0;
  jg_dims dims;
  jg_buffers buffers;
  jg_info_field field;
  const char* text = NULL;
  float bound[64];

  /* registry */
  expect(jg_task_count(NULL), JG_ERR_NULL, "task count into NULL");
  expect(jg_task_name(-1, &text), JG_ERR_INDEX, "task name -1");
  expect(jg_task_name(100000, &text), JG_ERR_INDEX, "task name 100000");
  expect(jg_task_info_get(NULL, NULL), JG_ERR_NULL, "task info of NULL");
  jg_task_info info;
  expect(jg_task_info_get("no_such_task", &info), JG_ERR_VALUE, "task info of an unknown task");
  jg_param_info param;
  expect(jg_task_param("half_cheetah", 999, &param), JG_ERR_INDEX, "param 999");
  expect(jg_set_asset_dir("/no/such/folder"), JG_ERR_FILE_NOT_FOUND, "asset dir missing");

  /* creation */
  expect(jg_pool_create(NULL, 4, NULL, NULL, NULL, 0, &pool), JG_ERR_NULL, "create NULL task");
  expect(jg_pool_create("half_cheetah", 4, NULL, NULL, NULL, 0, NULL), JG_ERR_NULL, "create into NULL");
  expect(jg_pool_create("no_such_task", 4, NULL, NULL, NULL, 0, &pool), JG_ERR_VALUE, "unknown task");
  expect(jg_pool_create("half_cheetah", 0, NULL, NULL, NULL, 0, &pool), JG_ERR_VALUE, "num_envs 0");
  expect(jg_pool_create("half_cheetah", 1 << 30, NULL, NULL, NULL, 0, &pool), JG_ERR_VALUE, "num_envs 2^30");
  jg_pool_config bad_mode = {0, 1000, "sometimes", 0, NULL};
  expect(jg_pool_create("half_cheetah", 4, &bad_mode, NULL, NULL, 0, &pool), JG_ERR_VALUE, "autoreset mode");
  jg_pool_config bad_threads = {-3, 1000, NULL, 0, NULL};
  expect(jg_pool_create("half_cheetah", 4, &bad_threads, NULL, NULL, 0, &pool), JG_ERR_VALUE, "num_threads -3");
  jg_pool_config bad_steps = {0, -1, NULL, 0, NULL};
  expect(jg_pool_create("half_cheetah", 4, &bad_steps, NULL, NULL, 0, &pool), JG_ERR_VALUE, "max_episode_steps -1");
  const char* keys[] = {"no_such_key"};
  const char* values[] = {"1"};
  expect(jg_pool_create("half_cheetah", 4, NULL, keys, values, 1, &pool), JG_ERR_TYPE, "unknown key");
  expect(jg_pool_create("half_cheetah", 4, NULL, NULL, values, 1, &pool), JG_ERR_NULL, "NULL keys");
  expect(jg_pool_create("half_cheetah", 4, NULL, keys, values, -1, &pool), JG_ERR_VALUE, "num_kwargs -1");
  const char* null_key[] = {NULL};
  expect(jg_pool_create("half_cheetah", 4, NULL, null_key, values, 1, &pool), JG_ERR_NULL, "NULL key");
  const char* weight[] = {"forward_reward_weight"};
  const char* word[] = {"heavy"};
  expect(jg_pool_create("half_cheetah", 4, NULL, weight, word, 1, &pool), JG_ERR_TYPE, "a word for a float");
  const char* huge[] = {"1e300"};
  expect(jg_pool_create("half_cheetah", 4, NULL, weight, huge, 1, &pool), JG_ERR_VALUE, "1e300 for a float");
  const char* nan_value[] = {"NaN"};
  expect(jg_pool_create("half_cheetah", 4, NULL, weight, nan_value, 1, &pool), JG_ERR_TYPE, "NaN (a word)");
  const char* xml[] = {"xml_file"};
  const char* missing[] = {"/no/such/model.xml"};
  expect(jg_pool_create("half_cheetah", 4, NULL, xml, missing, 1, &pool), JG_ERR_FILE_NOT_FOUND, "missing model");
  const char* twice_keys[] = {"ctrl_cost_weight", "ctrl_cost_weight"};
  const char* twice_values[] = {"0.1", "0.2"};
  expect(jg_pool_create("half_cheetah", 4, NULL, twice_keys, twice_values, 2, &pool), JG_ERR_TYPE, "key twice");
  expect(jg_pool_create_json("half_cheetah", 4, NULL, "{\"frame_skip\": ", &pool), JG_ERR_VALUE, "truncated JSON");
  expect(jg_pool_create_json("half_cheetah", 4, NULL, "[1, 2]", &pool), JG_ERR_TYPE, "JSON array");
  expect(jg_pool_create_json("half_cheetah", 4, NULL, "{\"frame_skip\": 2.5}", &pool), JG_ERR_TYPE, "float for an int");
  expect(jg_pool_create_json("half_cheetah", 4, NULL, "{\"frame_skip\": 99999999999999999999999}", &pool),
         JG_ERR_VALUE, "huge int");
  expect(jg_pool_create_json("hopper", 4, NULL, "{\"healthy_z_range\": [2, 1]}", &pool), JG_ERR_VALUE,
         "range low > high");
  expect(jg_pool_create_json("hopper", 4, NULL, "{\"healthy_z_range\": [1]}", &pool), JG_ERR_TYPE, "range of one");
  char deep[400];
  memset(deep, '[', sizeof(deep) - 1);
  deep[sizeof(deep) - 1] = '\0';
  expect(jg_pool_create_json("half_cheetah", 4, NULL, deep, &pool), JG_ERR_VALUE, "deeply nested JSON");

  /* handles */
  expect(jg_pool_dims(0, &dims), JG_ERR_HANDLE, "dims of handle 0");
  expect(jg_pool_dims(0x1234567800000001ull, &dims), JG_ERR_HANDLE, "dims of a made-up handle");
  expect(jg_pool_step(0, NULL, 0), JG_ERR_HANDLE, "step handle 0");
  expect(jg_pool_close(0), JG_ERR_HANDLE, "close handle 0");

  expect(jg_pool_create_json("half_cheetah", 4, NULL, "{\"ctrl_cost_weight\": 0.2}", &pool), JG_OK, "create");
  expect(jg_pool_dims(pool, NULL), JG_ERR_NULL, "dims into NULL");
  expect(jg_pool_dims(pool, &dims), JG_OK, "dims");
  expect(jg_pool_action_bounds(pool, bound, bound, 5), JG_ERR_VALUE, "bounds count 5");
  expect(jg_pool_action_bounds(pool, NULL, bound, 6), JG_ERR_NULL, "bounds into NULL");
  expect(jg_pool_info_field(pool, 99, &field), JG_ERR_INDEX, "info field 99");
  expect(jg_pool_info_field(pool, 0, NULL), JG_ERR_NULL, "info field into NULL");
  expect(jg_pool_info_label(pool, 0, 0, &text), JG_ERR_INDEX, "label of a real field");
  expect(jg_pool_buffers(pool, NULL), JG_ERR_NULL, "buffers into NULL");
  expect(jg_pool_buffers(pool, &buffers), JG_OK, "buffers");

  const size_t count = (size_t)dims.num_envs * dims.num_agents * dims.act_dim;
  float* actions = calloc(count, sizeof(float));
  expect(jg_pool_step(pool, actions, count), JG_ERR_STATE, "step before reset");
  expect(jg_pool_reset_one(pool, 4, 0, 0), JG_ERR_INDEX, "reset_one(4) of 4 worlds");
  expect(jg_pool_reset_one(pool, -1, 0, 0), JG_ERR_INDEX, "reset_one(-1)");
  expect(jg_pool_reset(pool, 1, 7), JG_OK, "reset");
  expect(jg_pool_step(pool, NULL, count), JG_ERR_VALUE, "step NULL actions");
  expect(jg_pool_step(pool, actions, count - 1), JG_ERR_VALUE, "step short actions");
  expect(jg_pool_step(pool, actions, count + 1), JG_ERR_VALUE, "step long actions");
  actions[3] = NAN;
  expect(jg_pool_step(pool, actions, count), JG_ERR_VALUE, "step NaN action");
  actions[3] = INFINITY;
  expect(jg_pool_step(pool, actions, count), JG_ERR_VALUE, "step inf action");
  actions[3] = 0.0f;
  expect(jg_pool_step(pool, actions, count), JG_OK, "step");

  /* caller-provided buffers */
  float small_obs[3];
  jg_buffers mine = {0};
  jg_buffer_sizes sizes = {0};
  mine.obs = small_obs;
  sizes.obs = 3;
  expect(jg_pool_use_buffers(pool, &mine, &sizes), JG_ERR_VALUE, "short obs buffer");
  expect(jg_pool_use_buffers(pool, &mine, NULL), JG_ERR_NULL, "buffers without sizes");
  const size_t obs_count = (size_t)dims.num_envs * dims.num_agents * dims.obs_dim;
  float* my_obs = calloc(obs_count, sizeof(float));
  mine.obs = my_obs;
  sizes.obs = obs_count;
  expect(jg_pool_use_buffers(pool, &mine, &sizes), JG_OK, "caller's obs buffer");
  expect(jg_pool_step(pool, actions, count), JG_OK, "step into the caller's buffer");
  expect(jg_pool_use_buffers(pool, NULL, NULL), JG_OK, "back to the pool's buffers");
  free(my_obs);  /* the pool must not write there any more */
  expect(jg_pool_step(pool, actions, count), JG_OK, "step after going back");

  /* the float64 layout: obs64/reward64/final_obs64, the float32 fields NULL */
  {
    jg_pool wide = 0;
    jg_pool_config bad_dtype = {0, 1000, NULL, 0, "float16"};
    expect(jg_pool_create("half_cheetah", 2, &bad_dtype, NULL, NULL, 0, &wide), JG_ERR_VALUE,
           "dtype float16");
    jg_pool_config f64 = {1, 1000, "same_step", 0, "float64"};
    expect(jg_pool_create("half_cheetah", 2, &f64, NULL, NULL, 0, &wide), JG_OK, "float64 pool");
    jg_dims wd;
    jg_buffers wb;
    expect(jg_pool_dims(wide, &wd), JG_OK, "float64 dims");
    expect(jg_pool_buffers(wide, &wb), JG_OK, "float64 buffers");
    if (wd.real_size != 8 || wb.obs != NULL || wb.reward != NULL || wb.final_obs != NULL ||
        wb.obs64 == NULL || wb.reward64 == NULL || wb.final_obs64 == NULL) {
      printf("FAIL float64 layout: real_size %d\n", wd.real_size);
      ++failures;
    }
    expect(jg_pool_reset(wide, 1, 3), JG_OK, "float64 reset");
    float wide_actions[12] = {0};
    expect(jg_pool_step(wide, wide_actions, 12), JG_OK, "float64 step");
    const size_t wide_obs = (size_t)wd.num_envs * wd.num_agents * wd.obs_dim;
    double* my_obs64 = calloc(wide_obs, sizeof(double));
    jg_buffers wide_mine = {0};
    jg_buffer_sizes wide_sizes = {0};
    wide_mine.obs = small_obs;
    wide_sizes.obs = 3;
    expect(jg_pool_use_buffers(wide, &wide_mine, &wide_sizes), JG_ERR_VALUE, "float32 obs to float64");
    wide_mine.obs = NULL;
    wide_mine.obs64 = my_obs64;
    wide_sizes.obs64 = wide_obs - 1;
    expect(jg_pool_use_buffers(wide, &wide_mine, &wide_sizes), JG_ERR_VALUE, "short obs64 buffer");
    wide_sizes.obs64 = wide_obs;
    expect(jg_pool_use_buffers(wide, &wide_mine, &wide_sizes), JG_OK, "caller's obs64 buffer");
    expect(jg_pool_step(wide, wide_actions, 12), JG_OK, "step into the caller's obs64");
    expect(jg_pool_use_buffers(wide, NULL, NULL), JG_OK, "back to the pool's obs64");
    free(my_obs64);
    expect(jg_pool_step(wide, wide_actions, 12), JG_OK, "float64 step after going back");
    jg_buffers f32_with_64 = {0};
    jg_buffer_sizes f32_sizes = {0};
    double one[64];
    f32_with_64.reward64 = one;
    f32_sizes.reward64 = 64;
    expect(jg_pool_use_buffers(pool, &f32_with_64, &f32_sizes), JG_ERR_VALUE, "reward64 to float32");
    expect(jg_pool_close(wide), JG_OK, "close float64 pool");
  }

  /* two threads in one pool: each call either runs or is refused as busy */
  Stepper a = {pool, actions, count, 0, 0, 0}, b = {pool, actions, count, 0, 0, 0};
  pthread_t ta, tb;
  pthread_create(&ta, NULL, step_many, &a);
  pthread_create(&tb, NULL, step_many, &b);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  printf("%s two threads: %d ok, %d busy, %d other\n", a.other + b.other == 0 ? "ok" : "FAIL",
         a.ok + b.ok, a.busy + b.busy, a.other + b.other);
  if (a.other + b.other != 0 || a.ok + b.ok == 0) ++failures;

  /* asynchronous stepping: send / recv */
  {
    jg_pool async = 0;
    jg_pool_config bad_batch = {0, 1000, NULL, 5, NULL};
    expect(jg_pool_create("half_cheetah", 4, &bad_batch, NULL, NULL, 0, &async), JG_ERR_VALUE,
           "batch_size 5 of 4 worlds");
    bad_batch.batch_size = -1;
    expect(jg_pool_create("half_cheetah", 4, &bad_batch, NULL, NULL, 0, &async), JG_ERR_VALUE, "batch_size -1");
    jg_pool_config batched = {2, 1000, NULL, 2, NULL};
    expect(jg_pool_create("half_cheetah", 4, &batched, NULL, NULL, 0, &async), JG_OK, "create batched");
    const size_t row = (size_t)dims.num_agents * dims.act_dim;
    float* sent = calloc(4 * row, sizeof(float));
    int32_t ids[4] = {0, 1, 2, 3};
    int32_t* got = NULL;
    jg_buffers batch;
    int32_t flying = -1;
    expect(jg_pool_send(async, sent, 2 * row, ids, 2), JG_ERR_STATE, "send before reset");
    expect(jg_pool_recv(async, &got, &batch), JG_ERR_STATE, "recv with none in flight");
    expect(jg_pool_in_flight(async, NULL), JG_ERR_NULL, "in_flight into NULL");
    expect(jg_pool_reset(async, 1, 3), JG_OK, "reset batched");
    expect(jg_pool_send(async, sent, 2 * row, NULL, 2), JG_ERR_NULL, "send NULL ids");
    expect(jg_pool_send(async, NULL, 2 * row, ids, 2), JG_ERR_VALUE, "send NULL actions");
    expect(jg_pool_send(async, sent, 2 * row - 1, ids, 2), JG_ERR_VALUE, "send short actions");
    expect(jg_pool_send(async, sent, 0, ids, 0), JG_ERR_VALUE, "send no ids");
    expect(jg_pool_send(async, sent, 5 * row, ids, 5), JG_ERR_VALUE, "send 5 ids to 4 worlds");
    expect(jg_pool_send(async, sent, 2 * row, ids, (size_t)-1), JG_ERR_VALUE, "send (size_t)-1 ids");
    const int32_t past[2] = {0, 4}, negative[2] = {-1, 0}, twice[2] = {1, 1};
    expect(jg_pool_send(async, sent, 2 * row, past, 2), JG_ERR_INDEX, "send world 4 of 4");
    expect(jg_pool_send(async, sent, 2 * row, negative, 2), JG_ERR_INDEX, "send world -1");
    expect(jg_pool_send(async, sent, 2 * row, twice, 2), JG_ERR_VALUE, "send a world twice");
    sent[row + 1] = NAN;
    expect(jg_pool_send(async, sent, 2 * row, ids, 2), JG_ERR_VALUE, "send NaN action");
    sent[row + 1] = 0.0f;
    expect(jg_pool_in_flight(async, &flying), JG_OK, "in_flight");
    printf("%s nothing in flight after the refused sends: %d\n", flying == 0 ? "ok" : "FAIL", flying);
    if (flying != 0) ++failures;
    expect(jg_pool_send(async, sent, 2 * row, ids, 2), JG_OK, "send worlds 0, 1");
    expect(jg_pool_send(async, sent, 2 * row, ids + 1, 2), JG_ERR_STATE, "send a world in flight");
    expect(jg_pool_step(async, sent, 4 * row), JG_ERR_STATE, "step while in flight");
    expect(jg_pool_reset_one(async, 0, 0, 0), JG_ERR_STATE, "reset_one of a world in flight");
    expect(jg_pool_use_buffers(async, NULL, NULL), JG_ERR_STATE, "use_buffers while in flight");
    expect(jg_pool_recv(async, &got, &batch), JG_OK, "recv");
    expect(jg_pool_recv(async, NULL, NULL), JG_ERR_STATE, "recv again");
    expect(jg_pool_send(async, sent, row, ids, 1), JG_OK, "send world 0");
    expect(jg_pool_recv(async, NULL, NULL), JG_ERR_STATE, "recv with 1 of batch 2 in flight");
    int32_t short_ids[1];
    expect(jg_pool_use_batch_buffers(async, short_ids, 1, NULL, NULL), JG_ERR_VALUE, "short ids buffer");
    float small[3];
    jg_buffers mine_batch = {0};
    jg_buffer_sizes batch_sizes = {0};
    mine_batch.obs = small;
    batch_sizes.obs = 3;
    expect(jg_pool_use_batch_buffers(async, NULL, 0, &mine_batch, &batch_sizes), JG_ERR_VALUE,
           "short batch obs buffer");
    expect(jg_pool_use_batch_buffers(async, NULL, 0, &mine_batch, NULL), JG_ERR_NULL, "batch without sizes");
    int32_t my_ids[2] = {-1, -1};
    expect(jg_pool_use_batch_buffers(async, my_ids, 2, NULL, NULL), JG_OK, "caller's ids buffer");
    expect(jg_pool_send(async, sent, row, ids + 2, 1), JG_OK, "send world 2");
    expect(jg_pool_recv(async, &got, NULL), JG_OK, "recv into the caller's ids");
    const int ids_ok = got == my_ids && my_ids[0] + my_ids[1] == 2 && my_ids[0] * my_ids[1] == 0;
    printf("%s received ids %d, %d in the caller's buffer\n", ids_ok ? "ok" : "FAIL", my_ids[0], my_ids[1]);
    if (!ids_ok) ++failures;
    expect(jg_pool_use_batch_buffers(async, NULL, 0, NULL, NULL), JG_OK, "back to the pool's batch buffers");
    expect(jg_pool_async_reset(async, 1, 5), JG_OK, "async_reset");
    expect(jg_pool_recv(async, &got, &batch), JG_OK, "recv reset worlds 0, 1");
    expect(jg_pool_recv(async, &got, &batch), JG_OK, "recv reset worlds 2, 3");
    expect(jg_pool_send(async, sent, 4 * row, ids, 4), JG_OK, "send every world");
    expect(jg_pool_close(async), JG_OK, "close with work in flight");
    expect(jg_pool_send(async, sent, row, ids, 1), JG_ERR_STATE, "send after close");
    expect(jg_pool_recv(async, &got, &batch), JG_ERR_STATE, "recv after close");
    expect(jg_pool_async_reset(async, 0, 0), JG_ERR_STATE, "async_reset after close");
    expect(jg_pool_in_flight(async, &flying), JG_ERR_STATE, "in_flight after close");
    expect(jg_pool_batch_buffers(async, &got, &batch), JG_ERR_STATE, "batch_buffers after close");
    expect(jg_pool_use_batch_buffers(async, NULL, 0, NULL, NULL), JG_ERR_STATE, "use_batch_buffers after close");
    free(sent);
  }

  /* close, then every call on the stale handle */
  expect(jg_pool_close(pool), JG_OK, "close");
  expect(jg_pool_close(pool), JG_ERR_STATE, "double close");
  expect(jg_pool_step(pool, actions, count), JG_ERR_STATE, "step after close");
  expect(jg_pool_reset(pool, 0, 0), JG_ERR_STATE, "reset after close");
  expect(jg_pool_reset_one(pool, 0, 0, 0), JG_ERR_STATE, "reset_one after close");
  expect(jg_pool_dims(pool, &dims), JG_ERR_STATE, "dims after close");
  expect(jg_pool_buffers(pool, &buffers), JG_ERR_STATE, "buffers after close");
  expect(jg_pool_use_buffers(pool, NULL, NULL), JG_ERR_STATE, "use_buffers after close");
  expect(jg_pool_info_field(pool, 0, &field), JG_ERR_STATE, "info field after close");
  expect(jg_pool_action_bounds(pool, bound, bound, 6), JG_ERR_STATE, "bounds after close");

  /* the slot is reused: the stale handle still reads as closed */
  jg_pool again = 0;
  expect(jg_pool_create("half_cheetah", 2, NULL, NULL, NULL, 0, &again), JG_OK, "create again");
  printf("%s new handle differs from the stale one\n", again != pool ? "ok" : "FAIL");
  if (again == pool) ++failures;
  expect(jg_pool_step(pool, actions, count), JG_ERR_STATE, "stale handle after reuse");
  expect(jg_pool_close(again), JG_OK, "close again");

  free(actions);
  printf("%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
