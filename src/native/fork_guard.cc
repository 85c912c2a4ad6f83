#include "fork_guard.h"

#include <pthread.h>

#include <atomic>

namespace joltgym {

namespace {

std::atomic<std::uint64_t> g_generation{0};

void AfterForkInChild() { g_generation.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

std::uint64_t ForkGeneration() {
  static const bool registered = [] {
    pthread_atfork(nullptr, nullptr, &AfterForkInChild);
    return true;
  }();
  (void)registered;
  return g_generation.load(std::memory_order_relaxed);
}

}  // namespace joltgym
