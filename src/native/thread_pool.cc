#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "fork_guard.h"
#include "simulation_poll.h"

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
// Then a caller waiting for async items yields (stays runnable, as
// ParallelFor's caller does) up to this many times before it sleeps.
constexpr int kYieldIterations = 1000;

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
  // The current job's interrupt poll (the caller's alone) and whether it
  // stopped the job: every thread then skips the items not yet started.
  Poll poll = nullptr;
  void* poll_context = nullptr;
  std::chrono::steady_clock::time_point next_poll;
  std::atomic<bool> cancelled{false};
  int num_shares = 0;
  std::unique_ptr<Share[]> shares;
  std::atomic<int> active_workers{0};

  // Asynchronous items. Queue t holds the submitted items of share t: one
  // producer (the submitting thread) and any thread claiming. A queue never
  // holds more than its share's items, as an item is never submitted twice
  // while in flight, so its ring is the share's size.
  struct alignas(64) Queue {
    std::atomic<std::uint64_t> head{0};
    alignas(64) std::atomic<std::uint64_t> tail{0};
    std::unique_ptr<std::atomic<int>[]> slots;
    std::uint64_t capacity = 1;
  };
  // The completion ring: any thread publishes, only the collector consumes.
  // A slot holds the item done at position `seq - 1`.
  struct alignas(16) Done {
    std::atomic<std::uint64_t> seq{0};
    std::atomic<int> item{-1};
  };
  Fn async_fn = nullptr;
  void* async_context = nullptr;
  int async_items = 0;
  std::unique_ptr<Queue[]> queues;
  std::unique_ptr<Done[]> done;
  alignas(64) std::atomic<std::uint64_t> done_tail{0};
  alignas(64) std::uint64_t done_head = 0;  // the collector's alone
  std::atomic<bool> collector_waiting{false};
  std::condition_variable done_wake;

  // Workers that have run the thread-start hook (under `mutex`).
  int started = 0;
  std::condition_variable started_wake;

  Crew(int num_workers, ThreadStart thread_start)
      : num_shares(num_workers + 1), shares(new Share[num_workers + 1]) {
    workers.reserve(num_workers);
    for (int i = 0; i < num_workers; ++i) {
      try {
        if (g_fail_thread_starts.load(std::memory_order_relaxed) > 0 &&
            g_fail_thread_starts.fetch_sub(1, std::memory_order_relaxed) > 0) {
          throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
        }
        workers.emplace_back([this, i, thread_start] {
          if (thread_start != nullptr) thread_start();
          {
            std::lock_guard<std::mutex> lock(mutex);
            ++started;
          }
          started_wake.notify_all();
          WorkerLoop(i + 1);
        });
      } catch (const std::system_error& e) {
        StopAndJoin();
        throw std::runtime_error("could not start native worker thread " + std::to_string(i + 1) +
                                 " of " + std::to_string(num_workers) + " (" + e.what() +
                                 "); expected the system to allow " + std::to_string(num_workers) +
                                 " more threads: ask for fewer num_threads, or raise the "
                                 "process's thread limit");
      }
    }
    // Returns once every worker is past its start-up (see thread_pool.h).
    std::unique_lock<std::mutex> lock(mutex);
    started_wake.wait(lock, [&] { return started == num_workers; });
  }

  ~Crew() { StopAndJoin(); }

  void SetAsync(int num_items, Fn item_fn, void* item_context) {
    async_fn = item_fn;
    async_context = item_context;
    async_items = num_items;
    if (num_items <= 0) return;
    queues.reset(new Queue[num_shares]);
    for (int t = 0; t < num_shares; ++t) {
      const long begin = static_cast<long>(num_items) * t / num_shares;
      const long end = static_cast<long>(num_items) * (t + 1) / num_shares;
      queues[t].capacity = static_cast<std::uint64_t>(std::max(1L, end - begin));
      queues[t].slots.reset(new std::atomic<int>[queues[t].capacity]);
    }
    done.reset(new Done[num_items]);
    done_tail.store(0, std::memory_order_relaxed);
    done_head = 0;
  }

  // The share (thread) whose contiguous block holds `item`.
  int Owner(int item) const {
    return static_cast<int>((static_cast<long>(item + 1) * num_shares - 1) / async_items);
  }

  bool AsyncPending() const {
    if (!queues) return false;
    for (int t = 0; t < num_shares; ++t) {
      if (queues[t].head.load(std::memory_order_seq_cst) <
          queues[t].tail.load(std::memory_order_seq_cst)) {
        return true;
      }
    }
    return false;
  }

  // Claims a queued item, from this thread's own share first; -1 if none.
  int Claim(int self) {
    if (!queues) return -1;
    for (int k = 0; k < num_shares; ++k) {
      Queue& q = queues[(self + k) % num_shares];
      std::uint64_t h = q.head.load(std::memory_order_acquire);
      while (h < q.tail.load(std::memory_order_acquire)) {
        // Read before claiming: the slot cannot be reused while position h
        // is unclaimed, and a failed claim discards what was read.
        const int item = q.slots[h % q.capacity].load(std::memory_order_relaxed);
        if (q.head.compare_exchange_weak(h, h + 1, std::memory_order_acq_rel,
                                         std::memory_order_acquire)) {
          return item;
        }
      }
    }
    return -1;
  }

  void Publish(int item) {
    const std::uint64_t pos = done_tail.fetch_add(1, std::memory_order_relaxed);
    Done& slot = done[pos % static_cast<std::uint64_t>(async_items)];
    slot.item.store(item, std::memory_order_relaxed);
    slot.seq.store(pos + 1, std::memory_order_seq_cst);  // releases the item's results
    if (collector_waiting.load(std::memory_order_seq_cst)) {
      std::lock_guard<std::mutex> lock(mutex);
      done_wake.notify_all();
    }
  }

  void RunAsync(int self) {
    while (!stop.load(std::memory_order_relaxed)) {
      const int item = Claim(self);
      if (item < 0) return;
      async_fn(async_context, item);
      Publish(item);
    }
  }

  void Submit(const int* items, int count) {
    // Slots first, then one tail store per queue (it releases the slots and
    // whatever the caller wrote for the items).
    for (int t = 0; t < num_shares; ++t) {
      Queue& q = queues[t];
      const std::uint64_t start = q.tail.load(std::memory_order_relaxed);
      std::uint64_t tail = start;
      for (int k = 0; k < count; ++k) {
        if (Owner(items[k]) != t) continue;
        q.slots[tail++ % q.capacity].store(items[k], std::memory_order_relaxed);
      }
      if (tail != start) q.tail.store(tail, std::memory_order_seq_cst);
    }
    if (sleepers.load(std::memory_order_seq_cst) > 0) {
      std::lock_guard<std::mutex> lock(mutex);
      wake.notify_all();
    }
  }

  // With `interrupt` (the caller's poll), returns false once it returns
  // true, after rewinding done_head over the items taken: their slots
  // cannot be reused meanwhile (no more than async_items are in flight, and
  // these still are), so the next Collect reads them again.
  bool Collect(int* out, int count, Poll interrupt = nullptr, void* interrupt_context = nullptr) {
    const std::uint64_t capacity = static_cast<std::uint64_t>(async_items);
    int got = 0;
    int spins = 0;
    auto due = std::chrono::steady_clock::now() + std::chrono::milliseconds(kPollIntervalMs);
    auto interrupted = [&] {
      if (interrupt == nullptr || std::chrono::steady_clock::now() < due) return false;
      if (interrupt(interrupt_context)) {
        done_head -= static_cast<std::uint64_t>(got);
        return true;
      }
      due = std::chrono::steady_clock::now() + std::chrono::milliseconds(kPollIntervalMs);
      return false;
    };
    while (got < count) {
      Done& slot = done[done_head % capacity];
      if (slot.seq.load(std::memory_order_acquire) == done_head + 1) {
        out[got++] = slot.item.load(std::memory_order_relaxed);
        ++done_head;
        spins = 0;
        continue;
      }
      const int item = Claim(0);
      if (item >= 0) {  // help rather than wait
        async_fn(async_context, item);
        Publish(item);
        if (interrupted()) return false;
        continue;
      }
      if (spins < kSpinIterations) {
        JOLTGYM_PAUSE();
        if ((++spins & 63) == 0 && interrupted()) return false;
        continue;
      }
      if (spins < kSpinIterations + kYieldIterations) {
        // As ParallelFor's wait: yield, so that a descheduled worker on an
        // oversubscribed machine gets the core back, and stay runnable.
        std::this_thread::yield();
        ++spins;
        if (interrupted()) return false;
        continue;
      }
      // Every remaining item is running on a worker: sleep until the next
      // one in completion order is published (polling meanwhile, if asked).
      const std::uint64_t want = done_head + 1;
      auto published = [&] { return slot.seq.load(std::memory_order_seq_cst) == want; };
      collector_waiting.store(true, std::memory_order_seq_cst);
      {
        std::unique_lock<std::mutex> lock(mutex);
        if (interrupt == nullptr) {
          done_wake.wait(lock, published);
        } else {
          done_wake.wait_for(lock, std::chrono::milliseconds(kPollIntervalMs), published);
        }
      }
      collector_waiting.store(false, std::memory_order_seq_cst);
      if (interrupted()) return false;
    }
    return true;
  }

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

  // The caller's poll, when due: true once the job is cancelled.
  bool PollDue() {
    if (poll == nullptr) return false;
    if (cancelled.load(std::memory_order_relaxed)) return true;
    const auto now = std::chrono::steady_clock::now();
    if (now < next_poll) return false;
    if (poll(poll_context)) {
      cancelled.store(true, std::memory_order_relaxed);
      return true;
    }
    next_poll = std::chrono::steady_clock::now() + std::chrono::milliseconds(kPollIntervalMs);
    return false;
  }

  void StartPolling(Poll job_poll, void* job_poll_context) {
    poll = job_poll;
    poll_context = job_poll_context;
    cancelled.store(false, std::memory_order_relaxed);
    next_poll = std::chrono::steady_clock::now() + std::chrono::milliseconds(kPollIntervalMs);
  }

  void RunShare(Share& share, bool caller) {
    for (;;) {
      if (caller ? PollDue() : cancelled.load(std::memory_order_relaxed)) return;
      const int item = share.next.fetch_add(1, std::memory_order_relaxed);
      if (item >= share.end) return;
      fn(context, item);
    }
  }

  // With a poll, an item that runs a long simulation (a world's step of many
  // timesteps: a Humanoid's on Jolt took minutes) notices the cancellation
  // inside itself too, as a single world's step does (simulation_poll.h): the
  // caller polls there, the workers read the flag the caller's poll sets.
  static bool CallerPoll(void* self) { return static_cast<Crew*>(self)->PollDue(); }
  static bool WorkerPoll(void* self) {
    return static_cast<Crew*>(self)->cancelled.load(std::memory_order_relaxed);
  }
  SimulationPoll::Fn SimulationPollOf(bool caller) const {
    if (poll == nullptr) return nullptr;
    return caller ? &CallerPoll : &WorkerPoll;
  }

  void RunItems(int self) {
    const SimulationPoll scope(SimulationPollOf(self == 0), this);
    for (int k = 0; k < num_shares; ++k) RunShare(shares[(self + k) % num_shares], self == 0);
  }

  // The serial job (no workers): the same polling, on the caller.
  bool RunSerial(int n, Fn job, void* job_context, Poll job_poll, void* job_poll_context) {
    StartPolling(job_poll, job_poll_context);
    const SimulationPoll scope(SimulationPollOf(true), this);
    for (int i = 0; i < n; ++i) {
      if (PollDue()) return false;
      job(job_context, i);
    }
    return true;
  }

  bool Run(int n, Fn job, void* job_context, Poll job_poll, void* job_poll_context) {
    fn = job;
    context = job_context;
    StartPolling(job_poll, job_poll_context);
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
        (void)PollDue();
        std::this_thread::yield();
      }
    }
    return !cancelled.load(std::memory_order_relaxed);
  }

  void WorkerLoop(int self) {
    // Jobs are counted from construction: a worker that starts late must
    // still run the first job, so it does not read the current generation.
    std::uint64_t seen = 0;
    for (;;) {
      int spins = 0;
      while (generation.load(std::memory_order_acquire) == seen &&
             !stop.load(std::memory_order_acquire) && !AsyncPending() && spins < kSpinIterations) {
        JOLTGYM_PAUSE();
        ++spins;
      }
      if (generation.load(std::memory_order_acquire) == seen &&
          !stop.load(std::memory_order_acquire) && !AsyncPending()) {
        std::unique_lock<std::mutex> lock(mutex);
        sleepers.fetch_add(1, std::memory_order_seq_cst);
        wake.wait(lock, [&] {
          return generation.load(std::memory_order_seq_cst) != seen ||
                 stop.load(std::memory_order_acquire) || AsyncPending();
        });
        sleepers.fetch_sub(1, std::memory_order_acq_rel);
      }
      if (stop.load(std::memory_order_acquire)) return;
      const std::uint64_t current = generation.load(std::memory_order_acquire);
      if (current != seen) {
        seen = current;
        RunItems(self);
        active_workers.fetch_sub(1, std::memory_order_acq_rel);
        continue;
      }
      RunAsync(self);
    }
  }
};

