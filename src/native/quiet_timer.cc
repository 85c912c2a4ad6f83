#include "quiet_timer.h"

#include <mujoco/mujoco.h>

#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>

namespace joltgym {

namespace {

// Initial-exec: a plain segment-relative load, not a __tls_get_addr call, as
// the forwarder runs dozens of times per mj_step.
__attribute__((tls_model("initial-exec"))) thread_local bool t_quiet = false;
// A process may hold two copies of this code (the Python extension and
// libjoltgym_marl, loaded by ctypes), each with its own forwarder. t_probing
// marks this copy's check of whether a callback leads back to it; t_depth
// breaks any forwarding cycle instead of looping forever.
__attribute__((tls_model("initial-exec"))) thread_local bool t_probing = false;
__attribute__((tls_model("initial-exec"))) thread_local bool t_probe_hit = false;
__attribute__((tls_model("initial-exec"))) thread_local int t_depth = 0;

std::atomic<mjfTime> g_forwarded{nullptr};
std::atomic<bool> g_enabled{true};
std::mutex g_install_mutex;

mjtNum QuietTime() {
  if (t_probing) {
    t_probe_hit = true;
    return 0;
  }
  if (t_quiet || t_depth > 0) return 0;
  const mjfTime forwarded = g_forwarded.load(std::memory_order_acquire);
  if (forwarded == nullptr) return 0;
  ++t_depth;
  const mjtNum now = forwarded();
  --t_depth;
  return now;
}

// Whether `timer` is code of a copy of this library (the Python extension
// `_core.*` or `libjoltgym_marl*`), found by the file it was loaded from.
// Only those are ever called by the probe below: a user's callback is not.
bool IsOurCopy(mjfTime timer) {
  Dl_info info{};
  void* address = reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(timer));
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return false;
  const char* slash = std::strrchr(info.dli_fname, '/');
  const char* base = slash != nullptr ? slash + 1 : info.dli_fname;
  return std::strncmp(base, "libjoltgym_marl", 15) == 0 || std::strncmp(base, "_core.", 6) == 0;
}

// Whether `timer` is another copy's forwarder that (directly or through
// others) forwards to this copy's: adopting it would make a cycle.
bool LeadsBackHere(mjfTime timer) {
  if (!IsOurCopy(timer)) return false;
  t_probe_hit = false;
  t_probing = true;
  (void)timer();
  t_probing = false;
  return t_probe_hit;
}

mjfTime LoadTimer() { return __atomic_load_n(&mjcb_time, __ATOMIC_ACQUIRE); }

}  // namespace

void ShieldMujocoTimer() noexcept {
  const mjfTime current = __atomic_load_n(&mjcb_time, __ATOMIC_RELAXED);
  if (current == nullptr || current == &QuietTime) return;
  if (!g_enabled.load(std::memory_order_relaxed)) return;
  // Rare: someone (re)installed a timer. try_lock, so that a thread that
  // cannot take the lock (another is installing, or a fork left it held)
  // never waits: the next guarded call tries again.
  std::unique_lock<std::mutex> lock(g_install_mutex, std::try_to_lock);
  if (!lock.owns_lock()) return;
  const mjfTime seen = LoadTimer();
  if (seen == nullptr || seen == &QuietTime) return;
  // Another copy's forwarder that already forwards to this one: the chain is
  // complete (ours is behind it), adopting it would close a loop.
  if (LeadsBackHere(seen)) return;
  g_forwarded.store(seen, std::memory_order_release);
  mjfTime expected = seen;
  // Only if nobody changed it meanwhile; otherwise the next call retries.
  __atomic_compare_exchange_n(&mjcb_time, &expected, &QuietTime, false, __ATOMIC_ACQ_REL,
                              __ATOMIC_ACQUIRE);
}

void EnableTimerShield(bool enabled) noexcept {
  std::lock_guard<std::mutex> lock(g_install_mutex);
  g_enabled.store(enabled, std::memory_order_relaxed);
  if (enabled) return;
  mjfTime expected = &QuietTime;
  __atomic_compare_exchange_n(&mjcb_time, &expected, g_forwarded.load(std::memory_order_acquire),
                              false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

bool SetTimerQuiet() noexcept {
  const bool was = t_quiet;
  t_quiet = true;
  return was;
}

void RestoreTimerQuiet(bool was_quiet) noexcept { t_quiet = was_quiet; }

bool MujocoTimerShielded() noexcept { return LoadTimer() == &QuietTime; }

unsigned long long ForwardedMujocoTimer() noexcept {
  return static_cast<unsigned long long>(
      reinterpret_cast<std::uintptr_t>(g_forwarded.load(std::memory_order_acquire)));
}

}  // namespace joltgym
