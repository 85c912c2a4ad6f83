// WorldPool: num_envs worlds of any task stepped on native threads, results in
// NumPy arrays allocated once by the binding.
#pragma once

#include <pybind11/pybind11.h>

namespace joltgym::bindings {

void DefinePool(pybind11::module_& m);

}  // namespace joltgym::bindings
