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

// What a long native call needs to notice a signal while it runs with the
// GIL released (see PollSignals): the thread state WithoutGil saved, if this
// is the main thread (the only one Python runs signal handlers on), and the
// exception a handler raised. One per thread; nested WithoutGil calls (inside
// WithGil) save and restore it.
struct ReleasedGil {
  PyThreadState* state = nullptr;  // the main thread's, while released; else null
  const void* polling = nullptr;   // the object whose call is polling (PollSignals)
  PyObject* error_type = nullptr;  // a handler's exception, owned, until rethrown
  PyObject* error_value = nullptr;
  PyObject* error_traceback = nullptr;
};
inline ReleasedGil& ThisThreadReleasedGil() {
  thread_local ReleasedGil released;
  return released;
}

// Called (through ThreadPool's interrupt poll) on a thread inside WithoutGil:
// if it is the main thread, takes the GIL back, runs the Python signal
// handlers of any pending signal (PyErr_CheckSignals) and releases the GIL
// again. True if a handler raised (KeyboardInterrupt for Ctrl-C, whatever a
// SIGALRM handler raises): its exception is kept and WithoutGil raises it
// once the native call has stopped. `owner` is the object whose call polls:
// while its handlers run, IsPolling(owner) is true on this thread, so that
// the object can refuse a handler calling back into it (its lock is held).
inline bool PollSignals(const void* owner) {
  ReleasedGil& released = ThisThreadReleasedGil();
  if (released.state == nullptr || released.error_type != nullptr) return released.error_type != nullptr;
  PyEval_RestoreThread(released.state);
  const void* outer = released.polling;
  released.polling = owner;
  const bool raised = PyErr_CheckSignals() != 0;
  released.polling = outer;
  if (raised) PyErr_Fetch(&released.error_type, &released.error_value, &released.error_traceback);
  released.state = PyEval_SaveThread();
  return raised;
}

inline bool IsPolling(const void* owner) { return ThisThreadReleasedGil().polling == owner; }

// PollSignals for a native call that keeps the GIL (a single world's step,
// SimulationPoll's callback): on the main thread, runs the Python signal
// handlers of any pending signal and keeps the exception one raised, which
// RethrowIfRaised() raises once the call has stopped. IsPolling(owner) is
// true while the handlers run, as with PollSignals.
class HeldGilSignals {
 public:
  explicit HeldGilSignals(const void* owner)
      : owner_(owner), main_thread_(PyThread_get_thread_ident() == MainThreadIdent()) {}
  ~HeldGilSignals() {
    Py_XDECREF(type_);
    Py_XDECREF(value_);
    Py_XDECREF(traceback_);
  }
  HeldGilSignals(const HeldGilSignals&) = delete;
  HeldGilSignals& operator=(const HeldGilSignals&) = delete;

  // The poll callback (context: this object); null off the main thread,
  // where Python runs no signal handlers.
  using Fn = bool (*)(void*);
  Fn poll() const { return main_thread_ ? &HeldGilSignals::Poll : nullptr; }

  void RethrowIfRaised() {
    if (type_ == nullptr) return;
    PyErr_Restore(type_, value_, traceback_);
    type_ = value_ = traceback_ = nullptr;
    throw pybind11::error_already_set();
  }

 private:
  static bool Poll(void* context) {
    auto* self = static_cast<HeldGilSignals*>(context);
    if (self->type_ != nullptr) return true;
    ReleasedGil& released = ThisThreadReleasedGil();
    const void* outer = released.polling;
    released.polling = self->owner_;
    const bool raised = PyErr_CheckSignals() != 0;
    released.polling = outer;
    if (raised) PyErr_Fetch(&self->type_, &self->value_, &self->traceback_);
    return raised;
  }

  const void* owner_;
  bool main_thread_;
  PyObject* type_ = nullptr;
  PyObject* value_ = nullptr;
  PyObject* traceback_ = nullptr;
};

// Runs fn() with the GIL released. fn must not touch Python objects; C++
// exceptions it throws propagate once the GIL is held again, and so does the
// exception of a signal handler that PollSignals ran meanwhile.
template <typename Fn>
void WithoutGil(Fn&& fn) {
  const bool main_thread = PyThread_get_thread_ident() == MainThreadIdent();
  ReleasedGil& released = ThisThreadReleasedGil();
  PyThreadState* const outer = released.state;
  PyThreadState* state = PyEval_SaveThread();
  released.state = main_thread ? state : nullptr;
  try {
    fn();
  } catch (...) {
    released.state = outer;
    AcquireGil(state, main_thread);
    if (released.error_type != nullptr) {  // fn's own exception wins
      Py_XDECREF(released.error_type);
      Py_XDECREF(released.error_value);
      Py_XDECREF(released.error_traceback);
      released.error_type = released.error_value = released.error_traceback = nullptr;
    }
    throw;
  }
  released.state = outer;
  AcquireGil(state, main_thread);
  if (released.error_type != nullptr) {
    PyErr_Restore(released.error_type, released.error_value, released.error_traceback);
    released.error_type = released.error_value = released.error_traceback = nullptr;
    throw pybind11::error_already_set();
  }
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
