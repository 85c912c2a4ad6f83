#include "thread_pool.h"

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
}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads < 1) num_threads = 1;
  workers_.reserve(num_threads - 1);
  for (int i = 0; i + 1 < num_threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true, std::memory_order_release);
  }
  wake_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::RunItems() {
  for (;;) {
    const int item = next_item_.fetch_add(1, std::memory_order_relaxed);
    if (item >= count_) return;
    fn_(context_, item);
  }
}

void ThreadPool::ParallelFor(int count, Fn fn, void* context) {
  if (count <= 0) return;
  if (workers_.empty() || count == 1) {
    for (int i = 0; i < count; ++i) fn(context, i);
    return;
  }
  fn_ = fn;
  context_ = context;
  count_ = count;
  next_item_.store(0, std::memory_order_relaxed);
  active_workers_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  // Publishing the new generation releases the job fields above.
  generation_.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    wake_.notify_all();
  }
  RunItems();
  // Wait for the workers still finishing an item. Spin first (they are
  // usually microseconds away), then yield so that a descheduled worker on an
  // oversubscribed machine gets the core back.
  for (int spins = 0; active_workers_.load(std::memory_order_acquire) > 0; ++spins) {
    if (spins < kSpinIterations) {
      JOLTGYM_PAUSE();
    } else {
      std::this_thread::yield();
    }
  }
}

void ThreadPool::WorkerLoop() {
  // Jobs are counted from construction: a worker that starts late must still
  // run the first job, so it does not read the current generation here.
  std::uint64_t seen = 0;
  for (;;) {
    int spins = 0;
    while (generation_.load(std::memory_order_acquire) == seen &&
           !stop_.load(std::memory_order_acquire) && spins < kSpinIterations) {
      JOLTGYM_PAUSE();
      ++spins;
    }
    if (generation_.load(std::memory_order_acquire) == seen &&
        !stop_.load(std::memory_order_acquire)) {
      std::unique_lock<std::mutex> lock(mutex_);
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      wake_.wait(lock, [&] {
        return generation_.load(std::memory_order_seq_cst) != seen ||
               stop_.load(std::memory_order_acquire);
      });
      sleepers_.fetch_sub(1, std::memory_order_acq_rel);
    }
    if (stop_.load(std::memory_order_acquire)) return;
    seen = generation_.load(std::memory_order_acquire);
    RunItems();
    active_workers_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace joltgym
