#include "fork_guard.h"

#include <pthread.h>

#include <atomic>

namespace joltgym {

namespace {

std::atomic<std::uint64_t> g_generation{0};

// Serializes ForkAwareMutex renewals. A parent thread may hold it at the
// fork (renewing in a grandparent's child), so the child makes its own.
std::atomic<std::mutex*> g_renewal{nullptr};

std::mutex& RenewalMutex() {
  std::mutex* current = g_renewal.load(std::memory_order_acquire);
  if (current != nullptr) return *current;
  auto* made = new std::mutex;
  if (g_renewal.compare_exchange_strong(current, made, std::memory_order_acq_rel)) return *made;
  delete made;  // another thread's won
  return *current;
}

void AfterForkInChild() {
  // The child runs this one thread now; the parent's lock (held or not) is left.
  g_renewal.store(new std::mutex, std::memory_order_release);
  g_generation.fetch_add(1, std::memory_order_release);
}

}  // namespace

std::uint64_t ForkGeneration() {
  static const bool registered = [] {
    pthread_atfork(nullptr, nullptr, &AfterForkInChild);
    return true;
  }();
  (void)registered;
  return g_generation.load(std::memory_order_acquire);
}

ForkAwareMutex::ForkAwareMutex() : mutex_(new std::mutex), generation_(ForkGeneration()) {}

ForkAwareMutex::~ForkAwareMutex() {
  // In a forked child that never renewed it, a vanished thread may hold it.
  if (generation_.load(std::memory_order_acquire) == ForkGeneration()) {
    delete mutex_.load(std::memory_order_acquire);
  }
}

std::mutex& ForkAwareMutex::Get(bool* renewed) {
  if (renewed != nullptr) *renewed = false;
  const std::uint64_t generation = ForkGeneration();
  if (generation_.load(std::memory_order_acquire) == generation) {
    return *mutex_.load(std::memory_order_acquire);
  }
  std::lock_guard<std::mutex> lock(RenewalMutex());
  if (generation_.load(std::memory_order_acquire) != generation) {
    mutex_.store(new std::mutex, std::memory_order_release);  // the old one leaks
    generation_.store(generation, std::memory_order_release);
    if (renewed != nullptr) *renewed = true;
  }
  return *mutex_.load(std::memory_order_acquire);
}

}  // namespace joltgym
