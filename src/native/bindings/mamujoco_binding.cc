#include "mamujoco_binding.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>
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

namespace joltgym::bindings {

namespace {

using mamujoco::MaMuJoCoTask;
using mamujoco::ObservationPlan;
using mamujoco::Op;
using mamujoco::PlanEntry;
using mamujoco::Source;

constexpr const char* kResetHint = "reset()";

// A robot of the task registry, or MaMuJoCo's own CoupledHalfCheetah.
std::shared_ptr<const Task> MakeRobot(const std::string& robot, const py::dict& kwargs,
                                      const std::string& owner, int limit) {
  if (robot != mamujoco::kCoupledHalfCheetah) return MakeTask(robot, kwargs, owner, limit);
  auto task = std::const_pointer_cast<Task>(
      mamujoco::MakeCoupledHalfCheetah(ConvertParams(mamujoco::CoupledHalfCheetahParams(), kwargs, owner)));
  task->SetEpisodeLimit(limit);
  return task;
}

std::vector<PlanEntry> ConvertPlan(const py::handle& ops_in, const py::handle& bounds_in) {
  using Ints = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;
  using Reals = py::array_t<double, py::array::c_style | py::array::forcecast>;
  Ints ops = Ints::ensure(ops_in);
  Reals bounds = Reals::ensure(bounds_in);
  if (!ops || !bounds) throw py::type_error("plan should be an int array [K, 4] and a float array [K, 2]");
  if (ops.ndim() != 2 || ops.shape(1) != 4 || bounds.ndim() != 2 || bounds.shape(1) != 2 ||
      bounds.shape(0) != ops.shape(0)) {
    throw py::value_error("plan should be an int array [K, 4] and a float array [K, 2], got " +
                          ShapeString(ops) + " and " + ShapeString(bounds));
  }
  std::vector<PlanEntry> entries(static_cast<std::size_t>(ops.shape(0)));
  for (py::ssize_t k = 0; k < ops.shape(0); ++k) {
    entries[k] = PlanEntry{static_cast<Op>(ops.at(k, 0)), static_cast<Source>(ops.at(k, 1)),
                           static_cast<int>(ops.at(k, 2)), static_cast<int>(ops.at(k, 3)),
                           bounds.at(k, 0), bounds.at(k, 1)};
  }
  return entries;
}

template <typename T>
py::array_t<T> Zeros(std::vector<py::ssize_t> shape) {
  py::array_t<T> a(shape);
  std::memset(a.mutable_data(), 0, sizeof(T) * static_cast<std::size_t>(a.size()));
  return a;
}

class PyMaMuJoCoPool {
 public:
  PyMaMuJoCoPool(const std::string& robot, py::dict kwargs, py::handle plan_ops,
                 py::handle plan_bounds, py::handle num_envs, py::handle num_threads,
                 py::handle max_episode_steps, py::handle batch_size) {
    const int n = static_cast<int>(CheckInt(num_envs, "num_envs", 1, kMaxNumEnvs));
    batch_size_ = batch_size.is_none() ? n : static_cast<int>(CheckInt(batch_size, "batch_size", 1, n));
    const int threads = PoolThreads(
        n, num_threads.is_none() ? 0 : static_cast<int>(CheckInt(num_threads, "num_threads", 1)));
    const int limit = LimitOrZero(max_episode_steps, "max_episode_steps", 0);
    const std::string owner = "mamujoco_v1('" + robot + "')";
    auto robot_task = MakeRobot(robot, kwargs, owner, limit);
    ObservationPlan plan(ConvertPlan(plan_ops, plan_bounds), robot_task->model());
    task_ = std::make_shared<MaMuJoCoTask>(robot_task, std::move(plan));
    const py::ssize_t od = task_->obs_dim(), iw = task_->info_layout().width(),
                      ad = task_->act_dim();
    const py::ssize_t rows = n, bs = batch_size_;
    act_dim_ = ad;
    obs_ = Zeros<float>({rows, 1, od});
    final_obs_ = Zeros<float>({rows, 1, od});
    reward_ = Zeros<float>({rows, 1});
    terminated_ = Zeros<bool>({rows, 1});
    truncated_ = Zeros<bool>({rows, 1});
    info_ = Zeros<double>({rows, 1, iw});
    final_info_ = Zeros<double>({rows, 1, iw});
    reset_kind_ = Zeros<std::uint8_t>({rows});
    unstable_ = Zeros<bool>({rows});
    elapsed_ = Zeros<std::int32_t>({rows});
    recv_ids_ = Zeros<std::int32_t>({bs});
    recv_obs_ = Zeros<float>({bs, 1, od});
    recv_final_obs_ = Zeros<float>({bs, 1, od});
    recv_reward_ = Zeros<float>({bs, 1});
    recv_terminated_ = Zeros<bool>({bs, 1});
    recv_truncated_ = Zeros<bool>({bs, 1});
    recv_info_ = Zeros<double>({bs, 1, iw});
    recv_final_info_ = Zeros<double>({bs, 1, iw});
    recv_reset_kind_ = Zeros<std::uint8_t>({bs});
    recv_unstable_ = Zeros<bool>({bs});
    recv_elapsed_ = Zeros<std::int32_t>({bs});
    actions_.assign(static_cast<std::size_t>(n * ad), 0.0f);
    send_ids_.assign(static_cast<std::size_t>(n), 0);
    send_checker_ = std::make_unique<SendIdChecker>(n);
    WithoutGil([&] {
      pool_ = std::make_unique<WorldPool>(task_, n, threads, limit, AutoresetMode::kNextStep);
    });
    PoolBuffers b{obs_.mutable_data(),        reward_.mutable_data(),   terminated_.mutable_data(),
                  truncated_.mutable_data(),  info_.mutable_data(),     final_obs_.mutable_data(),
                  final_info_.mutable_data(), reset_kind_.mutable_data(), unstable_.mutable_data(),
                  elapsed_.mutable_data()};
    pool_->Bind(b);
    recv_ = PoolBuffers{recv_obs_.mutable_data(),        recv_reward_.mutable_data(),
                        recv_terminated_.mutable_data(),  recv_truncated_.mutable_data(),
                        recv_info_.mutable_data(),        recv_final_obs_.mutable_data(),
                        recv_final_info_.mutable_data(),  recv_reset_kind_.mutable_data(),
                        recv_unstable_.mutable_data(),    recv_elapsed_.mutable_data()};
    RaiseConstructionWarnings(owner);
  }

