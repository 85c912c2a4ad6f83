// Releasing the GIL around native work, safe at interpreter exit.
//
// A thread that takes the GIL back while the interpreter is finalizing (a
// daemon thread inside step_all when the main thread exits) must not run
// Python again. CPython before 3.14 ends such a thread with pthread_exit:
// its forced unwind would destroy Python objects without the GIL, and
// through a noexcept destructor (pybind11's gil_scoped_release takes the GIL
// back in one) it calls std::terminate, the SIGABRT at exit. AcquireGil
// parks such a thread instead, as CPython 3.14 does, until the process ends.
#pragma once

#include <pybind11/pybind11.h>
#include <unistd.h>

#if defined(__GLIBCXX__)
#include <cxxabi.h>  // abi::__forced_unwind: glibc's pthread_exit unwinds with it
#endif

namespace joltgym::bindings {

[[noreturn]] inline void ParkForever() {
  for (;;) pause();
}

inline bool InterpreterFinalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing() != 0;
#else
  return _Py_IsFinalizing() != 0;
#endif
}

// PyEval_RestoreThread, parking the thread if the interpreter is finalizing
// (checked first; pthread_exit's forced unwind is caught for the race
// between that check and the GIL handover).
inline void AcquireGil(PyThreadState* state) {
  if (InterpreterFinalizing()) ParkForever();
#if defined(__GLIBCXX__)
  try {
    PyEval_RestoreThread(state);
  } catch (abi::__forced_unwind&) {
    ParkForever();  // never unwinds through pybind11's or our frames
  }
#else
  PyEval_RestoreThread(state);
#endif
}

// Runs fn() with the GIL released. fn must not touch Python objects; C++
// exceptions it throws propagate once the GIL is held again.
template <typename Fn>
void WithoutGil(Fn&& fn) {
  PyThreadState* state = PyEval_SaveThread();
  try {
    fn();
  } catch (...) {
    AcquireGil(state);
    throw;
  }
  AcquireGil(state);
}

// The reverse, inside WithoutGil: runs fn() with the GIL held.
template <typename Fn>
void WithGil(Fn&& fn) {
  PyGILState_STATE state = PyGILState_Ensure();
  try {
    fn();
  } catch (...) {
    PyGILState_Release(state);
    throw;
  }
  PyGILState_Release(state);
}

}  // namespace joltgym::bindings
