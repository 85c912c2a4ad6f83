// MuJoCo's errors and warnings, caught on the thread that raised them.
//
// MuJoCo reports through a log handler: an error (mju_error: out of stack
// memory in a step, an allocation failure, ...) must not return to the caller,
// and by default it prints to stdout, appends to MUJOCO_LOG.TXT in the working
// directory and calls exit(1); a warning prints and appends the same way.
// Every MuJoCo call the core makes runs inside GuardMujoco(): for its
// duration a thread-local handler (the one MuJoCo's own Python bindings and
// batch API install) records warnings into a MujocoReport and turns an error
// into a longjmp back to the guard, which returns false. Nothing is printed
// or written to disk, and the process never exits. The guard also keeps
// MuJoCo's profiling timer off the guarded calls (see quiet_timer.h).
//
// The longjmp skips every frame between the guard and MuJoCo's error call
// without running destructors, so the guarded code must keep no object with a
// non-trivial destructor alive across MuJoCo calls (the tasks' Reset, Step
// and Observe satisfy this: they hold numbers and pointers only).
#pragma once

#include <mujoco/mujoco.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace joltgym {

// What MuJoCo reported during guarded calls, kept until its owner takes it.
struct MujocoReport {
  enum class Error : std::uint8_t {
    kNone,
    kFailure,      // mju_error: the call was cut short
    kOutOfMemory,  // mju_error about memory (stack, arena or allocation)
  };

  Error error = Error::kNone;
  std::string error_message;
  // Warnings other than the instability ones (see IsInstabilityWarning), in
  // order, at most kMaxWarnings of them (the rest are counted).
  std::vector<std::string> warnings;
  int dropped_warnings = 0;

  static constexpr int kMaxWarnings = 16;

  bool failed() const { return error != Error::kNone; }
  bool empty() const { return error == Error::kNone && warnings.empty() && dropped_warnings == 0; }
  void Clear();
  // Moves `other`'s warnings (not its error) to the end of this report.
  void TakeWarnings(MujocoReport& other);
};

// Runs fn(context) with MuJoCo's messages on this thread going to `report`.
// Returns false if MuJoCo raised an error: fn was then cut short (see above)
// and `report` holds the message. Guards nest; the innermost one catches.
bool GuardMujoco(void (*fn)(void* context), void* context, MujocoReport* report) noexcept;

// The same for a callable: GuardMujoco([&] { mj_step(m, d); }, &report).
template <typename Body>
bool GuardMujoco(Body&& body, MujocoReport* report) noexcept {
  using Plain = std::remove_reference_t<Body>;
  return GuardMujoco([](void* ctx) { (*static_cast<Plain*>(ctx))(); },
                     const_cast<void*>(static_cast<const void*>(&body)), report);
}

// True for the warnings MuJoCo also counts in mjData.warning as a sign of a
// physics blow-up (bad qpos, qvel or qacc). The core reports those as
// `unstable` / info["physics_unstable"] (the episode is truncated), so they
// are dropped from reports rather than raised as Python warnings.
bool IsInstabilityWarning(const std::string& message);

// A key under which equal warnings of different worlds collapse: the
// mjtWarning kind for MuJoCo's counted warnings (whose texts differ by DOF,
// count and time), the text itself otherwise.
std::string WarningKey(const std::string& message);

// What the reports of one call (world index, report) say, in the words every
// front end uses: one warning text per kind of message, with the worlds that
// gave it, and the error (if a world failed). `call` names the call
// ("step_all()"), `reset_hint` how to recover ("reset_all() or reset_one(i)").
struct ReportSummary {
  std::vector<std::string> warnings;
  bool failed = false;
  bool out_of_memory = false;
  std::string error;  // when failed
};
ReportSummary SummarizeReports(const std::vector<std::pair<int, MujocoReport>>& reports,
                               const std::string& call, const std::string& reset_hint,
                               bool name_worlds);

// Warnings of a model being compiled on this thread (construction), kept until
// the binding takes them and raises them as Python warnings.
MujocoReport& ThreadConstructionReport();

}  // namespace joltgym
