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

// The main thread's id, with the GIL held. The main thread is the one that
// finalizes the interpreter: it runs the __del__ methods of the objects
// collected at exit (a pool closed from one, as TorchRL's envs do) and takes
// the GIL back as usual then; CPython ends only the other threads.
inline unsigned long MainThreadIdent() {
  static const unsigned long ident =
      pybind11::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
  return ident;
}

// PyEval_RestoreThread, parking the thread if the interpreter is finalizing
// and this is not the finalizing main thread (checked first; pthread_exit's
// forced unwind is caught for the race between that check and the GIL
// handover).
inline void AcquireGil(PyThreadState* state, bool main_thread) {
  if (!main_thread && InterpreterFinalizing()) ParkForever();
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
  const bool main_thread = PyThread_get_thread_ident() == MainThreadIdent();
  PyThreadState* state = PyEval_SaveThread();
  try {
    fn();
  } catch (...) {
    AcquireGil(state, main_thread);
    throw;
  }
  AcquireGil(state, main_thread);
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