  WorldPool& Open() const {
    if (!pool_) throw StateError("this MaMuJoCo env is closed; expected a new one");
    return *pool_;
  }

  // reset(seed): world i seeded seed + i; seed=None continues each world's
  // stream (fresh entropy for a world never seeded).
  void Reset(const py::object& seed) {
    WorldPool& pool = Open();
    const bool reseed = !seed.is_none();
    const SeedWords base = reseed || pool.any_unseeded() ? SeedOrRandom(seed) : SeedWords{};
    std::vector<std::pair<int, MujocoReport>> reports;
    std::mutex& mutex = mutex_.Get(&pool);
    WithoutGil([&] {
      std::lock_guard<std::mutex> lock(mutex);
      pool.ResetAll(reseed, base);
      pool.TakeReports(reports);
    });
    RaiseReports(reports, "reset()", kResetHint, true);
  }

  // step(actions [num_envs, act_dim] float32): the global actions.
  void Step(py::handle actions) {
    WorldPool& pool = Open();
    std::mutex& mutex = mutex_.Get(&pool);
    const std::vector<py::ssize_t> shape{pool.num_envs(), act_dim_};
    auto checked = CheckFloatArray(actions, shape, "actions");
    std::string blocked = NotSteppableMessage(pool, "step()");
    if (blocked.empty()) blocked = WorkInFlightMessage(pool, "step()");
    if (!blocked.empty()) throw StateError(blocked);
    CopyFinite(checked.data(), actions_.data(), actions_.size(), {shape.begin(), shape.end()},
               "actions");
    std::vector<std::pair<int, MujocoReport>> reports;
    WithoutGil([&] {
      std::lock_guard<std::mutex> lock(mutex);
      pool.StepAll(actions_.data());
      pool.TakeReports(reports);
    });
    RaiseReports(reports, "step()", kResetHint, true);
  }

