// Native tests of the core without Python: tasks, worlds, the thread pool and
// the world pool. Built with -DJOLTGYM_BUILD_NATIVE_TESTS=ON and run by ctest;
// the sanitizer CI step builds and runs them under ASan + UBSan.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "errors.h"
#include "mujoco_errors.h"
#include "task.h"
#include "thread_pool.h"
#include "world.h"
#include "world_pool.h"

// Counts the allocations made on threads other than the main one while
// g_count_worker_news is set (see TestWorkersDoNotAllocateOnceStarted).
std::atomic<bool> g_count_worker_news{false};
std::atomic<long> g_worker_news{0};
const std::thread::id g_main_thread = std::this_thread::get_id();

// A place for a debugger's breakpoint: where a worker allocated.
__attribute__((noinline)) void NoteWorkerNew() {
  g_worker_news.fetch_add(1, std::memory_order_relaxed);
  asm volatile("");
}

void* operator new(std::size_t size) {
  if (g_count_worker_news.load(std::memory_order_relaxed) && std::this_thread::get_id() != g_main_thread) {
    NoteWorkerNew();
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// The replacement operator new above allocates with malloc, so free is the
// matching release (GCC cannot tell that they are a replacement pair).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace {

int g_failures = 0;
int g_checks = 0;

#define CHECK(cond)                                                       \
  do {                                                                    \
    ++g_checks;                                                           \
    if (!(cond)) {                                                        \
      ++g_failures;                                                       \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                     \
  } while (0)

using joltgym::AutoresetMode;
using joltgym::Params;
using joltgym::PoolBuffers;
using joltgym::Task;
using joltgym::TaskRegistry;
using joltgym::World;
using joltgym::WorldPool;

std::shared_ptr<const Task> MakeTask(const std::string& name) {
  const auto& info = TaskRegistry::Get().Find(name);
  return info.factory(Params(info.params, {}));
}

// Owns a pool's buffers.
struct Buffers {
  Buffers(const Task& task, int n) {
    const std::size_t worlds = static_cast<std::size_t>(n);
    const std::size_t rows = worlds * static_cast<std::size_t>(task.num_agents());
    obs.resize(rows * static_cast<std::size_t>(task.obs_dim()));
    final_obs.resize(obs.size());
    reward.resize(rows);
    terminated = std::make_unique<bool[]>(rows);
    truncated = std::make_unique<bool[]>(rows);
    info.resize(rows * static_cast<std::size_t>(task.info_layout().width()));
    final_info.resize(info.size());
    reset_kind.resize(worlds);
    unstable = std::make_unique<bool[]>(worlds);
    elapsed.resize(worlds);
  }
  PoolBuffers View() {
    PoolBuffers b;
    b.obs = obs.data();
    b.final_obs = final_obs.data();
    b.reward = reward.data();
    b.terminated = terminated.get();
    b.truncated = truncated.get();
    b.info = info.data();
    b.final_info = final_info.data();
    b.reset_kind = reset_kind.data();
    b.unstable = unstable.get();
    b.elapsed = elapsed.data();
    return b;
  }
  std::vector<float> obs, final_obs, reward;
  std::unique_ptr<bool[]> terminated, truncated, unstable;
  std::vector<double> info, final_info;
  std::vector<std::uint8_t> reset_kind;
  std::vector<std::int32_t> elapsed;
};

std::vector<float> RandomActions(const Task& task, int n, joltgym::Rng& rng) {
  std::vector<float> actions(n * task.num_agents() * task.act_dim());
  for (auto& a : actions) a = static_cast<float>(rng.Uniform(-1.0, 1.0));
  return actions;
}

void TestThreadPoolCoversEveryItemOnce() {
  for (int threads : {1, 2, 3, 8}) {
    joltgym::ThreadPool pool(threads);
    for (int round = 0; round < 200; ++round) {
      const int count = round % 37;
      std::vector<int> hits(count, 0);
      auto body = [&hits](int i) { hits[i] += 1; };
      pool.ParallelFor(count, body);
      bool once = true;
      for (int h : hits) once = once && h == 1;
      CHECK(once);
    }
  }
}

// Async items: each submitted item runs exactly once per submission and is
// collected exactly once, whatever the batch sizes and thread counts; items
// published done without running are collected too; a pool destroyed with
// items queued does not hang.
void TestThreadPoolAsyncItems() {
  for (int threads : {1, 2, 3, 8}) {
    for (int n : {1, 7, 64}) {
      std::vector<std::atomic<int>> runs(n);
      for (auto& r : runs) r.store(0);
      joltgym::ThreadPool pool(threads);
      pool.SetAsyncJob(
          n, [](void* ctx, int i) { (*static_cast<std::vector<std::atomic<int>>*>(ctx))[i] += 1; },
          &runs);
      std::vector<int> ids(n), out(n), collected(n, 0);
      for (int i = 0; i < n; ++i) ids[i] = i;
      pool.SubmitDone(ids.data(), n);  // all "done" without running
      std::vector<int> idle;           // collected, not in flight
      for (int got = 0; got < n;) {
        const int b = std::min(n - got, 1 + got % 3);
        pool.Collect(out.data(), b);
        for (int k = 0; k < b; ++k) idle.push_back(out[k]);
        got += b;
      }
      CHECK(static_cast<int>(idle.size()) == n);
      int in_flight = 0;
      for (int round = 0; round < 300; ++round) {
        // Send some idle items (reversed, in two calls), collect a batch.
        const int send = std::min(static_cast<int>(idle.size()), 1 + round % 5);
        std::vector<int> batch(idle.end() - send, idle.end());
        idle.resize(idle.size() - send);
        const int half = send / 2;
        pool.Submit(batch.data(), half);
        pool.Submit(batch.data() + half, send - half);
        in_flight += send;
        const int take = std::min(in_flight, 1 + round % 4);
        pool.Collect(out.data(), take);
        in_flight -= take;
        for (int k = 0; k < take; ++k) {
          collected[out[k]] += 1;
          idle.push_back(out[k]);
        }
      }
      pool.Collect(out.data(), in_flight);
      for (int k = 0; k < in_flight; ++k) collected[out[k]] += 1;
      int total_runs = 0, total_collected = 0;
      for (int i = 0; i < n; ++i) {
        total_runs += runs[i].load();
        total_collected += collected[i];
        CHECK(runs[i].load() == collected[i]);
      }
      CHECK(total_runs == total_collected);
      // Queued at destruction: the workers stop, nothing hangs.
      pool.Submit(ids.data(), n);
    }
  }
}

// The thread-start hook has run on every worker when the constructor returns.
std::atomic<int> g_thread_starts{0};

void TestThreadPoolStartHook() {
  for (int threads : {1, 2, 4}) {
    g_thread_starts.store(0);
    joltgym::ThreadPool pool(threads, [] { g_thread_starts.fetch_add(1); });
    CHECK(g_thread_starts.load() == threads - 1);
    pool.ParallelFor(16, [](void*, int) {}, nullptr);
    CHECK(g_thread_starts.load() == threads - 1);
  }
}

// A world pool's workers allocate nothing once the pool is made, over steps,
// async items and auto-resets of every task: a fork() then never catches a
// worker inside the allocator, whose locks the child would inherit held (a
// child forked under ASan hung so; Ant's contact cost grew a thread-local
// vector on each worker's first step).
void TestWorkersDoNotAllocateOnceStarted() {
  for (const auto& [name, info] : TaskRegistry::Get().all()) {
    auto task = MakeTask(name);
    const int n = 6;
    WorldPool pool(task, n, 3, 7, AutoresetMode::kNextStep);
    Buffers b(*task, n);
    pool.Bind(b.View());
    joltgym::Rng rng(5);
    const auto act = RandomActions(*task, n, rng);
    std::vector<int> ids(n);
    for (int i = 0; i < n; ++i) ids[i] = i;
    g_worker_news.store(0);
    g_count_worker_news.store(true);
    pool.ResetAll(true, joltgym::SeedFromU64(3));
    for (int t = 0; t < 20; ++t) {
      pool.StepAll(act.data());
      pool.Send(act.data(), ids.data(), n);
      pool.Drain();
    }
    g_count_worker_news.store(false);
    if (g_worker_news.load() != 0) std::fprintf(stderr, "%s: %ld allocations on workers\n", name.c_str(), g_worker_news.load());
    CHECK(g_worker_news.load() == 0);
  }
}

void TestEveryTaskSteps() {
  for (const auto& [name, info] : TaskRegistry::Get().all()) {
    auto task = MakeTask(name);
    World world(task, 1000);
    world.Seed(7);
    std::vector<double> obs(task->num_agents() * task->obs_dim());
    std::vector<double> inf(task->num_agents() * task->info_layout().width());
    world.Reset(obs.data(), inf.data());
    joltgym::Rng rng(3);
    double reward[8];
    bool term[8], trunc[8];
    for (int t = 0; t < 100; ++t) {
      auto act = RandomActions(*task, 1, rng);
      const bool done = world.Step(act.data(), obs.data(), reward, term, trunc, inf.data());
      for (double o : obs) CHECK(std::isfinite(o));
      if (done) world.Reset(obs.data(), inf.data());
    }
  }
}

// Runs `steps` pool steps and returns every obs/reward written.
std::vector<float> PoolRollout(const std::string& name, int n, int threads, AutoresetMode mode,
                               std::uint64_t seed, int steps) {
  auto task = MakeTask(name);
  WorldPool pool(task, n, threads, 20, mode);
  Buffers buffers(*task, n);
  pool.Bind(buffers.View());
  pool.ResetAll(true, joltgym::SeedFromU64(seed));
  joltgym::Rng rng(99);
  std::vector<float> trace;
  for (int t = 0; t < steps; ++t) {
    auto act = RandomActions(*task, n, rng);
    pool.StepAll(act.data());
    trace.insert(trace.end(), buffers.obs.begin(), buffers.obs.end());
    trace.insert(trace.end(), buffers.reward.begin(), buffers.reward.end());
    if (mode == AutoresetMode::kSameStep) {
      for (int i = 0; i < n; ++i) CHECK(buffers.reset_kind[i] != 1);
    }
  }
  return trace;
}

void TestPoolIsDeterministicAcrossThreadCounts() {
  for (const char* name : {"half_cheetah", "humanoid", "ant"}) {
    for (auto mode : {AutoresetMode::kNextStep, AutoresetMode::kSameStep}) {
      const auto one = PoolRollout(name, 6, 1, mode, 5, 45);
      const auto two = PoolRollout(name, 6, 2, mode, 5, 45);
      const auto four = PoolRollout(name, 6, 4, mode, 5, 45);
      const auto other = PoolRollout(name, 6, 2, mode, 6, 45);
      CHECK(one.size() == two.size());
      CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
      CHECK(std::memcmp(one.data(), four.data(), one.size() * sizeof(float)) == 0);
      CHECK(std::memcmp(one.data(), other.data(), one.size() * sizeof(float)) != 0);
    }
  }
}

void TestNextStepAutoreset() {
  auto task = MakeTask("half_cheetah");
  WorldPool pool(task, 2, 2, 3, AutoresetMode::kNextStep);
  Buffers b(*task, 2);
  pool.Bind(b.View());
  pool.ResetAll(true, joltgym::SeedFromU64(1));
  std::vector<float> act(2 * task->act_dim(), 0.0f);
  for (int t = 1; t <= 3; ++t) {
    pool.StepAll(act.data());
    CHECK(b.reset_kind[0] == 0);
    CHECK(b.truncated[0] == (t == 3));
  }
  pool.StepAll(act.data());
  CHECK(b.reset_kind[0] == 1 && b.reset_kind[1] == 1);
  CHECK(!b.truncated[0] && b.reward[0] == 0.0f && b.elapsed[0] == 0);
}

void TestSameStepAutoreset() {
  auto task = MakeTask("half_cheetah");
  WorldPool pool(task, 2, 2, 3, AutoresetMode::kSameStep);
  Buffers b(*task, 2);
  pool.Bind(b.View());
  pool.ResetAll(true, joltgym::SeedFromU64(1));
  std::vector<float> act(2 * task->act_dim(), 0.5f);
  for (int t = 1; t <= 3; ++t) pool.StepAll(act.data());
  CHECK(b.reset_kind[0] == 2 && b.truncated[0]);
  CHECK(std::memcmp(b.final_obs.data(), b.obs.data(), sizeof(float) * task->obs_dim()) != 0);
}

// A few values NumPy gives (np.random.PCG64(seed).random_raw(),
// np.random.default_rng(42).uniform / standard_normal); the Python tests
// compare thousands more.
void TestRngMatchesNumPy() {
  joltgym::Rng rng(0);
  CHECK(rng.NextU64() == 0xa30febcfd9c2825fULL);
  CHECK(rng.NextU64() == 0x4510bdf882d9d721ULL);
  CHECK(rng.NextU64() == 0x0a7d3da94ecde8b8ULL);
  rng.Seed(joltgym::SeedPlus(joltgym::SeedFromU64(0xffffffffffffffffULL), 6));  // 2**64 + 5
  CHECK(rng.NextU64() == 0xbe1ed79de3d6074eULL);
  CHECK(rng.NextU64() == 0x64197d17923f1721ULL);
  rng.Seed(42);
  CHECK(rng.Uniform(-0.1, 0.1) == 0.05479120971119267);
  CHECK(rng.StandardNormal() == -1.0399841062404955);
  CHECK(rng.StandardNormal() == 0.7504511958064572);
  CHECK((joltgym::SeedPlus({0xffffffffu, 0xffffffffu}, 1) == joltgym::SeedWords{0, 0, 1}));
  CHECK((joltgym::SeedPlus({7}, 0) == joltgym::SeedWords{7}));
  CHECK((joltgym::SeedFromU64(0) == joltgym::SeedWords{0}));
}

void TestModelErrors() {
  bool threw = false;
  try {
    joltgym::LoadModel("/nonexistent/model.xml");
  } catch (const joltgym::FileNotFound&) {
    threw = true;
  }
  CHECK(threw);
  const char* path = "native_tests_bad_model.xml";
  {
    std::ofstream bad(path);
    bad << "<mujoco><worldbody><body><geom type='nonsense'/></body></worldbody></mujoco>";
  }
  threw = false;
  try {
    joltgym::LoadModel(path);
  } catch (const std::invalid_argument& e) {
    threw = std::strstr(e.what(), "could not be compiled") != nullptr;
  }
  std::remove(path);
  CHECK(threw);
  threw = false;
  try {
    const auto& info = TaskRegistry::Get().Find("half_cheetah");
    Params(info.params, {{"no_such_param", {}}});
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  CHECK(threw);
}

// GuardMujoco turns MuJoCo's errors into a return value and keeps its
// warnings, on any thread, nested or not.
void TestMujocoGuard() {
  joltgym::MujocoReport report;
  CHECK(!joltgym::GuardMujoco([] { mju_error("boom %d", 7); }, &report));
  CHECK(report.error == joltgym::MujocoReport::Error::kFailure && report.error_message == "boom 7");
  report.Clear();
  CHECK(!joltgym::GuardMujoco([] { mju_error("mj_stackAlloc: out of memory, stack overflow"); },
                              &report));
  CHECK(report.error == joltgym::MujocoReport::Error::kOutOfMemory);
  report.Clear();
  CHECK(!joltgym::GuardMujoco(
      [] { mju_error("index must be smaller than 3 (keyframes allocated in model)"); }, &report));
  CHECK(report.error == joltgym::MujocoReport::Error::kFailure);
  // Warnings are kept, except the instability ones (reported as `unstable`).
  report.Clear();
  CHECK(joltgym::GuardMujoco(
      [] {
        mju_warning("a warning");
        mju_warning("%s Time = 0.0000.", mju_warningText(mjWARN_BADQACC, 3));
      },
      &report));
  CHECK(report.warnings.size() == 1 && report.warnings[0] == "a warning");
  // The innermost guard catches; the outer one goes on.
  joltgym::MujocoReport outer, inner;
  bool inner_ok = true;
  CHECK(joltgym::GuardMujoco(
      [&] { inner_ok = joltgym::GuardMujoco([] { mju_error("inner"); }, &inner); }, &outer));
  CHECK(!inner_ok && inner.error_message == "inner" && !outer.failed());
  // On worker threads too.
  joltgym::ThreadPool threads(3);
  std::vector<joltgym::MujocoReport> reports(8);
  auto body = [&](int i) {
    joltgym::GuardMujoco(
        [i] {
          if (i % 2) mju_error("odd %d", i);
        },
        &reports[i]);
  };
  threads.ParallelFor(8, body);
  for (int i = 0; i < 8; ++i) CHECK(reports[i].failed() == (i % 2 == 1));
}

}  // namespace

int main() {
  joltgym::SetAssetDir(JOLTGYM_ASSET_DIR);
  const std::vector<std::pair<const char*, std::function<void()>>> tests = {
      {"thread_pool_covers_every_item_once", TestThreadPoolCoversEveryItemOnce},
      {"thread_pool_async_items", TestThreadPoolAsyncItems},
      {"thread_pool_start_hook", TestThreadPoolStartHook},
      {"workers_do_not_allocate_once_started", TestWorkersDoNotAllocateOnceStarted},
      {"every_task_steps", TestEveryTaskSteps},
      {"pool_is_deterministic_across_thread_counts", TestPoolIsDeterministicAcrossThreadCounts},
      {"next_step_autoreset", TestNextStepAutoreset},
      {"same_step_autoreset", TestSameStepAutoreset},
      {"rng_matches_numpy", TestRngMatchesNumPy},
      {"model_errors", TestModelErrors},
      {"mujoco_guard", TestMujocoGuard},
  };
  int passed = 0, failed = 0;
  for (const auto& [name, fn] : tests) {
    const int before = g_failures;
    fn();
    const bool ok = g_failures == before;
    std::printf("%s %s\n", ok ? "PASS" : "FAIL", name);
    (ok ? passed : failed) += 1;
  }
  std::printf("native: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
