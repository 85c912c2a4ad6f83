// MaMuJoCoPool: num_envs MaMuJoCo worlds (a robot plus an observation plan)
// on a WorldPool; the Python package joltgym_marl.mamujoco builds the plan
// and the PettingZoo / batched surfaces over it.
#pragma once

#include <pybind11/pybind11.h>

namespace joltgym::bindings {

void DefineMaMuJoCo(pybind11::module_& m);

}  // namespace joltgym::bindings