  void Send(py::handle actions, py::handle env_ids) {
    WorldPool& pool = Open();
    using Ids = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;
    py::array raw = py::array::ensure(env_ids);
    if (!raw || raw.ndim() != 1 || (raw.size() > 0 && raw.dtype().kind() != 'i' && raw.dtype().kind() != 'u')) {
      PyErr_Clear();
      throw py::type_error("env_ids should be a 1-D sequence of ints in [0, " +
                           std::to_string(pool.num_envs()) + "), got " +
                           ClipRepr(py::repr(env_ids).cast<std::string>()));
    }
    Ids ids = Ids::ensure(raw);
    const py::ssize_t count = ids.shape(0);
    CheckSendCount(count, pool.num_envs());
    const std::vector<py::ssize_t> shape{count, act_dim_};
    auto checked = CheckFloatArray(actions, shape, "actions");
    for (py::ssize_t k = 0; k < count; ++k) send_ids_[k] = CheckSendId(ids.at(k), k, pool.num_envs());
    std::vector<float> staged(static_cast<std::size_t>(count * act_dim_));
    CopyFinite(checked.data(), staged.data(), staged.size(), {shape.begin(), shape.end()}, "actions");
    std::lock_guard<std::mutex> lock(mutex_.Get(&pool));
    send_checker_->Check(pool, send_ids_.data(), static_cast<int>(count));
    for (py::ssize_t k = 0; k < count; ++k) {
      std::memcpy(actions_.data() + send_ids_[k] * act_dim_, staged.data() + k * act_dim_,
                  sizeof(float) * static_cast<std::size_t>(act_dim_));
    }
    pool.Send(actions_.data(), send_ids_.data(), static_cast<int>(count));
  }

  // After reset(): the next recv() calls return the reset worlds.
  void AsyncReset(const py::object& seed) {
    Reset(seed);
    std::lock_guard<std::mutex> lock(mutex_.Get(&Open()));
    Open().SendReset();
  }

  py::array Recv() {
    WorldPool& pool = Open();
    std::mutex& mutex = mutex_.Get(&pool);  // first: in a forked child, forgets the lost worlds
    const std::string blocked = NotReceivableMessage(pool, batch_size_);
    if (!blocked.empty()) throw StateError(blocked);
    std::vector<std::pair<int, MujocoReport>> reports;
    int* ids = recv_ids_.mutable_data();
    WithoutGil([&] {
      std::lock_guard<std::mutex> lock(mutex);
      pool.Recv(ids, batch_size_, recv_);
      pool.TakeReportsOf(ids, batch_size_, reports);
    });
    RaiseReports(reports, "recv()", kResetHint, true);
    return recv_ids_;
  }

  py::tuple GetState(py::handle index) {
    WorldPool& pool = Open();
    const int i = static_cast<int>(CheckInt(index, "index", 0, pool.num_envs() - 1));
    std::lock_guard<std::mutex> lock(mutex_.Get(&pool));
    if (pool.in_flight(i)) throw StateError(InFlightMessage("get_state()", i));
    return StateOf(pool.world(i));
  }

  ~PyMaMuJoCoPool() {
    // The pool goes first, as WorldPool's binding does: its destructor joins
    // the workers, which may still step worlds sent and never received,
    // reading actions_ and writing the result arrays the members below own.
    if (pool_) WithoutGil([&] { pool_.reset(); });
  }

  void Close() {
    if (!pool_) return;
    std::mutex& mutex = mutex_.Get(pool_.get());
    WithoutGil([&] {
      std::lock_guard<std::mutex> lock(mutex);
      pool_->Drain();
      pool_.reset();
    });
  }

  py::list RobotInfoFields() const {
    py::list fields;
    for (const auto& f : task_->robot().info_layout().fields()) {
      fields.append(py::make_tuple(f.name, f.offset, f.size, f.at_reset));
    }
    return fields;
  }