ThreadPool::ThreadPool(int num_threads, ThreadStart thread_start)
    : num_threads_(num_threads < 1 ? 1 : num_threads),
      thread_start_(thread_start),
      fork_generation_(ForkGeneration()),
      crew_(std::make_unique<Crew>(num_threads_ - 1, thread_start_)) {}

ThreadPool::~ThreadPool() {
  // In a forked child the parent's workers do not exist: joining them, or
  // notifying a condition variable they waited on, would never return.
  if (ForkGeneration() != fork_generation_) (void)crew_.release();
}

void ThreadPool::RestartIfForked() {
  if (ForkGeneration() == fork_generation_) return;
  // A forked child: abandon the parent's crew untouched (and the async items
  // it held) and start anew.
  (void)crew_.release();
  crew_ = std::make_unique<Crew>(num_threads_ - 1, thread_start_);
  crew_->SetAsync(async_items_, async_fn_, async_context_);
  fork_generation_ = ForkGeneration();
}

void ThreadPool::SetAsyncJob(int num_items, Fn fn, void* context) {
  RestartIfForked();
  async_items_ = num_items;
  async_fn_ = fn;
  async_context_ = context;
  crew_->SetAsync(num_items, fn, context);
}

void ThreadPool::Submit(const int* items, int count) {
  if (count <= 0) return;
  RestartIfForked();
  crew_->Submit(items, count);
}

void ThreadPool::SubmitDone(const int* items, int count) {
  RestartIfForked();
  for (int k = 0; k < count; ++k) crew_->Publish(items[k]);
}

void ThreadPool::Collect(int* out, int count) {
  if (count <= 0) return;
  RestartIfForked();
  crew_->Collect(out, count);
}

bool ThreadPool::CollectOrInterrupt(int* out, int count) {
  if (count <= 0) return true;
  RestartIfForked();
  return crew_->Collect(out, count, poll_, poll_context_);
}

bool ThreadPool::ParallelFor(int count, Fn fn, void* context) {
  if (count <= 0) return true;
  RestartIfForked();
  if (crew_->workers.empty() || count == 1) {
    return crew_->RunSerial(count, fn, context, poll_, poll_context_);
  }
  return crew_->Run(count, fn, context, poll_, poll_context_);
}

void ThreadPool::FailNextThreadStarts(int count) {
  g_fail_thread_starts.store(count, std::memory_order_relaxed);
}

}  // namespace joltgym
