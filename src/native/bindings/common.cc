#include "common.h"

#include <cmath>
#include <random>

#include "checks.h"
#include "diagnostics.h"
#include "../mujoco_errors.h"

namespace joltgym::bindings {

std::shared_ptr<const Task> MakeTask(const std::string& name, const py::dict& kwargs,
                                     const std::string& owner, int episode_limit) {
  const TaskInfo& info = TaskRegistry::Get().Find(name);
  const bool has_engine_param = info.engines.size() > 1;
  if (!has_engine_param && kwargs.contains("engine")) {  // a MuJoCo-only task
    const py::object engine = kwargs["engine"];
    if (!py::isinstance<py::str>(engine)) {
      throw py::type_error("engine should be a str, got " + py::repr(engine).cast<std::string>());
    }
    RequireEngine(info, engine.cast<std::string>());
    py::dict rest = CopyDict(kwargs);
    PyDict_DelItemString(rest.ptr(), "engine");
    return MakeTask(name, rest, owner, episode_limit);
  }
  const Params params = ConvertParams(info.params, kwargs, owner);
  auto task = std::const_pointer_cast<Task>(info.factory(params));
  task->SetEpisodeLimit(episode_limit);
  return task;
}

py::dict CopyDict(const py::dict& d) { return py::reinterpret_steal<py::dict>(PyDict_Copy(d.ptr())); }

SeedWords SeedOrRandom(const py::object& seed) {
  if (seed.is_none()) {  // as SeedSequence(None): 128 bits of entropy
    std::random_device device;
    return SeedWords{device(), device(), device(), device()};
  }
  if (py::isinstance<py::bool_>(seed) || !py::isinstance<py::int_>(seed)) {
    if (!py::isinstance(seed, py::module_::import("numpy").attr("integer")) ||
        py::isinstance<py::bool_>(seed)) {
      throw py::type_error("seed should be an int or None, got " +
                           py::repr(seed).cast<std::string>());
    }
  }
  // An exact int (operator.index), so that an int subclass's own
  // comparisons and methods take no part in the checks below.
  const auto value = py::reinterpret_steal<py::int_>(PyNumber_Index(seed.ptr()));
  if (!value) throw py::error_already_set();
  if (value < py::int_(0)) {
    throw py::value_error("seed should be a non-negative int, got " +
                          py::repr(seed).cast<std::string>());
  }
  // Seeds of any size, every bit of them: little-endian 32-bit words.
  const auto bits = value.attr("bit_length")().cast<size_t>();
  const size_t num_words = bits == 0 ? 1 : (bits + 31) / 32;
  const std::string bytes = value.attr("to_bytes")(4 * num_words, "little").cast<std::string>();
  SeedWords words(num_words);
  for (size_t i = 0; i < num_words; ++i) {
    const auto* b = reinterpret_cast<const unsigned char*>(bytes.data()) + 4 * i;
    words[i] = static_cast<std::uint32_t>(b[0]) | static_cast<std::uint32_t>(b[1]) << 8 |
               static_cast<std::uint32_t>(b[2]) << 16 | static_cast<std::uint32_t>(b[3]) << 24;
  }
  return words;
}

int LimitOrZero(py::handle value, const char* what, long minimum) {
  return value.is_none() ? 0 : static_cast<int>(CheckInt(value, what, minimum));
}

std::vector<std::pair<int, double>> ConvertOptions(const Task& task, const py::object& options) {
  std::vector<std::pair<int, double>> writes;
  if (options.is_none()) return writes;
  if (!py::isinstance<py::dict>(options)) {
    throw py::type_error("options should be a dict or None, got " +
                         py::repr(options).cast<std::string>());
  }
  for (auto item : py::reinterpret_borrow<py::dict>(options)) {
    if (!py::isinstance<py::str>(item.first)) {
      throw py::type_error("option names should be str, got " + ClipRepr(py::repr(item.first).cast<std::string>()));
    }
    // Every character of the name (a NUL included) is compared.
    const std::string name = Utf8(item.first, "an option name");
    const int slot = task.OptionSlot(name);
    if (slot < 0) {
      std::string allowed;
      for (const auto& [option, _] : task.episode_options()) {
        allowed += (allowed.empty() ? "" : ", ") + option;
      }
      throw py::value_error("unknown option " + ClipRepr(py::repr(item.first).cast<std::string>()) + "; allowed: " +
                            (allowed.empty() ? std::string("none for this task") : allowed));
    }
    py::handle value = item.second;
    // Real numbers only: a complex (Python's or NumPy's) is not one, even
    // with a zero imaginary part; bools are not numbers here.
    const py::object numpy = py::module_::import("numpy");
    const bool real = !py::isinstance<py::bool_>(value) && !py::isinstance(value, numpy.attr("bool_")) &&
                      (py::isinstance<py::float_>(value) || py::isinstance<py::int_>(value) ||
                       py::isinstance(value, numpy.attr("integer")) ||
                       py::isinstance(value, numpy.attr("floating")));
    const std::string repr = ClipRepr(py::repr(value).cast<std::string>());
    double x = NAN;
    if (real) {
      x = PyFloat_AsDouble(value.ptr());  // an int too big for a double raises OverflowError
      if (x == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        x = NAN;
      }
    }
    if (!real || !std::isfinite(x)) {
      throw py::value_error("option '" + name + "' should be a finite real number, got " + repr);
    }
    const auto [low, high] = task.OptionRange(slot);
    if (!(x >= low && x <= high)) {
      throw py::value_error("option '" + name + "' should be in " + IntervalString(low, high) +
                            ", got " + repr);
    }
    writes.emplace_back(slot, x);
  }
  return writes;
}

void WriteOptions(const std::vector<std::pair<int, double>>& writes,
                  const std::vector<double*>& scratches) {
  for (double* scratch : scratches) {
    for (const auto& [slot, x] : writes) scratch[slot] = x;
  }
}

void ApplyOptions(const Task& task, const py::object& options,
                  const std::vector<double*>& scratches) {
  WriteOptions(ConvertOptions(task, options), scratches);
}

py::list OptionNames(const Task& task) {
  py::list names;
  for (const auto& [option, _] : task.episode_options()) names.append(option);
  return names;
}

py::list InfoFields(const Task& task) {
  py::list fields;
  for (const auto& f : task.info_layout().fields()) {
    fields.append(py::make_tuple(f.name, f.offset, f.size, f.at_reset));
  }
  return fields;
}

py::bytes ModelBytes(const mjModel* m) {
  std::string buffer;
  MujocoReport report;
  // Guarded as every MuJoCo call: an error becomes MujocoError, not MuJoCo's exit.
  GuardMujoco([&] {
    buffer.assign(static_cast<size_t>(mj_sizeModel(m)), '\0');
    mj_saveModel(m, nullptr, buffer.data(), static_cast<int>(buffer.size()));
  }, &report);
  RaiseReport(report, "model_mjb()", "");
  return py::bytes(buffer);
}

py::array_t<float> ToFloatArray(const std::vector<double>& values) {
  py::array_t<float> out(static_cast<py::ssize_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i) out.mutable_data()[i] = static_cast<float>(values[i]);
  return out;
}

py::dict CameraDict(const Task& task) {
  const RenderCamera& c = task.camera();
  const char* target = c.target == CameraTarget::kLeader  ? "leader"
                       : c.target == CameraTarget::kFixed ? "fixed"
                                                          : "root_body";
  return py::dict(py::arg("target") = target, py::arg("distance") = c.distance,
                  py::arg("elevation") = c.elevation, py::arg("azimuth") = c.azimuth,
                  py::arg("lookat") = py::make_tuple(c.lookat[0], c.lookat[1], c.lookat[2]));
}

py::tuple StateOf(const World& world) {
  const mjModel* m = world.task().model();
  const mjData* d = world.data();
  py::array_t<double> qpos(m->nq), qvel(m->nv);
  std::copy(d->qpos, d->qpos + m->nq, qpos.mutable_data());
  std::copy(d->qvel, d->qvel + m->nv, qvel.mutable_data());
  return py::make_tuple(qpos, qvel);
}

py::tuple Reduce(py::handle self, py::tuple args, py::dict kwargs) {
  py::object restore = py::module_::import("joltgym_marl._core").attr("_restore");
  return py::make_tuple(restore, py::make_tuple(py::type::of(self), args, kwargs));
}

py::object Restore(py::object cls, py::tuple args, py::dict kwargs) { return cls(*args, **kwargs); }

}  // namespace joltgym::bindings
