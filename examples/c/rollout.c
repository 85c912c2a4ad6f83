/* Drives a pool of worlds through the C API with a fixed linear policy and
 * prints env-steps/s and the return of every finished episode.
 *
 *   rollout [task] [num_envs] [steps] [seed] [num_threads] [dtype]
 *   (defaults: half_cheetah 64 1000 0 0 float32; num_threads 0 = one per
 *   CPU; dtype float64 reads the float64 layout: obs64 and reward64,
 *   Gymnasium v5's values)
 *
 * Build against the header and the library (see README, "C API"):
 *   cc -std=c11 -O2 -ffp-contract=off examples/c/rollout.c -Iinclude \
 *      -Lbuild/capi -ljoltgym_marl -Wl,-rpath,$PWD/build/capi -o rollout
 *
 * The policy, action[j] = clip(sum_k W[j][k] * obs[k], low[j], high[j]) with
 * W[j][k] = ((j * obs_dim + k) % 7 - 3) / 10, summed in double in k order, is
 * the one examples/java/Rollout.java and tests/test_capi.py use, so the
 * returns printed are bit-identical across C, Java and Python.
 * examples/c/async_rollout.c steps the same policy with send/recv. */
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

int main(int argc, char** argv) {
  if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    printf("usage: rollout [task] [num_envs] [steps] [seed] [num_threads] [dtype]\n"
           "Steps num_envs worlds of task with a fixed linear policy; prints env-steps/s\n"
           "and each finished episode's return (defaults: half_cheetah 64 1000 0 0 float32;\n"
           "dtype float64: observations and rewards in the float64 layout).\n");
    return 0;
  }
  const char* task = argc > 1 ? argv[1] : "half_cheetah";
  const int num_envs = argc > 2 ? atoi(argv[2]) : 64;
  const int steps = argc > 3 ? atoi(argv[3]) : 1000;
  const uint64_t seed = argc > 4 ? strtoull(argv[4], NULL, 10) : 0;
  const int num_threads = argc > 5 ? atoi(argv[5]) : 0;
  const char* dtype = argc > 6 ? argv[6] : "float32";

  if (jg_abi_version() != JG_ABI_VERSION) {
    fprintf(stderr, "libjoltgym_marl has ABI %u, this program was built for %d\n", jg_abi_version(),
            JG_ABI_VERSION);
    return 1;
  }
  jg_pool_config config = {num_threads, 1000, "next_step", 0, dtype};
  jg_pool pool = 0;
  if (check(jg_pool_create(task, num_envs, &config, NULL, NULL, 0, &pool), "jg_pool_create")) return 1;
  jg_dims d;
  jg_buffers b;
  if (check(jg_pool_dims(pool, &d), "jg_pool_dims") || check(jg_pool_buffers(pool, &b), "jg_pool_buffers")) {
    return 1;
  }
  const size_t act_count = (size_t)d.num_envs * d.num_agents * d.act_dim;
  float* actions = calloc(act_count, sizeof(float));
  float* low = malloc(sizeof(float) * d.act_dim);
  float* high = malloc(sizeof(float) * d.act_dim);
  double* returns = calloc((size_t)d.num_envs, sizeof(double));
  if (!actions || !low || !high || !returns) return 1;
  if (check(jg_pool_action_bounds(pool, low, high, (size_t)d.act_dim), "jg_pool_action_bounds")) return 1;
  printf("task %s, %d worlds, %d agents, %d steps, seed %" PRIu64 ", %d threads, float%d\n", task,
         d.num_envs, d.num_agents, steps, seed, d.num_threads, 8 * d.real_size);

  if (check(jg_pool_reset(pool, 1, seed), "jg_pool_reset")) return 1;
  int episodes = 0;
  const double start = seconds();
  for (int t = 0; t < steps; ++t) {
    for (int i = 0; i < d.num_envs * d.num_agents; ++i) {
      /* Read in place (zero-copy), in the pool's layout (jg_dims.real_size). */
      const size_t row = (size_t)i * d.obs_dim;
      for (int j = 0; j < d.act_dim; ++j) {
        double acc = 0.0;
        for (int k = 0; k < d.obs_dim; ++k) {
          const double o = d.real_size == 8 ? b.obs64[row + k] : (double)b.obs[row + k];
          acc += (double)((j * d.obs_dim + k) % 7 - 3) / 10.0 * o;
        }
        if (acc < low[j]) acc = low[j];
        if (acc > high[j]) acc = high[j];
        actions[(size_t)i * d.act_dim + j] = (float)acc;
      }
    }
    if (check(jg_pool_step(pool, actions, act_count), "jg_pool_step")) return 1;
    for (int w = 0; w < d.num_envs; ++w) {
      if (b.reset_kind[w] == JG_RESET) continue;  /* next_step auto-reset: no reward */
      const size_t agent0 = (size_t)w * d.num_agents;
      returns[w] += d.real_size == 8 ? b.reward64[agent0] : (double)b.reward[agent0];
      if (b.terminated[agent0] || b.truncated[agent0]) {
        uint64_t bits;
        memcpy(&bits, &returns[w], sizeof(bits));
        printf("episode world=%d step=%d return=%.17g bits=%016" PRIx64 "\n", w, t + 1, returns[w], bits);
        returns[w] = 0.0;
        ++episodes;
      }
    }
  }
  const double elapsed = seconds() - start;
  printf("episodes: %d\n", episodes);
  printf("env-steps/s: %.0f\n", (double)steps * d.num_envs / elapsed);
  free(actions);
  free(low);
  free(high);
  free(returns);
  return check(jg_pool_close(pool), "jg_pool_close");
}
