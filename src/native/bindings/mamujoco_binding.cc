#include "mamujoco_binding.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

#include "../errors.h"
#include "../mamujoco/coupled_half_cheetah.h"
#include "../mamujoco/mamujoco_task.h"
#include "../validation.h"
#include "../world_pool.h"
#include "checks.h"
#include "common.h"
#include "diagnostics.h"
#include "gil.h"
#include "pool_binding.h"

namespace joltgym::bindings {

namespace {

using mamujoco::MaMuJoCoTask;
using mamujoco::ObservationPlan;
using mamujoco::Op;
using mamujoco::PlanEntry;
using mamujoco::Source;

// A robot of the task registry, or MaMuJoCo's own CoupledHalfCheetah.
std::shared_ptr<const Task> MakeRobot(const std::string& robot, const py::dict& kwargs,
                                      const std::string& owner, int limit) {
  if (robot != mamujoco::kCoupledHalfCheetah) return MakeTask(robot, kwargs, owner, limit);
  auto task = std::const_pointer_cast<Task>(
      mamujoco::MakeCoupledHalfCheetah(ConvertParams(mamujoco::CoupledHalfCheetahParams(), kwargs, owner)));
  task->SetEpisodeLimit(limit);
  return task;
}

// ConvertPlan's checked integer: an int64 outside int's range would wrap
// into a valid-looking op, source or index when narrowed.
int PlanInt(std::int64_t value, py::ssize_t row, const char* column) {
  if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max()) {
    throw py::value_error("plan entry " + std::to_string(row) + ": " + column + " " +
                          std::to_string(value) + " is outside int's range");
  }
  return static_cast<int>(value);
}

std::vector<PlanEntry> ConvertPlan(const py::handle& ops_in, const py::handle& bounds_in) {
  using Ints = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;
  using Reals = py::array_t<double, py::array::c_style | py::array::forcecast>;
  py::array raw = py::array::ensure(ops_in);
  if (!raw || (raw.dtype().kind() != 'i' && raw.dtype().kind() != 'u')) {
    PyErr_Clear();  // (a float array would be truncated into indices)
    throw py::type_error("plan should be an int array [K, 4] and a float array [K, 2]; got plan_ops " +
                         ClipRepr(py::repr(ops_in).cast<std::string>()));
  }
  Ints ops = Ints::ensure(raw);
  Reals bounds = Reals::ensure(bounds_in);
  if (!ops || !bounds) throw py::type_error("plan should be an int array [K, 4] and a float array [K, 2]");
  if (ops.ndim() != 2 || ops.shape(1) != 4 || bounds.ndim() != 2 || bounds.shape(1) != 2 ||
      bounds.shape(0) != ops.shape(0)) {
    throw py::value_error("plan should be an int array [K, 4] and a float array [K, 2], got " +
                          ShapeString(ops) + " and " + ShapeString(bounds));
  }
  std::vector<PlanEntry> entries(static_cast<std::size_t>(ops.shape(0)));
  for (py::ssize_t k = 0; k < ops.shape(0); ++k) {
    entries[k] = PlanEntry{static_cast<Op>(PlanInt(ops.at(k, 0), k, "op")),
                           static_cast<Source>(PlanInt(ops.at(k, 1), k, "source")),
                           PlanInt(ops.at(k, 2), k, "index"), PlanInt(ops.at(k, 3), k, "index2"),
                           bounds.at(k, 0), bounds.at(k, 1)};
  }
  return entries;
}

// The MaMuJoCo pool is the WorldPool binding over a MaMuJoCoTask (a robot
// plus the factorization's observation plan): float64 observations, the
// plan's output, and the robot's info fields; NEXT_STEP autoreset.
class __attribute__((visibility("hidden"))) PyMaMuJoCoPool final : public PyWorldPool {
 public:
  PyMaMuJoCoPool(const std::string& robot, py::dict kwargs, py::handle plan_ops,
                 py::handle plan_bounds, py::handle num_envs, py::handle num_threads,
                 py::handle max_episode_steps, py::handle batch_size, py::handle reward)
      : PyWorldPool("MaMuJoCoPool", robot, kwargs) {
    const PoolSpec spec =
        PoolSpec::Parse(num_envs, num_threads, max_episode_steps, "next_step", batch_size);
    const std::string owner = "mamujoco_v1('" + robot + "')";
    ThreadConstructionReport().Clear();
    auto robot_task = MakeRobot(robot, kwargs, owner, spec.max_episode_steps);
    std::vector<PlanEntry> entries = ConvertPlan(plan_ops, plan_bounds);
    ObservationPlan plan(std::move(entries), robot_task->model());
    recipe_ = ConvertRecipe(reward);
    auto task = std::make_shared<MaMuJoCoTask>(robot_task, std::move(plan), recipe_);
    CheckPoolFits(*task, spec.num_envs);
    // Copies, for pickling (ConvertPlan has checked that they convert).
    plan_ops_ = py::module_::import("numpy").attr("array")(plan_ops, "int64");
    plan_bounds_ = py::module_::import("numpy").attr("array")(plan_bounds, "float64");
    mamujoco_ = task;
    Build(spec, std::move(task), true, owner);
  }

