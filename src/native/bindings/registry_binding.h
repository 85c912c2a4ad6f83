// The task registry and the named constants, as the Python side sees them:
// _core.tasks() is what every Python class, registration, test and benchmark
// list is derived from.
#pragma once

#include <pybind11/pybind11.h>

namespace joltgym::bindings {

void DefineRegistry(pybind11::module_& m);

}  // namespace joltgym::bindings
