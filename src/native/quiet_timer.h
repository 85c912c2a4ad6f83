// MuJoCo's profiling timer, kept off the core's own MuJoCo calls.
//
// mj_step times its stages through the process-wide callback mjcb_time: each
// timed section calls it on entry and exit (dozens of calls per mj_step)
// whenever it is set, and MuJoCo offers no per-model or per-data switch (no
// mjDSBL_ flag covers it). MuJoCo's Python bindings set it, to a clock read,
// when `mujoco` is imported, so in such a process every step of every world
// paid for those clock reads (HalfCheetah at 64 worlds: 95k -> 81k steps/s).
//
// The core's calls run inside GuardMujoco, which marks the thread quiet for
// their duration and calls ShieldMujocoTimer(): if mjcb_time is set to a
// callback other than ours, that callback is remembered and mjcb_time is
// replaced by a forwarder that returns 0 on a quiet thread and calls the
// remembered callback on any other. The core's worlds then skip the clock,
// while every other mjData in the process (mujoco's own users) keeps its
// timers, and a callback set later (mujoco.set_mjcb_time, another import) is
// wrapped again on the core's next call. Setting it to nothing is respected.
#pragma once

namespace joltgym {

// One relaxed load when mjcb_time is unset or already ours.
void ShieldMujocoTimer() noexcept;

// Marks this thread quiet (MuJoCo's timer reads 0 on it) and returns whether
// it was before, for RestoreTimerQuiet.
bool SetTimerQuiet() noexcept;
void RestoreTimerQuiet(bool was_quiet) noexcept;

// Test hooks: whether mjcb_time currently is our forwarder, and the callback
// it forwards to (as an address, 0 for none).
bool MujocoTimerShielded() noexcept;
unsigned long long ForwardedMujocoTimer() noexcept;
// Benchmark hook: with `enabled` false, puts the forwarded callback back and
// stops shielding (to measure what the shield saves); true resumes.
void EnableTimerShield(bool enabled) noexcept;

}  // namespace joltgym
