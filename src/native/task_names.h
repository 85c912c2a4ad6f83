// How tasks are named. A task has one native name, in snake_case
// ("half_cheetah", "cheetah_race"), and a title, the same words in CamelCase
// ("HalfCheetah", "CheetahRace"); every other name of it is derived from
// those two (TaskSpellings). TaskRegistry::Find resolves any of them, spelled
// loosely (NameKey), to the one task they name.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace joltgym {

struct TaskInfo;

// The names a task is known by: its native name, its title, its env_id
// (Gymnasium's "joltgym_marl/<Title>-v0", or a game's PettingZoo module
// "<name>_v0"), the reference_id of the env it reproduces ("<Title>-v5"), and
// a single-agent task's classes ("<Title>Core", "<Title>Env", "<Title>VectorEnv").
std::vector<std::string> TaskSpellings(const TaskInfo& info);

// What two names are compared by: lower case, letters and digits only, and no
// leading "joltgym_marl" namespace. "HalfCheetah-v0", "half-cheetah_v0" and
// "joltgym_marl/HalfCheetah-v0" all give "halfcheetahv0".
std::string NameKey(const std::string& name);

// Levenshtein distance: the fewest single-character insertions, deletions and
// substitutions that turn `a` into `b`.
std::size_t EditDistance(const std::string& a, const std::string& b);

// The native names of the tasks among `tasks` whose names come close to `name`
// (a typo away, or containing it), closest first; at most `limit`.
std::vector<std::string> CloseTaskNames(const std::string& name, const std::vector<const TaskInfo*>& tasks,
                                        std::size_t limit = 5);

}  // namespace joltgym
