#include "diagnostics.h"

#include <map>

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

std::string WorldList(const std::vector<int>& worlds) {
  std::string out;
  const std::size_t shown = std::min<std::size_t>(worlds.size(), 8);
  for (std::size_t k = 0; k < shown; ++k) out += (k ? ", " : "") + std::to_string(worlds[k]);
  if (worlds.size() > shown) out += ", ... (" + std::to_string(worlds.size()) + " worlds)";
  return out;
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
  // Warnings: one per kind, in order of first appearance.
  std::vector<std::string> keys;
  std::map<std::string, std::pair<std::string, std::vector<int>>> warnings;
  int dropped = 0;
  std::vector<int> failed;
  bool out_of_memory = false;
  const MujocoReport* first_failure = nullptr;
  for (const auto& [index, report] : reports) {
    for (const std::string& text : report.warnings) {
      const std::string key = WarningKey(text);
      auto [it, inserted] = warnings.try_emplace(key, text, std::vector<int>{});
      if (inserted) keys.push_back(key);
      if (it->second.second.empty() || it->second.second.back() != index) {
        it->second.second.push_back(index);
      }
    }
    dropped += report.dropped_warnings;
    if (report.failed()) {
      failed.push_back(index);
      if (first_failure == nullptr) first_failure = &report;
      out_of_memory = out_of_memory || report.error == MujocoReport::Error::kOutOfMemory;
    }
  }
  for (const std::string& key : keys) {
    const auto& [text, worlds] = warnings[key];
    std::string where = name_worlds ? " in world " + WorldList(worlds) : "";
    if (name_worlds && worlds.size() > 1) where = " in worlds " + WorldList(worlds);
    Warn("MuJoCo warning during " + call + where + ": " + text);
  }
  if (dropped > 0) {
    Warn("MuJoCo raised " + std::to_string(dropped) + " more warning(s) during " + call +
         " (not shown)");
  }
  if (failed.empty()) return;
  std::string message = "MuJoCo error during " + call;
  if (name_worlds)
    message += (failed.size() > 1 ? " in worlds " : " in world ") + WorldList(failed);
  message += ": " + first_failure->error_message + "\n";
  message += (name_worlds ? (failed.size() > 1 ? "These worlds" : "This world") : "The world");
  message += " must be reset (" + reset_hint + ") before stepping again.";
  throw MujocoError(message, out_of_memory);
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