  std::shared_ptr<MaMuJoCoTask> task_;
  std::unique_ptr<WorldPool> pool_;
  ForkAwareMutex mutex_;
  std::unique_ptr<SendIdChecker> send_checker_;
  std::vector<float> actions_;
  std::vector<int> send_ids_;
  py::ssize_t act_dim_ = 0;
  int batch_size_ = 1;
  PoolBuffers recv_;
  py::array_t<float> obs_, final_obs_, reward_, recv_obs_, recv_final_obs_, recv_reward_;
  py::array_t<bool> terminated_, truncated_, unstable_, recv_terminated_, recv_truncated_, recv_unstable_;
  py::array_t<double> info_, final_info_, recv_info_, recv_final_info_;
  py::array_t<std::uint8_t> reset_kind_, recv_reset_kind_;
  py::array_t<std::int32_t> elapsed_, recv_ids_, recv_elapsed_;
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
  py::class_<PyMaMuJoCoPool>(m, "MaMuJoCoPool",
                             "num_envs MaMuJoCo worlds: a robot task plus an observation plan, "
                             "stepped on a WorldPool (NEXT_STEP autoreset). The plan's float64 "
                             "values are info[:, 0, plan_offset:plan_offset + plan_size].")
      .def(py::init<const std::string&, py::dict, py::handle, py::handle, py::handle, py::handle,
                    py::handle, py::handle>(),
           py::arg("robot"), py::arg("kwargs"), py::arg("plan_ops"), py::arg("plan_bounds"),
           py::kw_only(), py::arg("num_envs") = 1, py::arg("num_threads") = py::none(),
           py::arg("max_episode_steps") = py::none(), py::arg("batch_size") = py::none())
      .def("reset", &PyMaMuJoCoPool::Reset, py::kw_only(), py::arg("seed") = py::none())
      .def("step", &PyMaMuJoCoPool::Step, py::arg("actions"))
      .def("send", &PyMaMuJoCoPool::Send, py::arg("actions"), py::arg("env_ids"))
      .def("async_reset", &PyMaMuJoCoPool::AsyncReset, py::kw_only(), py::arg("seed") = py::none())
      .def("recv", &PyMaMuJoCoPool::Recv)
      .def("get_state", &PyMaMuJoCoPool::GetState, py::arg("index"))
      .def("close", &PyMaMuJoCoPool::Close)
      .def_property_readonly("closed", [](const PyMaMuJoCoPool& s) { return !s.pool_; })
      .def_property_readonly("num_envs", [](const PyMaMuJoCoPool& s) { return s.Open().num_envs(); })
      .def_property_readonly("num_threads", [](const PyMaMuJoCoPool& s) { return s.Open().num_threads(); })
      .def_property_readonly("batch_size", [](const PyMaMuJoCoPool& s) { return s.batch_size_; })
      .def_property_readonly("act_dim", [](const PyMaMuJoCoPool& s) { return s.task_->act_dim(); })
      .def_property_readonly("robot_obs_dim", [](const PyMaMuJoCoPool& s) { return s.task_->obs_dim(); })
      .def_property_readonly("dt", [](const PyMaMuJoCoPool& s) { return s.task_->dt(); })
      .def_property_readonly("action_low", [](const PyMaMuJoCoPool& s) { return ToFloatArray(s.task_->action_low()); })
      .def_property_readonly("action_high", [](const PyMaMuJoCoPool& s) { return ToFloatArray(s.task_->action_high()); })
      .def_property_readonly("plan_offset", [](const PyMaMuJoCoPool& s) { return s.task_->plan_offset(); })
      .def_property_readonly("plan_size", [](const PyMaMuJoCoPool& s) { return s.task_->plan_size(); })
      .def_property_readonly("robot_info_fields", &PyMaMuJoCoPool::RobotInfoFields)
      .def_property_readonly("camera", [](const PyMaMuJoCoPool& s) { return CameraDict(*s.task_); })
      .def("model_mjb", [](const PyMaMuJoCoPool& s) { return ModelBytes(s.task_->model()); })
      .def_readonly("obs", &PyMaMuJoCoPool::obs_, "the robot's own float32 observation")
      .def_readonly("rewards", &PyMaMuJoCoPool::reward_)
      .def_readonly("terminations", &PyMaMuJoCoPool::terminated_)
      .def_readonly("truncations", &PyMaMuJoCoPool::truncated_)
      .def_readonly("infos", &PyMaMuJoCoPool::info_)
      .def_readonly("reset_kind", &PyMaMuJoCoPool::reset_kind_)
      .def_readonly("unstable", &PyMaMuJoCoPool::unstable_)
      .def_readonly("elapsed_steps", &PyMaMuJoCoPool::elapsed_)
      .def_readonly("recv_env_ids", &PyMaMuJoCoPool::recv_ids_)
      .def_readonly("recv_rewards", &PyMaMuJoCoPool::recv_reward_)
      .def_readonly("recv_terminations", &PyMaMuJoCoPool::recv_terminated_)
      .def_readonly("recv_truncations", &PyMaMuJoCoPool::recv_truncated_)
      .def_readonly("recv_infos", &PyMaMuJoCoPool::recv_info_)
      .def_readonly("recv_reset_kind", &PyMaMuJoCoPool::recv_reset_kind_)
      .def_readonly("recv_elapsed_steps", &PyMaMuJoCoPool::recv_elapsed_);
}

}  // namespace joltgym::bindings
