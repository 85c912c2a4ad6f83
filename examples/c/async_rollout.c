/* rollout.c's policy and returns through the asynchronous calls: the pool
 * steps worlds on its threads while this thread computes the actions of the
 * worlds already received (EnvPool's send/recv).
 *
 *   async_rollout [task] [num_envs] [steps] [seed] [num_threads] [batch_size]
 *   (defaults: half_cheetah 64 1000 0 0 num_envs/2)
 *
 * Build as rollout.c (see README, "C API"):
 *   cc -std=c11 -O2 -ffp-contract=off examples/c/async_rollout.c -Iinclude \
 *      -Lbuild/capi -ljoltgym_marl -Wl,-rpath,$PWD/build/capi -o async_rollout
 *
 * Each world's first `steps` steps count. Worlds run at their own pace, so
 * one that is through keeps being sent (its further results ignored) until
 * every world is: recv needs batch_size worlds in flight. A world's results
 * depend only on its seed and its actions, never on which worlds share a
 * batch, so each episode's return is bit-identical to rollout.c's (printed
 * in another order: the order worlds finish in). */
#define _POSIX_C_SOURCE 199309L  /* clock_gettime */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "joltgym_marl.h"

static int check(jg_status status, const char* call) {
  if (status == JG_OK) return 0;
  fprintf(stderr, "%s failed: %s: %s\n", call, jg_status_name(status), jg_last_error());
  return 1;
}

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* rollout.c's policy for one world's agents: obs [num_agents, obs_dim] ->
 * actions [num_agents, act_dim]. */
static void policy(const jg_dims* d, const float* obs, const float* low, const float* high,
                   float* actions) {
  for (int i = 0; i < d->num_agents; ++i) {
    const float* o = obs + (size_t)i * d->obs_dim;
    for (int j = 0; j < d->act_dim; ++j) {
      double acc = 0.0;
      for (int k = 0; k < d->obs_dim; ++k) {
        acc += (double)((j * d->obs_dim + k) % 7 - 3) / 10.0 * (double)o[k];
      }
      if (acc < low[j]) acc = low[j];
      if (acc > high[j]) acc = high[j];
      actions[(size_t)i * d->act_dim + j] = (float)acc;
    }
  }
}

int main(int argc, char** argv) {
  if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    printf("usage: async_rollout [task] [num_envs] [steps] [seed] [num_threads] [batch_size]\n"
           "Steps num_envs worlds of task with rollout's fixed linear policy through\n"
           "jg_pool_send/jg_pool_recv, batch_size worlds at a time; prints env-steps/s and\n"
           "each finished episode's return (defaults: half_cheetah 64 1000 0 0 num_envs/2).\n");
    return 0;
  }
  const char* task = argc > 1 ? argv[1] : "half_cheetah";
  const int num_envs = argc > 2 ? atoi(argv[2]) : 64;
  const int steps = argc > 3 ? atoi(argv[3]) : 1000;
  const uint64_t seed = argc > 4 ? strtoull(argv[4], NULL, 10) : 0;
  const int num_threads = argc > 5 ? atoi(argv[5]) : 0;
  const int batch_size = argc > 6 ? atoi(argv[6]) : (num_envs > 1 ? num_envs / 2 : 1);

  if (jg_abi_version() != JG_ABI_VERSION) {
    fprintf(stderr, "libjoltgym_marl has ABI %u, this program was built for %d\n", jg_abi_version(),
            JG_ABI_VERSION);
    return 1;
  }
  jg_pool_config config = {num_threads, 1000, "next_step", batch_size, NULL}; /* NULL: float32 */
  jg_pool pool = 0;
  if (check(jg_pool_create(task, num_envs, &config, NULL, NULL, 0, &pool), "jg_pool_create")) return 1;
  jg_dims d;
  if (check(jg_pool_dims(pool, &d), "jg_pool_dims")) return 1;
  const size_t row = (size_t)d.num_agents * d.act_dim; /* one world's actions */
  float* actions = calloc((size_t)d.batch_size * row, sizeof(float));
  int32_t* send_ids = calloc((size_t)d.batch_size, sizeof(int32_t));
  int* got = calloc((size_t)d.num_envs, sizeof(int)); /* results received, per world */
  float* low = malloc(sizeof(float) * d.act_dim);
  float* high = malloc(sizeof(float) * d.act_dim);
  double* returns = calloc((size_t)d.num_envs, sizeof(double));
  if (!actions || !send_ids || !got || !low || !high || !returns) return 1;
  if (check(jg_pool_action_bounds(pool, low, high, (size_t)d.act_dim), "jg_pool_action_bounds")) return 1;
  printf("task %s, %d worlds, %d agents, %d steps, seed %" PRIu64 ", %d threads, batch %d\n", task,
         d.num_envs, d.num_agents, steps, seed, d.num_threads, d.batch_size);

  /* Every world in flight with its first observation. */
  if (check(jg_pool_async_reset(pool, 1, seed), "jg_pool_async_reset")) return 1;
  int episodes = 0, through = 0;
  const double start = seconds();
  while (through < d.num_envs) {
    int32_t* ids = NULL;
    jg_buffers b; /* batch buffers: row k is world ids[k]'s (zero-copy, until the next recv) */
    if (check(jg_pool_recv(pool, &ids, &b), "jg_pool_recv")) return 1;
    for (int k = 0; k < d.batch_size; ++k) {
      const int w = ids[k];
      const int step = got[w]++; /* 0: the first reset */
      /* A reset (the first, or next_step's auto-reset after an episode) has no reward. */
      if (step >= 1 && step <= steps && b.reset_kind[k] != JG_RESET) {
        const size_t agent0 = (size_t)k * d.num_agents;
        returns[w] += (double)b.reward[agent0];
        if (b.terminated[agent0] || b.truncated[agent0]) {
          uint64_t bits;
          memcpy(&bits, &returns[w], sizeof(bits));
          printf("episode world=%d step=%d return=%.17g bits=%016" PRIx64 "\n", w, step, returns[w], bits);
          returns[w] = 0.0;
          ++episodes;
        }
      }
      if (step == steps) ++through;
      policy(&d, b.obs + (size_t)k * d.num_agents * d.obs_dim, low, high, actions + (size_t)k * row);
      send_ids[k] = w;
    }
    /* Returns at once: the pool's threads step these while the next recv waits. */
    if (through < d.num_envs &&
        check(jg_pool_send(pool, actions, (size_t)d.batch_size * row, send_ids, (size_t)d.batch_size),
              "jg_pool_send")) {
      return 1;
    }
  }
  const double elapsed = seconds() - start;
  printf("episodes: %d\n", episodes);
  printf("env-steps/s: %.0f\n", (double)steps * d.num_envs / elapsed);
  free(actions);
  free(send_ids);
  free(got);
  free(low);
  free(high);
  free(returns);
  return check(jg_pool_close(pool), "jg_pool_close"); /* drops the worlds still in flight */
}
