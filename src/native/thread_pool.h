// A persistent pool of native worker threads for fork-join loops.
//
// `num_threads` counts the calling thread: the pool starts num_threads - 1
// workers once, and ParallelFor() runs on them and on the caller. Work items
// are claimed from an atomic counter, so a slow world does not hold up the
// others. ParallelFor neither allocates nor takes a lock on its fast path:
// workers spin briefly for the next job before sleeping on a condition
// variable, which keeps back-to-back steps cheap without burning a core while
// the caller runs Python.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace joltgym {

class ThreadPool {
 public:
  // A job: fn(context, item) for item in [0, count).
  using Fn = void (*)(void* context, int item);

  explicit ThreadPool(int num_threads);
  ~ThreadPool();  // joins the workers
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs fn over [0, count) and returns when every item is done. Not
  // reentrant: one ParallelFor at a time per pool.
  void ParallelFor(int count, Fn fn, void* context);

  template <typename Body>
  void ParallelFor(int count, Body& body) {
    ParallelFor(
        count, [](void* ctx, int i) { (*static_cast<Body*>(ctx))(i); }, &body);
  }

 private:
  void WorkerLoop();
  void RunItems();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  std::atomic<int> sleepers_{0};

  // The current job.
  Fn fn_ = nullptr;
  void* context_ = nullptr;
  int count_ = 0;
  std::atomic<int> next_item_{0};
  std::atomic<int> active_workers_{0};
};

}  // namespace joltgym
