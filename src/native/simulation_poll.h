// A long Simulate's chance to notice an interruption (a pending signal) on
// the thread that runs it: one world's step is frame_skip (up to 1000)
// timesteps of a model of any size, so it can run for seconds on its own.
//
// While a SimulationPoll is alive on a thread, Simulate (task.h) calls its
// poll between timesteps, at most every kPollIntervalMs; once the poll
// returns true Simulate skips the remaining timesteps and
// TakeSimulationInterrupted() is true (once). The world is then mid-step:
// World marks it interrupted, and only a reset may follow. Without a
// SimulationPoll (the pool's worker threads, the C ABI) Simulate never polls.
#pragma once

#include <chrono>

namespace joltgym {

class SimulationPoll {
 public:
  using Fn = bool (*)(void* context);
  static constexpr int kPollIntervalMs = 20;

  // A null `fn` sets none (a scope that changes nothing).
  SimulationPoll(Fn fn, void* context) : outer_(Current()) {
    if (fn != nullptr) Current() = State{fn, context};
  }
  ~SimulationPoll() { Current() = outer_; }
  SimulationPoll(const SimulationPoll&) = delete;
  SimulationPoll& operator=(const SimulationPoll&) = delete;

  // For Simulate: the poll set on this thread, or null.
  static Fn poll() { return Current().poll; }
  // Calls the poll if one is set and due; true once it asked to stop.
  static bool Due(std::chrono::steady_clock::time_point* next) {
    const State& state = Current();
    const auto now = std::chrono::steady_clock::now();
    if (now < *next) return false;
    if (state.poll(state.context)) {
      Interrupted() = true;
      return true;
    }
    *next = std::chrono::steady_clock::now() + std::chrono::milliseconds(kPollIntervalMs);
    return false;
  }
  static std::chrono::steady_clock::time_point FirstDue() {
    return std::chrono::steady_clock::now() + std::chrono::milliseconds(kPollIntervalMs);
  }

 private:
  struct State {
    Fn poll = nullptr;
    void* context = nullptr;
  };
  static State& Current() {
    thread_local State state;
    return state;
  }
  static bool& Interrupted() {
    thread_local bool interrupted = false;
    return interrupted;
  }
  friend bool TakeSimulationInterrupted();

  State outer_;
};

// True if a Simulate on this thread was interrupted since the last call.
inline bool TakeSimulationInterrupted() {
  bool& flag = SimulationPoll::Interrupted();
  const bool was = flag;
  flag = false;
  return was;
}

}  // namespace joltgym
