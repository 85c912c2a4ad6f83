#include "diagnostics.h"


#include "../errors.h"

namespace joltgym::bindings {

namespace {

PyObject* g_warning_type = nullptr;

void Warn(const std::string& message) {
  if (PyErr_WarnEx(g_warning_type != nullptr ? g_warning_type : PyExc_RuntimeWarning,
                   message.c_str(), 1) < 0) {
    throw py::error_already_set();
  }
}

}  // namespace

void DefineDiagnostics(py::module_& m) {
  PyObject* error =
      PyErr_NewExceptionWithDoc("joltgym_marl._core.MujocoError",
                                "MuJoCo raised an error during a call (MemoryError is raised "
                                "instead when it ran out of memory).",
                                PyExc_RuntimeError, nullptr);
  PyObject* warning = PyErr_NewExceptionWithDoc("joltgym_marl._core.MujocoWarning",
                                                "A warning MuJoCo raised during a call.",
                                                PyExc_RuntimeWarning, nullptr);
  if (error == nullptr || warning == nullptr) throw py::error_already_set();
  m.attr("MujocoError") = py::reinterpret_borrow<py::object>(error);
  m.attr("MujocoWarning") = py::reinterpret_borrow<py::object>(warning);
  g_warning_type = warning;  // the module keeps them alive; these references are never released
  static PyObject* const error_type = error;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const MujocoError& e) {
      PyErr_SetString(e.out_of_memory() ? PyExc_MemoryError : error_type, e.what());
    }
  });
}

void RaiseReports(const std::vector<std::pair<int, MujocoReport>>& reports, const std::string& call,
                  const std::string& reset_hint, bool name_worlds) {
  if (reports.empty()) return;
  const ReportSummary summary = SummarizeReports(reports, call, reset_hint, name_worlds);
  for (const std::string& warning : summary.warnings) Warn(warning);
  if (summary.failed) throw MujocoError(summary.error, summary.out_of_memory);
}

void RaiseReport(MujocoReport& report, const std::string& call, const std::string& reset_hint) {
  if (report.empty()) return;
  std::vector<std::pair<int, MujocoReport>> one;
  one.emplace_back(0, std::move(report));
  report.Clear();
  RaiseReports(one, call, reset_hint, /*name_worlds=*/false);
}

void RaiseConstructionWarnings(const std::string& owner) {
  MujocoReport& pending = ThreadConstructionReport();
  if (pending.empty()) return;
  MujocoReport report;
  report.TakeWarnings(pending);
  pending.Clear();
  RaiseReport(report, owner, "");
}

}  // namespace joltgym::bindings
