#include "thread_pool.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "fork_guard.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define JOLTGYM_PAUSE() _mm_pause()
#else
#define JOLTGYM_PAUSE() std::this_thread::yield()
#endif

namespace joltgym {

namespace {
// About 20-50 microseconds of polling before a worker goes to sleep.
constexpr int kSpinIterations = 4000;

std::atomic<int> g_fail_thread_starts{0};
}  // namespace

struct ThreadPool::Crew {
  std::vector<std::thread> workers;
  std::mutex mutex;
  std::condition_variable wake;
  std::atomic<std::uint64_t> generation{0};
  std::atomic<bool> stop{false};
  std::atomic<int> sleepers{0};

  // The current job. Thread t (0 is the caller, workers are 1..) first runs
  // the items of its own share, shares[t], then takes what is left of the
  // others'. The shares are the same contiguous blocks from job to job, so a
  // world is usually stepped on the same core as last time and its data is
  // still in that core's cache; taking from the others' shares keeps a slow
  // world from holding up the job.
  struct alignas(64) Share {
    std::atomic<int> next{0};
    int end = 0;
  };
  Fn fn = nullptr;
  void* context = nullptr;
  int num_shares = 0;
  std::unique_ptr<Share[]> shares;
  std::atomic<int> active_workers{0};

  explicit Crew(int num_workers)
      : num_shares(num_workers + 1), shares(new Share[num_workers + 1]) {
    workers.reserve(num_workers);
    for (int i = 0; i < num_workers; ++i) {
      try {
        if (g_fail_thread_starts.load(std::memory_order_relaxed) > 0 &&
            g_fail_thread_starts.fetch_sub(1, std::memory_order_relaxed) > 0) {
          throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
        }
        workers.emplace_back([this, i] { WorkerLoop(i + 1); });
      } catch (const std::system_error& e) {
        StopAndJoin();
        throw std::runtime_error("could not start native worker thread " + std::to_string(i + 1) +
                                 " of " + std::to_string(num_workers) + " (" + e.what() +
                                 "); expected the system to allow " + std::to_string(num_workers) +
                                 " more threads: ask for fewer num_threads, or raise the "
                                 "process's thread limit");
      }
    }
  }

  ~Crew() { StopAndJoin(); }

  void StopAndJoin() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stop.store(true, std::memory_order_release);
    }
    wake.notify_all();
    for (auto& worker : workers) {
      if (worker.joinable()) worker.join();
    }
  }

  void RunShare(Share& share) {
    for (;;) {
      const int item = share.next.fetch_add(1, std::memory_order_relaxed);
      if (item >= share.end) return;
      fn(context, item);
    }
  }

  void RunItems(int self) {
    for (int k = 0; k < num_shares; ++k) RunShare(shares[(self + k) % num_shares]);
  }

  void Run(int n, Fn job, void* job_context) {
    fn = job;
    context = job_context;
    for (int t = 0; t < num_shares; ++t) {
      shares[t].next.store(static_cast<int>(static_cast<long>(n) * t / num_shares),
                           std::memory_order_relaxed);
      shares[t].end = static_cast<int>(static_cast<long>(n) * (t + 1) / num_shares);
    }
    active_workers.store(static_cast<int>(workers.size()), std::memory_order_relaxed);
    // Publishing the new generation releases the job fields above.
    generation.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers.load(std::memory_order_seq_cst) > 0) {
      std::lock_guard<std::mutex> lock(mutex);
      wake.notify_all();
    }
    RunItems(0);
    // Wait for the workers still finishing an item. Spin first (they are
    // usually microseconds away), then yield so that a descheduled worker on
    // an oversubscribed machine gets the core back.
    for (int spins = 0; active_workers.load(std::memory_order_acquire) > 0; ++spins) {
      if (spins < kSpinIterations) {
        JOLTGYM_PAUSE();
      } else {
        std::this_thread::yield();
      }
    }
  }

  void WorkerLoop(int self) {
    // Jobs are counted from construction: a worker that starts late must
    // still run the first job, so it does not read the current generation.
    std::uint64_t seen = 0;
    for (;;) {
      int spins = 0;
      while (generation.load(std::memory_order_acquire) == seen &&
             !stop.load(std::memory_order_acquire) && spins < kSpinIterations) {
        JOLTGYM_PAUSE();
        ++spins;
      }
      if (generation.load(std::memory_order_acquire) == seen &&
          !stop.load(std::memory_order_acquire)) {
        std::unique_lock<std::mutex> lock(mutex);
        sleepers.fetch_add(1, std::memory_order_seq_cst);
        wake.wait(lock, [&] {
          return generation.load(std::memory_order_seq_cst) != seen ||
                 stop.load(std::memory_order_acquire);
        });
        sleepers.fetch_sub(1, std::memory_order_acq_rel);
      }
      if (stop.load(std::memory_order_acquire)) return;
      seen = generation.load(std::memory_order_acquire);
      RunItems(self);
      active_workers.fetch_sub(1, std::memory_order_acq_rel);
    }
  }
};

ThreadPool::ThreadPool(int num_threads)
    : num_threads_(num_threads < 1 ? 1 : num_threads),
      fork_generation_(ForkGeneration()),
      crew_(std::make_unique<Crew>(num_threads_ - 1)) {}

ThreadPool::~ThreadPool() {
  // In a forked child the parent's workers do not exist: joining them, or
  // notifying a condition variable they waited on, would never return.
  if (ForkGeneration() != fork_generation_) (void)crew_.release();
}

void ThreadPool::ParallelFor(int count, Fn fn, void* context) {
  if (count <= 0) return;
  if (ForkGeneration() != fork_generation_) {
    // A forked child: abandon the parent's crew untouched and start anew.
    (void)crew_.release();
    crew_ = std::make_unique<Crew>(num_threads_ - 1);
    fork_generation_ = ForkGeneration();
  }
  if (crew_->workers.empty() || count == 1) {
    for (int i = 0; i < count; ++i) fn(context, i);
    return;
  }
  crew_->Run(count, fn, context);
}

void ThreadPool::FailNextThreadStarts(int count) {
  g_fail_thread_starts.store(count, std::memory_order_relaxed);
}

}  // namespace joltgym
