// Test hooks of the per-world generator: the raw outputs and the draws a
// seeded Rng makes, to be compared with NumPy's Generator(PCG64(seed)).
#pragma once

#include <pybind11/pybind11.h>

namespace joltgym::bindings {

void DefineRng(pybind11::module_& m);

}  // namespace joltgym::bindings
