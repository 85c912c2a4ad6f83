// A persistent pool of native worker threads for fork-join loops.
//
// `num_threads` counts the calling thread: the pool starts num_threads - 1
// workers once, and ParallelFor() runs on them and on the caller. Each thread
// owns the same contiguous share of the items from job to job (so a world
// stays on one core and in its cache) and, once done with it, claims what is
// left of the others' shares, so a slow world does not hold up the others. ParallelFor neither allocates nor takes a lock on its fast path:
// workers spin briefly for the next job before sleeping on a condition
// variable, which keeps back-to-back steps cheap without burning a core while
// the caller runs Python.
//
// Besides fork-join jobs, the pool runs asynchronous items (Submit/Collect):
// the caller submits items and returns at once; the workers run them, each
// taking the items of its own share first (the same contiguous blocks as
// ParallelFor, so a world keeps its core), and publish them as done in a
// completion ring; Collect() takes the first `count` done, running queued
// items on the caller while it waits. An item is in flight from Submit until
// Collect returns it; the owner must never submit an item in flight, which
// bounds every queue by the number of items and keeps them allocation-free.
//
// In a child process made by fork() (where the workers do not exist), the
// pool abandons the parent's workers and their synchronization without
// touching them and starts new ones on the next ParallelFor; destroying it
// there never joins or waits (see fork_guard.h).
//
// A thread-start hook, given to the constructor, runs first on every worker
// (and on the workers restarted in a forked child), and the constructor
// returns only once each has run it: the owner makes there whatever a job
// would otherwise make lazily on its first item (thread-local state, whose
// first touch allocates). A worker then never allocates after start-up, so a
// fork() can never catch one inside malloc, whose locks the child would
// inherit held (glibc guards its own malloc at fork; ASan's allocator, of
// GCC 12, does not, and the forked child hung in its first allocation).
#pragma once

#include <cstdint>
#include <memory>

namespace joltgym {

class ThreadPool {
 public:
  // A job: fn(context, item) for item in [0, count).
  using Fn = void (*)(void* context, int item);

  // Run first on each worker thread (see above); must not throw.
  using ThreadStart = void (*)();

  // Throws std::runtime_error, after stopping and joining the workers already
  // started, if a worker thread cannot be created.
  explicit ThreadPool(int num_threads, ThreadStart thread_start = nullptr);
  ~ThreadPool();  // joins the workers (not in a forked child: see above)
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Runs fn over [0, count) and returns when every item is done. Not
  // reentrant: one ParallelFor at a time per pool. In a forked child it first
  // restarts the workers (and throws like the constructor if it cannot).
  //
  // With an interrupt poll set (SetInterruptPoll), the calling thread calls
  // it between its items and while it waits for the workers, at most every
  // kPollInterval; once it returns true the items not yet started are
  // skipped and ParallelFor returns false. Otherwise it returns true. Items
  // run with a SimulationPoll set (simulation_poll.h) on every thread, so a
  // long simulation inside one stops too (its item learns it through
  // TakeSimulationInterrupted); other items run whole or not at all.
  bool ParallelFor(int count, Fn fn, void* context);

  template <typename Body>
  bool ParallelFor(int count, Body& body) {
    return ParallelFor(
        count, [](void* ctx, int i) { (*static_cast<Body*>(ctx))(i); }, &body);
  }

  // A long job's chance to notice an interruption (a pending signal: see the
  // Python binding), called on the thread that runs ParallelFor; true stops
  // the job. nullptr (the default) never polls.
  using Poll = bool (*)(void* context);
  static constexpr int kPollIntervalMs = 20;
  void SetInterruptPoll(Poll poll, void* context) {
    poll_ = poll;
    poll_context_ = context;
  }

  // Asynchronous items fn(context, item), item in [0, num_items): sets the
  // job for later Submit calls (allocates; call it while nothing is in flight).
  void SetAsyncJob(int num_items, Fn fn, void* context);
  // Queues `count` items (none in flight) and returns without waiting.
  void Submit(const int* items, int count);
  // Publishes `count` items as done without running them (they count as in
  // flight until collected).
  void SubmitDone(const int* items, int count);
  // Waits until `count` submitted items are done (running queued ones on the
  // calling thread meanwhile) and writes them to `out` in completion order.
  // The caller guarantees at least `count` items are in flight.
  void Collect(int* out, int count);
  // The same, calling the interrupt poll (SetInterruptPoll) while it waits,
  // at most every kPollIntervalMs; once the poll returns true it gives back
  // what it had collected (the next Collect returns those items first, each
  // still in flight) and returns false. Without a poll, Collect.
  bool CollectOrInterrupt(int* out, int count);

  // Test hook: the next `count` worker-thread creations fail as if the
  // system refused them (std::system_error), then creation works again.
  static void FailNextThreadStarts(int count);

 private:
  struct Crew;  // the workers and everything they synchronize on

  void RestartIfForked();

  int num_threads_;
  ThreadStart thread_start_;
  std::uint64_t fork_generation_;
  std::unique_ptr<Crew> crew_;
  Poll poll_ = nullptr;
  void* poll_context_ = nullptr;
  int async_items_ = 0;
  Fn async_fn_ = nullptr;
  void* async_context_ = nullptr;
};

}  // namespace joltgym
