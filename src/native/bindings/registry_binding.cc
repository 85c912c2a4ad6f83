#include "registry_binding.h"

#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>

#include "../buffers.h"
#include "../compose.h"
#include "../engine.h"
#include "../outcome.h"
#include "../task.h"
#include "../task_names.h"
#include "common.h"
#include "info_decoder.h"

namespace joltgym::bindings {

namespace {

const char* ParamKindName(ParamKind kind) {
  switch (kind) {
    case ParamKind::kFloat:
      return "float";
    case ParamKind::kInt:
      return "int";
    case ParamKind::kBool:
      return "bool";
    case ParamKind::kRange:
      return "range";
    case ParamKind::kString:
      return "str";
    case ParamKind::kBodyRef:
      return "body";
    case ParamKind::kOptionalFloat:
      return "optional_float";
  }
  return "unknown";
}

// A parameter's default as the Python value a user would pass.
py::object DefaultValue(const ParamSpec& spec) {
  const ParamValue& v = spec.default_value;
  switch (spec.kind) {
    case ParamKind::kFloat:
      return py::float_(v.numbers.at(0));
    case ParamKind::kInt:
      return py::int_(static_cast<long>(v.numbers.at(0)));
    case ParamKind::kBool:
      return py::bool_(v.numbers.at(0) != 0.0);
    case ParamKind::kRange:
      return py::make_tuple(v.numbers.at(0), v.numbers.at(1));
    case ParamKind::kString:
      return py::str(v.text);
    case ParamKind::kBodyRef:
      if (v.is_text) return py::str(v.text);
      return py::int_(static_cast<long>(v.numbers.at(0)));
    case ParamKind::kOptionalFloat:
      if (std::isnan(v.numbers.at(0))) return py::none();
      return py::float_(v.numbers.at(0));
  }
  return py::none();
}

py::dict Describe(const TaskInfo& info) {
  py::list params;
  for (const ParamSpec& p : info.params) {
    // The bounds a value is checked against (bindings/checks.cc); None where none apply.
    py::object low = py::none(), high = py::none();
    if (p.kind == ParamKind::kInt) {
      low = py::int_(p.min_int);
      high = py::int_(p.max_int);
    } else if (p.kind == ParamKind::kFloat || p.kind == ParamKind::kOptionalFloat ||
               p.kind == ParamKind::kRange) {
      low = py::float_(p.min_real);
      high = py::float_(p.max_real);
    }
    params.append(py::dict(py::arg("name") = p.name, py::arg("kind") = ParamKindName(p.kind),
                           py::arg("default") = DefaultValue(p), py::arg("doc") = p.doc,
                           py::arg("min") = low, py::arg("max") = high));
  }
  py::list names;
  for (const std::string& spelling : TaskSpellings(info)) names.append(spelling);
  const bool single = info.kind == TaskKind::kSingleAgent;
  py::dict out(py::arg("name") = info.name, py::arg("kind") = single ? "single_agent" : "game",
               py::arg("title") = info.title, py::arg("env_id") = info.env_id,
               py::arg("reference_id") = info.reference_id, py::arg("agent_prefix") = info.agent_prefix,
               py::arg("max_episode_steps") = info.max_episode_steps,
               py::arg("reward_threshold") = py::cast(info.reward_threshold), py::arg("doc") = info.doc,
               py::arg("params") = params, py::arg("names") = names,
               py::arg("engines") = py::cast(info.engines));
  return out;
}

}  // namespace

void DefineRegistry(py::module_& m) {
  m.def("set_asset_dir", &SetAssetDir, py::arg("path"), "Folder where bare MJCF names are looked up.");
  m.def("asset_dir", &AssetDir);
  m.def("_restore", &Restore);
  m.def("mujoco_version", [] { return std::string(mj_versionString()); });
  m.def("jolt_available", &JoltAvailable, "True if this build has the Jolt Physics engine.");
  m.def("jolt_asserts", &JoltAssertsEnabled,
        "True if this build's Jolt checks its own asserts (a debug test build: JOLTGYM_JOLT_ASSERTS).");
  m.def(
      "_compose_world",
      [](const std::string& arena_file, const std::string& xml_file, const std::string& root_body,
         const std::string& agent_prefix, int num_agents) {
        const std::vector<Placement> placements(static_cast<size_t>(std::max(num_agents, 0)));
        ComposedModel world = ComposeWorld(ResolveAssetPath(arena_file), ResolveAssetPath(xml_file),
                                           root_body, agent_prefix, placements, /*agents_collide=*/true);
        return ModelBytes(world.model.get());
      },
      py::arg("arena_file"), py::arg("xml_file"), py::arg("root_body"), py::arg("agent_prefix"),
      py::arg("num_agents"),
      "For tests: the MJB bytes of `num_agents` copies of a robot composed into an arena at the "
      "origin, with per-agent contact bits, as the games compose their worlds.");
  m.def(
      "tasks",
      [] {
        py::dict out;
        for (const auto& [name, info] : TaskRegistry::Get().all()) out[name.c_str()] = Describe(info);
        return out;
      },
      "Registered tasks: name -> {name, kind ('single_agent' or 'game'), title, env_id, "
      "reference_id, agent_prefix, max_episode_steps, doc, params [{name, kind, default, doc, min, "
      "max}], names (every name the task answers to)}.");
  m.def(
      "resolve_task", [](const std::string& name) { return TaskRegistry::Get().Find(name).name; },
      py::arg("name"),
      "The native name of the task `name` names: its native name or any spelling of another of its "
      "names (title, Gymnasium or PettingZoo id, class name; case, '_', '-' and ' ' do not matter). "
      "ValueError naming close matches and every task otherwise.");

  py::enum_<ResetKind>(m, "ResetKind", py::arithmetic(), "What a pool call did to each world.")
      .value("STEPPED", kStepped)
      .value("RESET", kReset)
      .value("AUTORESET", kAutoReset);
  py::enum_<Outcome>(m, "Outcome", py::arithmetic(), "A game's result for one agent.")
      .value("ONGOING", Outcome::kOngoing)
      .value("WIN", Outcome::kWin)
      .value("LOSS", Outcome::kLoss)
      .value("DRAW", Outcome::kDraw);
  m.attr("OUTCOME_LABELS") = OutcomeLabels();

  py::class_<InfoDecoder>(m, "InfoDecoder",
                          "Turns a task's float64 info rows into Python values (one decoder for "
                          "every layer).")
      .def("row", &InfoDecoder::RowOf, py::arg("row"), py::kw_only(), py::arg("reset") = false,
           "One agent's info dict from its row.")
      .def("rows", &InfoDecoder::Rows, py::arg("rows"), py::kw_only(), py::arg("reset") = false,
           "A list of info dicts, one per row.")
      .def("columns", &InfoDecoder::Columns, py::arg("rows"), py::arg("valid"),
           py::arg("step_valid") = py::none(),
           "Gymnasium's batched vector info (key arrays plus '_key' masks) over rows.")
      .def_property_readonly("width", &InfoDecoder::width)
      .def_property_readonly("fields", &InfoDecoder::Fields,
                             "(name, offset, size, at_reset, kind, labels) of each field");
}

}  // namespace joltgym::bindings