  py::tuple Reduce(py::object self) const {
    py::dict kwargs;
    kwargs["num_envs"] = obs_.shape(0);
    kwargs["num_threads"] = closed() ? py::object(py::none()) : py::object(py::int_(Open().num_threads()));
    kwargs["max_episode_steps"] =
        max_episode_steps_ > 0 ? py::object(py::int_(max_episode_steps_)) : py::object(py::none());
    kwargs["batch_size"] = batch_size_;
    kwargs["reward"] = recipe_.robot.empty()
                           ? py::object(py::none())
                           : py::object(py::make_tuple(recipe_.robot, recipe_.weight, recipe_.float32_action));
    return bindings::Reduce(self, py::make_tuple(task_name_, CopyDict(kwargs_), plan_ops_, plan_bounds_),
                            kwargs);
  }

  // reward=None (the robot task's own reward) or (robot, weight, float32_action).
  static mamujoco::RewardRecipe ConvertRecipe(py::handle reward) {
    mamujoco::RewardRecipe recipe;
    if (reward.is_none()) return recipe;
    if (!py::isinstance<py::tuple>(reward) || py::len(reward) != 3 ||
        !py::isinstance<py::str>(reward[py::int_(0)]) ||
        !py::isinstance<py::bool_>(reward[py::int_(2)])) {
      throw py::type_error("reward should be None or a (robot: str, weight: float, float32_action: bool) "
                           "tuple, got " + ClipRepr(py::repr(reward).cast<std::string>()));
    }
    recipe.robot = reward[py::int_(0)].cast<std::string>();
    py::handle weight = reward[py::int_(1)];
    if (!py::isinstance<py::float_>(weight) || !std::isfinite(weight.cast<double>())) {
      throw py::value_error("reward's weight should be a finite float, got " +
                            ClipRepr(py::repr(weight).cast<std::string>()));
    }
    recipe.weight = weight.cast<double>();
    recipe.float32_action = reward[py::int_(2)].cast<bool>();
    return recipe;
  }

  mamujoco::RewardRecipe recipe_;
  std::shared_ptr<const MaMuJoCoTask> mamujoco_;
  py::object plan_ops_, plan_bounds_;
};

}  // namespace

void DefineMaMuJoCo(py::module_& m) {
  m.attr("MAMUJOCO_PLAN_SOURCES") =
      std::vector<std::string>{"qpos",       "qvel",         "cinert", "cvel",
                               "cfrc_ext",   "qfrc_actuator", "ten_length", "ten_velocity",
                               "xpos",       "qfrc_constraint", "ten_J"};
  m.attr("MAMUJOCO_PLAN_OPS") = std::vector<std::string>{"copy", "clip", "sin", "cos", "diff"};
  m.def(
      "mamujoco_model_info",
      [](const std::string& robot, py::dict kwargs) {
        auto task = MakeRobot(robot, kwargs, "mamujoco_v1('" + robot + "')", 0);
        const mjModel* mm = task->model();
        std::vector<std::string> bodies;
        for (int b = 0; b < mm->nbody; ++b) bodies.emplace_back(mj_id2name(mm, mjOBJ_BODY, b) ? mj_id2name(mm, mjOBJ_BODY, b) : "");
        RaiseConstructionWarnings("mamujoco_v1('" + robot + "')");
        return py::dict(py::arg("nq") = mm->nq, py::arg("nv") = mm->nv, py::arg("nu") = mm->nu,
                        py::arg("nbody") = mm->nbody, py::arg("ntendon") = mm->ntendon,
                        py::arg("body_names") = bodies, py::arg("obs_dim") = task->obs_dim());
      },
      py::arg("robot"), py::arg("kwargs"),
      "Sizes and body names of a robot's model, for compiling an observation plan.");
  py::class_<PyMaMuJoCoPool, PyWorldPool>(
      m, "MaMuJoCoPool",
      "num_envs MaMuJoCo worlds: a robot task plus an observation plan, on the WorldPool binding "
      "(every WorldPool method; NEXT_STEP autoreset). obs [num_envs, 1, plan_size] float64 is the "
      "plan's output (the agents' observations, then the global state); infos hold the robot's "
      "info fields.",
      py::dynamic_attr())
      .def(py::init<const std::string&, py::dict, py::handle, py::handle, py::handle, py::handle,
                    py::handle, py::handle, py::handle>(),
           py::arg("robot"), py::arg("kwargs"), py::arg("plan_ops"), py::arg("plan_bounds"),
           py::kw_only(), py::arg("num_envs") = 1, py::arg("num_threads") = py::none(),
           py::arg("max_episode_steps") = py::none(), py::arg("batch_size") = py::none(),
           py::arg("reward") = py::none())
      .def("__reduce__", [](py::object self) { return self.cast<const PyMaMuJoCoPool&>().Reduce(self); })
      .def_property_readonly("plan_size", [](const PyMaMuJoCoPool& s) { return s.mamujoco_->plan_size(); });
}

}  // namespace joltgym::bindings
