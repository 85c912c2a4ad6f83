// Telling a forked child from its parent. Threads do not survive fork(): in
// the child, a pool's worker threads are gone and its mutexes and condition
// variables may be held or waited on by threads that no longer exist, so
// joining, notifying or locking them can hang forever. Objects that own
// threads or locks remember the generation they were made in and, when it
// changes, abandon (leak) those and start over instead of touching them.
#pragma once

#include <cstdint>

namespace joltgym {

// Starts at 0 and is incremented in every child process right after fork()
// (pthread_atfork); the first call registers the handler.
std::uint64_t ForkGeneration();

}  // namespace joltgym
