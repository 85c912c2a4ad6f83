// Telling a forked child from its parent. Threads do not survive fork(): in
// the child, a pool's worker threads are gone and its mutexes and condition
// variables may be held or waited on by threads that no longer exist, so
// joining, notifying or locking them can hang forever. Objects that own
// threads or locks remember the generation they were made in and, when it
// changes, abandon (leak) those and start over instead of touching them.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

namespace joltgym {

// Starts at 0 and is incremented in every child process right after fork()
// (pthread_atfork); the first call registers the handler.
std::uint64_t ForkGeneration();

// A mutex as fork() leaves it. In a forked child, a thread that held it
// (another thread of the parent, inside a call) does not exist and never
// unlocks it, so the first Get() in the child makes a new mutex and leaks
// the old one (destroying a held mutex is undefined). Get() is safe from any
// number of threads; one of them renews it, under a process-wide lock that
// the fork handler itself renews.
class ForkAwareMutex {
 public:
  ForkAwareMutex();
  ~ForkAwareMutex();
  ForkAwareMutex(const ForkAwareMutex&) = delete;
  ForkAwareMutex& operator=(const ForkAwareMutex&) = delete;

  // This process's mutex; *renewed (if given) says whether this call made it
  // (the first call in a forked child), so the caller can forget what the
  // parent's threads were doing.
  std::mutex& Get(bool* renewed = nullptr);

 private:
  std::atomic<std::mutex*> mutex_;
  std::atomic<std::uint64_t> generation_;
};

}  // namespace joltgym
