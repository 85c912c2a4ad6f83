// joltgym_marl._core: the Python face of the native core.
//
// One file a concept: registry_binding (the task registry, named constants,
// the info decoder), world_binding (one world: SingleAgentCore and
// MultiAgentEnv), pool_binding (WorldPool), rng_binding (test hooks of the
// per-world generator). Every argument is validated before the GIL is
// released; the worker threads never see a Python object.
#include <pybind11/pybind11.h>

#include "../errors.h"
#include "diagnostics.h"
#include "mamujoco_binding.h"
#include "pool_binding.h"
#include "registry_binding.h"
#include "rng_binding.h"
#include "world_binding.h"

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
  m.doc() = "Native MuJoCo worlds, pools and tasks behind joltgym_marl";

  py::register_exception<joltgym::FileNotFound>(m, "ModelFileNotFound", PyExc_FileNotFoundError);
  py::register_exception<joltgym::StateError>(m, "StateError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const joltgym::BadType& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    }
  });
  joltgym::bindings::DefineDiagnostics(m);

  joltgym::bindings::DefineRegistry(m);
  joltgym::bindings::DefineWorlds(m);
  joltgym::bindings::DefinePool(m);
  joltgym::bindings::DefineRng(m);
  joltgym::bindings::DefineMaMuJoCo(m);
}
