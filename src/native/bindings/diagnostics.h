// MuJoCo's errors and warnings, raised in Python on the calling thread after
// a native call (the native core collects them; see ../mujoco_errors.h).
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <utility>
#include <vector>

#include "../mujoco_errors.h"

namespace joltgym::bindings {

namespace py = pybind11;

// Registers MujocoError (a RuntimeError; MemoryError is used when MuJoCo ran
// out of memory) and MujocoWarning (a RuntimeWarning) on the module.
void DefineDiagnostics(py::module_& m);

// Raises the warnings of `reports` (world index, report) as MujocoWarning,
// one per kind of message with the worlds that reported it, then throws
// MujocoError if any world failed. `call` names the call ("step_all()"),
// `reset_hint` how to recover ("reset_all() or reset_one(i)"). With the
// GIL held; a warning filter set to "error" raises the warning instead.
void RaiseReports(const std::vector<std::pair<int, MujocoReport>>& reports, const std::string& call,
                  const std::string& reset_hint, bool name_worlds);

// The same for one report (a single world).
void RaiseReport(MujocoReport& report, const std::string& call, const std::string& reset_hint);

// Raises the warnings that compiling models on this thread left in
// ThreadConstructionReport() (and clears it).
void RaiseConstructionWarnings(const std::string& owner);

}  // namespace joltgym::bindings
