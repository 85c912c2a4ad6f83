// One native world behind a Python object: the wrapper shared by
// SingleAgentCore (one robot, Gymnasium-shaped results) and MultiAgentEnv (a
// shared world of a game, per-agent arrays).
#pragma once

#include <pybind11/pybind11.h>

namespace joltgym::bindings {

void DefineWorlds(pybind11::module_& m);

}  // namespace joltgym::bindings
