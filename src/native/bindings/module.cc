// joltgym_marl._core: the Python face of the native core.
//
// Two classes cross the boundary: SingleAgentCore (one world of a
// single-agent task; the package derives HalfCheetahCore & co. from it) and
// WorldPool (num_envs worlds of any task, results in NumPy arrays allocated
// once here). Every argument is validated before the GIL is released; the
// worker threads never see a Python object.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "../errors.h"
#include "../task.h"
#include "../world.h"
#include "../world_pool.h"
#include "checks.h"

namespace py = pybind11;

namespace joltgym::bindings {
namespace {

std::shared_ptr<const Task> MakeTask(const std::string& name, const py::dict& kwargs,
                                     const std::string& owner, int episode_limit) {
  const TaskInfo& info = TaskRegistry::Get().Find(name);
  const Params params = ConvertParams(info.params, kwargs, owner);
  auto task = std::const_pointer_cast<Task>(info.factory(params));
  task->SetEpisodeLimit(episode_limit);
  return task;
}

// A shallow copy: py::dict(other) would alias the same dict.
py::dict CopyDict(const py::dict& d) { return py::reinterpret_steal<py::dict>(PyDict_Copy(d.ptr())); }

std::uint64_t SeedOrRandom(const py::object& seed) {
  if (seed.is_none()) {
    std::random_device device;
    return (static_cast<std::uint64_t>(device()) << 32) ^ device();
  }
  if (py::isinstance<py::bool_>(seed) || !py::isinstance<py::int_>(seed)) {
    if (!py::isinstance(seed, py::module_::import("numpy").attr("integer")) ||
        py::isinstance<py::bool_>(seed)) {
      throw py::type_error("seed should be an int or None, got " +
                           py::repr(seed).cast<std::string>());
    }
  }
  const py::int_ value(seed);
  if (value < py::int_(0)) {
    throw py::value_error("seed should be a non-negative int, got " +
                          py::repr(seed).cast<std::string>());
  }
  // Seeds of any size are accepted; the low 64 bits are used.
  return py::int_(value & py::int_(0xFFFFFFFFFFFFFFFFULL)).cast<std::uint64_t>();
}

// Builds a task's info dict from one agent's record. The key strings are made
// once per object (InfoKeys) rather than on every step.
struct InfoKeys {
  explicit InfoKeys(const Task& task) {
    for (const auto& field : task.info_layout().fields()) keys.emplace_back(field.name);
  }
  std::vector<py::str> keys;
};

py::dict InfoDict(const Task& task, const InfoKeys& keys, const double* row, bool reset) {
  py::dict info;
  const auto& fields = task.info_layout().fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    const InfoField& field = fields[i];
    if (reset && !field.at_reset) continue;
    if (field.size == 1) {
      info[keys.keys[i]] = py::float_(row[field.offset]);
    } else {
      py::array_t<double> values(field.size);
      std::copy(row + field.offset, row + field.offset + field.size, values.mutable_data());
      info[keys.keys[i]] = values;
    }
  }
  return info;
}

// Writes episode options (e.g. {"shaping_weight": 0.5}) into a world's
// scratch; every key and value is checked before anything is written.
void ApplyOptions(const Task& task, const py::object& options, std::vector<double*> scratches) {
  if (options.is_none()) return;
  if (!py::isinstance<py::dict>(options)) {
    throw py::type_error("options should be a dict or None, got " +
                         py::repr(options).cast<std::string>());
  }
  std::vector<std::pair<int, double>> writes;
  for (auto item : py::reinterpret_borrow<py::dict>(options)) {
    const std::string name = py::str(item.first).cast<std::string>();
    const int slot = task.OptionSlot(name);
    if (slot < 0) {
      std::string allowed;
      for (const auto& [option, _] : task.episode_options()) allowed += (allowed.empty() ? "" : ", ") + option;
      throw py::value_error("unknown option '" + name + "'; allowed: " +
                            (allowed.empty() ? std::string("none for this task") : allowed));
    }
    py::handle value = item.second;
    const bool real = !py::isinstance<py::bool_>(value) &&
                      (py::isinstance<py::float_>(value) || py::isinstance<py::int_>(value) ||
                       py::isinstance(value, py::module_::import("numpy").attr("number")));
    const double x = real ? value.cast<double>() : NAN;
    if (!real || !std::isfinite(x)) {
      throw py::value_error("option '" + name + "' should be a finite number, got " +
                            py::repr(value).cast<std::string>());
    }
    writes.emplace_back(slot, x);
  }
  for (double* scratch : scratches) {
    for (const auto& [slot, x] : writes) scratch[slot] = x;
  }
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

// The compiled model as MJB bytes (mujoco.MjModel.from_binary_path reads
// them), for oracles and tools that load the very model a task runs.
py::bytes ModelBytes(const mjModel* m) {
  const int size = mj_sizeModel(m);
  std::string buffer(static_cast<size_t>(size), '\0');
  mj_saveModel(m, nullptr, buffer.data(), size);
  return py::bytes(buffer);
}

py::array_t<float> ToFloatArray(const std::vector<double>& values) {
  py::array_t<float> out(static_cast<py::ssize_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i) out.mutable_data()[i] = static_cast<float>(values[i]);
  return out;
}

// Copies of one world's (qpos, qvel), for cores and shared worlds that a
// single Python object owns (the pool reads its worlds under its lock).
py::tuple StateOf(const World& world) {
  const mjModel* m = world.task().model();
  const mjData* d = world.data();
  py::array_t<double> qpos(m->nq), qvel(m->nv);
  std::copy(d->qpos, d->qpos + m->nq, qpos.mutable_data());
  std::copy(d->qvel, d->qvel + m->nv, qvel.mutable_data());
  return py::make_tuple(qpos, qvel);
}

// Checks (qpos, qvel), sets them and runs mj_forward, writing the observation.
void SetStateOf(World& world, py::handle qpos, py::handle qvel, float* obs) {
  const mjModel* m = world.task().model();
  auto p = CheckStateArray(qpos, m->nq, "qpos");
  auto v = CheckStateArray(qvel, m->nv, "qvel");
  world.SetState(p.data(), v.data(), obs);
}

// ---------------------------------------------------------------------------

class SingleAgentCore {
 public:
  SingleAgentCore(const std::string& task_name, int max_episode_steps, py::dict kwargs)
      : task_name_(task_name), kwargs_(CopyDict(kwargs)), max_episode_steps_(max_episode_steps) {
    task_ = MakeTask(task_name, kwargs, task_name, max_episode_steps);
    if (task_->num_agents() != 1) {
      throw py::value_error("task '" + task_name + "' has " + std::to_string(task_->num_agents()) +
                            " agents; SingleAgentCore expects a single-agent task");
    }
    world_ = std::make_unique<World>(task_, max_episode_steps);
    keys_ = std::make_unique<InfoKeys>(*task_);
    obs_.resize(task_->obs_dim());
    info_.resize(task_->info_layout().width());
  }

  py::tuple Reset(const py::object& seed) {
    if (!seed.is_none() || !seeded_) {
      world_->Seed(SeedOrRandom(seed));
      seeded_ = true;
    }
    world_->Reset(obs_.data(), info_.data());
    return py::make_tuple(Obs(), InfoDict(*task_, *keys_, info_.data(), true));
  }

  py::tuple Step(py::handle action) {
    if (!world_->has_episode()) {
      throw StateError("step() called before reset(); expected reset() first");
    }
    auto checked = CheckFloatArray(action, {task_->act_dim()}, "action");
    float reward = 0.0f;
    bool terminated = false, truncated = false;
    world_->Step(checked.data(), obs_.data(), &reward, &terminated, &truncated, info_.data());
    py::dict info = InfoDict(*task_, *keys_, info_.data(), false);
    if (world_->last_step_unstable()) info["physics_unstable"] = true;
    return py::make_tuple(Obs(), static_cast<double>(reward), terminated, truncated, info);
  }

  py::tuple GetState() const { return StateOf(*world_); }

  void SetState(py::handle qpos, py::handle qvel) { SetStateOf(*world_, qpos, qvel, obs_.data()); }

  py::array_t<float> Obs() const {
    py::array_t<float> out(static_cast<py::ssize_t>(obs_.size()));
    std::copy(obs_.begin(), obs_.end(), out.mutable_data());
    return out;
  }

  const Task& task() const { return *task_; }
  const std::string& task_name() const { return task_name_; }
  const py::dict& kwargs() const { return kwargs_; }
  int max_episode_steps() const { return max_episode_steps_; }
  int elapsed_steps() const { return world_->elapsed_steps(); }

 private:
  std::string task_name_;
  py::dict kwargs_;
  int max_episode_steps_;
  std::shared_ptr<const Task> task_;
  std::unique_ptr<World> world_;
  std::unique_ptr<InfoKeys> keys_;
  std::vector<float> obs_;
  std::vector<double> info_;
  bool seeded_ = false;
};

// ---------------------------------------------------------------------------

// One shared world of a game: all agents' arrays at once. The PettingZoo
// layer turns the rows into per-agent dicts.
class MultiAgentEnv {
 public:
  MultiAgentEnv(const std::string& game, int max_cycles, py::dict kwargs)
      : game_(game), kwargs_(CopyDict(kwargs)), max_cycles_(max_cycles) {
    task_ = MakeTask(game, kwargs, "MultiAgentEnv('" + game + "')", max_cycles);
    world_ = std::make_unique<World>(task_, max_cycles);
    const py::ssize_t a = task_->num_agents();
    obs_ = py::array_t<float>({a, py::ssize_t{task_->obs_dim()}});
    info_ = py::array_t<double>({a, py::ssize_t{task_->info_layout().width()}});
    std::memset(obs_.mutable_data(), 0, obs_.nbytes());
    std::memset(info_.mutable_data(), 0, info_.nbytes());
  }

  py::tuple Reset(const py::object& seed, const py::object& options) {
    const std::uint64_t s = seed.is_none() && seeded_ ? 0 : SeedOrRandom(seed);
    ApplyOptions(*task_, options, {world_->scratch()});
    if (!seed.is_none() || !seeded_) {
      world_->Seed(s);
      seeded_ = true;
    }
    world_->Reset(obs_.mutable_data(), info_.mutable_data());
    return py::make_tuple(Copy(obs_), Copy(info_));
  }

  py::tuple Step(py::handle actions) {
    if (!world_->has_episode()) {
      throw StateError("step() called before reset(); expected reset() first");
    }
    const py::ssize_t a = task_->num_agents();
    auto checked = CheckFloatArray(actions, {a, task_->act_dim()}, "actions");
    py::array_t<float> reward(a);
    py::array_t<bool> terminated(a), truncated(a);
    world_->Step(checked.data(), obs_.mutable_data(), reward.mutable_data(), terminated.mutable_data(),
                 truncated.mutable_data(), info_.mutable_data());
    return py::make_tuple(Copy(obs_), reward, terminated, truncated, Copy(info_),
                          world_->last_step_unstable());
  }

  // The global state: qpos and qvel of the whole world, float32.
  py::array_t<float> State() const {
    const mjModel* m = task_->model();
    const mjData* d = world_->data();
    py::array_t<float> out(static_cast<py::ssize_t>(m->nq + m->nv));
    float* p = out.mutable_data();
    for (int i = 0; i < m->nq; ++i) *p++ = static_cast<float>(d->qpos[i]);
    for (int i = 0; i < m->nv; ++i) *p++ = static_cast<float>(d->qvel[i]);
    return out;
  }
  int state_dim() const { return static_cast<int>(task_->model()->nq + task_->model()->nv); }

  py::tuple GetState() const { return StateOf(*world_); }

  void SetState(py::handle qpos, py::handle qvel) {
    SetStateOf(*world_, qpos, qvel, obs_.mutable_data());
  }

  py::array Obs() const { return Copy(obs_); }

  const Task& task() const { return *task_; }
  const std::string& game() const { return game_; }
  const py::dict& kwargs() const { return kwargs_; }
  int max_cycles() const { return max_cycles_; }
  int elapsed_steps() const { return world_->elapsed_steps(); }

 private:
  static py::array Copy(const py::array& a) { return py::array(a.attr("copy")()); }

  std::string game_;
  py::dict kwargs_;
  int max_cycles_;
  std::shared_ptr<const Task> task_;
  std::unique_ptr<World> world_;
  py::array_t<float> obs_;
  py::array_t<double> info_;
  bool seeded_ = false;
};

// ---------------------------------------------------------------------------

class PyWorldPool {
 public:
  PyWorldPool(const std::string& task_name, py::handle num_envs, py::handle num_threads,
              py::handle max_episode_steps, const std::string& autoreset_mode, py::dict kwargs)
      : task_name_(task_name), kwargs_(CopyDict(kwargs)) {
    const int n = static_cast<int>(CheckInt(num_envs, "num_envs", 1, 1 << 20));
    int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (!num_threads.is_none()) threads = static_cast<int>(CheckInt(num_threads, "num_threads", 1));
    threads = std::min(threads, n);
    max_episode_steps_ =
        max_episode_steps.is_none() ? 0 : static_cast<int>(CheckInt(max_episode_steps, "max_episode_steps", 0));
    AutoresetMode mode;
    if (autoreset_mode == "next_step") {
      mode = AutoresetMode::kNextStep;
    } else if (autoreset_mode == "same_step") {
      mode = AutoresetMode::kSameStep;
    } else {
      throw py::value_error("autoreset_mode should be 'next_step' or 'same_step', got '" +
                            autoreset_mode + "'");
    }
    autoreset_mode_ = autoreset_mode;
    auto task = MakeTask(task_name, kwargs, "WorldPool('" + task_name + "')", max_episode_steps_);
    const py::ssize_t a = task->num_agents(), od = task->obs_dim(), iw = task->info_layout().width();
    obs_ = py::array_t<float>({py::ssize_t{n}, a, od});
    final_obs_ = py::array_t<float>({py::ssize_t{n}, a, od});
    reward_ = py::array_t<float>({py::ssize_t{n}, a});
    terminated_ = py::array_t<bool>({py::ssize_t{n}, a});
    truncated_ = py::array_t<bool>({py::ssize_t{n}, a});
    info_ = py::array_t<double>({py::ssize_t{n}, a, iw});
    final_info_ = py::array_t<double>({py::ssize_t{n}, a, iw});
    reset_kind_ = py::array_t<std::uint8_t>(n);
    unstable_ = py::array_t<bool>(n);
    elapsed_ = py::array_t<std::int32_t>(n);
    for (py::array* array : {static_cast<py::array*>(&obs_), static_cast<py::array*>(&final_obs_),
                             static_cast<py::array*>(&reward_), static_cast<py::array*>(&terminated_),
                             static_cast<py::array*>(&truncated_), static_cast<py::array*>(&info_),
                             static_cast<py::array*>(&final_info_), static_cast<py::array*>(&reset_kind_),
                             static_cast<py::array*>(&unstable_), static_cast<py::array*>(&elapsed_)}) {
      std::memset(array->mutable_data(), 0, array->nbytes());
    }
    {
      py::gil_scoped_release release;
      pool_ = std::make_unique<WorldPool>(task, n, threads, max_episode_steps_, mode);
    }
    PoolBuffers b;
    b.obs = obs_.mutable_data();
    b.reward = reward_.mutable_data();
    b.terminated = terminated_.mutable_data();
    b.truncated = truncated_.mutable_data();
    b.info = info_.mutable_data();
    b.final_obs = final_obs_.mutable_data();
    b.final_info = final_info_.mutable_data();
    b.reset_kind = reset_kind_.mutable_data();
    b.unstable = unstable_.mutable_data();
    b.elapsed = elapsed_.mutable_data();
    pool_->Bind(b);
  }

  // reset_all(seed=None) continues each world's random stream once the pool
  // has been seeded (as Gymnasium's vector envs and SuperSuit do); the first
  // reset without a seed draws one.
  py::array ResetAll(const py::object& seed) {
    const bool reseed = !seed.is_none() || !seeded_;
    const std::uint64_t base = reseed ? SeedOrRandom(seed) : 0;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      if (pool_) pool_->ResetAll(reseed, base);
    }
    Open();
    seeded_ = true;
    return obs_;
  }

  py::array ResetOne(py::handle index, const py::object& seed) {
    const int i = CheckIndex(index);
    const bool reseed = !seed.is_none();
    const std::uint64_t s = reseed ? SeedOrRandom(seed) : 0;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      Open().ResetOne(i, reseed, s);
    }
    return obs_[py::int_(i)];
  }

  py::tuple StepAll(py::handle actions) {
    // Sizes are read before converting `actions`, which may run Python code
    // (even close() this pool); the pool is looked up again under the lock.
    py::ssize_t num_envs, num_agents, act_dim;
    {
      const WorldPool& pool = Open();
      num_envs = pool.num_envs();
      num_agents = pool.task().num_agents();
      act_dim = pool.task().act_dim();
    }
    std::vector<py::ssize_t> shape{num_envs, num_agents, act_dim};
    if (num_agents == 1) {
      // Single-agent pools also take [num_envs, act_dim]; anything that has
      // no ndim is left to CheckFloatArray to reject.
      py::array as_array;
      try {
        as_array = py::array::ensure(actions);
      } catch (py::error_already_set&) {
      }
      if (!as_array) PyErr_Clear();
      if (as_array && as_array.ndim() == 2) shape = {num_envs, act_dim};
    }
    auto checked = CheckFloatArray(actions, shape, "actions");
    bool started = true;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      if (pool_ && (started = pool_->all_started())) pool_->StepAll(checked.data());
    }
    Open();  // raises if closed meanwhile
    if (!started) throw StateError("step_all() called before reset_all(); expected reset_all() first");
    return py::make_tuple(obs_, reward_, terminated_, truncated_);
  }

  // Copies world `index`'s qpos/qvel under the pool's lock, so a reader (a
  // renderer, say) never sees a world half-way through a step that another
  // Python thread is running.
  py::tuple GetState(py::handle index) {
    const int i = CheckIndex(index);
    long nq, nv;
    {
      const mjModel* m = Open().task().model();
      nq = m->nq;
      nv = m->nv;
    }
    py::array_t<double> qpos(nq), qvel(nv);
    double* p = qpos.mutable_data();
    double* v = qvel.mutable_data();
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      if (pool_) {
        const mjData* d = pool_->world(i).data();
        std::copy(d->qpos, d->qpos + nq, p);
        std::copy(d->qvel, d->qvel + nv, v);
      }
    }
    Open();
    return py::make_tuple(qpos, qvel);
  }

  void SetState(py::handle index, py::handle qpos, py::handle qvel) {
    const int i = CheckIndex(index);
    long nq, nv, obs_stride;
    {
      const Task& task = Open().task();
      nq = task.model()->nq;
      nv = task.model()->nv;
      obs_stride = task.num_agents() * task.obs_dim();
    }
    auto p = CheckStateArray(qpos, nq, "qpos");
    auto v = CheckStateArray(qvel, nv, "qvel");
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      if (pool_) pool_->world(i).SetState(p.data(), v.data(), obs_.mutable_data() + i * obs_stride);
    }
    Open();
  }

  // Lock order: the mutex (GIL released), then the GIL. Stepping releases the
  // GIL before taking the mutex and never waits for the GIL while holding it,
  // so this cannot deadlock; taking the GIL for the swap keeps every reader
  // that holds the GIL (properties, argument checks) from seeing a dangling
  // pool.
  void SetOption(const std::string& name, py::handle value, py::handle index) {
    py::dict options;
    options[name.c_str()] = value;
    const int only = index.is_none() ? -1 : CheckIndex(index);
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    if (!pool_) return;
    std::vector<double*> scratches;
    for (int i = 0; i < pool_->num_envs(); ++i) {
      if (only < 0 || i == only) scratches.push_back(pool_->world(i).scratch());
    }
    py::gil_scoped_acquire acquire;
    ApplyOptions(pool_->task(), options, scratches);
  }

  void Close() {
    std::unique_ptr<WorldPool> doomed;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      {
        py::gil_scoped_acquire acquire;
        doomed = std::move(pool_);
      }
      doomed.reset();  // joins the worker threads, GIL released
    }
  }

  WorldPool& Open() const {
    if (!pool_) throw StateError("WorldPool is closed; expected an open pool (create a new one)");
    return *pool_;
  }
  bool closed() const { return !pool_; }

  int CheckIndex(py::handle index) const {
    const long n = Open().num_envs();
    if (py::isinstance<py::bool_>(index) ||
        py::isinstance(index, py::module_::import("numpy").attr("bool_"))) {
      throw py::type_error("index should be an int in [0, " + std::to_string(n) + "), got " +
                           py::repr(index).cast<std::string>());
    }
    try {
      return static_cast<int>(CheckInt(index, "index", 0, n - 1));
    } catch (py::type_error&) {
      throw py::type_error("index should be an int in [0, " + std::to_string(n) + "), got " +
                           py::repr(index).cast<std::string>());
    } catch (py::value_error&) {
      throw py::index_error("index should be in [0, " + std::to_string(n) + "), got " +
                            py::repr(index).cast<std::string>());
    }
  }

  std::string task_name_;
  py::dict kwargs_;
  int max_episode_steps_ = 0;
  std::string autoreset_mode_;
  bool seeded_ = false;
  std::unique_ptr<WorldPool> pool_;
  std::mutex mutex_;
  py::array_t<float> obs_, final_obs_, reward_;
  py::array_t<bool> terminated_, truncated_, unstable_;
  py::array_t<double> info_, final_info_;
  py::array_t<std::uint8_t> reset_kind_;
  py::array_t<std::int32_t> elapsed_;
};

py::object Restore(py::object cls, py::tuple args, py::dict kwargs) { return cls(*args, **kwargs); }

template <typename Class, typename Self>
void DefineTaskProperties(Class& cls) {
  cls.def_property_readonly("num_agents", [](const Self& s) { return s.task().num_agents(); })
      .def_property_readonly("obs_dim", [](const Self& s) { return s.task().obs_dim(); },
                             "observation size per agent")
      .def_property_readonly("act_dim", [](const Self& s) { return s.task().act_dim(); },
                             "action size per agent")
      .def_property_readonly("action_low", [](const Self& s) { return ToFloatArray(s.task().action_low()); })
      .def_property_readonly("action_high", [](const Self& s) { return ToFloatArray(s.task().action_high()); })
      .def_property_readonly("info_fields", [](const Self& s) { return InfoFields(s.task()); },
                             "(name, offset, size, at_reset) of each per-agent info entry")
      .def("model_mjb", [](const Self& s) { return ModelBytes(s.task().model()); },
           "The compiled model as MJB bytes.")
      .def_property_readonly("dt", [](const Self& s) { return s.task().dt(); },
                             "simulated seconds per step");
}

}  // namespace
}  // namespace joltgym::bindings

using namespace joltgym;            // NOLINT: module body only
using namespace joltgym::bindings;  // NOLINT

PYBIND11_MODULE(_core, m) {
  m.doc() = "Native MuJoCo worlds, pools and tasks behind joltgym_marl";

  py::register_exception<FileNotFound>(m, "ModelFileNotFound", PyExc_FileNotFoundError);
  py::register_exception<StateError>(m, "StateError", PyExc_RuntimeError);

  m.def("set_asset_dir", &SetAssetDir, py::arg("path"), "Folder where bare MJCF names are looked up.");
  m.def("asset_dir", &AssetDir);
  m.def("_restore", &Restore);
  m.def("mujoco_version", [] { return std::string(mj_versionString()); });
  m.def(
      "tasks",
      [] {
        py::dict out;
        for (const auto& [name, info] : TaskRegistry::Get().all()) {
          py::list params;
          for (const auto& p : info.params) params.append(py::make_tuple(p.name, p.doc));
          out[name.c_str()] = py::dict(py::arg("core_class") = info.core_class, py::arg("params") = params);
        }
        return out;
      },
      "Registered tasks: name -> {core_class, params}.");

  py::class_<SingleAgentCore> core(m, "SingleAgentCore", py::dynamic_attr());
  core.def(py::init([](const std::string& task, py::handle max_episode_steps, py::kwargs kwargs) {
             const int limit = max_episode_steps.is_none()
                                   ? 0
                                   : static_cast<int>(CheckInt(max_episode_steps, "max_episode_steps", 0));
             return std::make_unique<SingleAgentCore>(task, limit, py::dict(kwargs));
           }),
           py::arg("task"), py::kw_only(), py::arg("max_episode_steps") = 1000)
      .def("reset", &SingleAgentCore::Reset, py::kw_only(), py::arg("seed") = py::none(),
           "Starts an episode; returns (obs, info).")
      .def("step", &SingleAgentCore::Step, py::arg("action"),
           "Advances one env step; returns (obs, reward, terminated, truncated, info).")
      .def("get_state", &SingleAgentCore::GetState, "Returns copies of (qpos, qvel).")
      .def("set_state", &SingleAgentCore::SetState, py::arg("qpos"), py::arg("qvel"),
           "Sets qpos and qvel and runs mj_forward, as Gymnasium's set_state.")
      .def("get_obs", &SingleAgentCore::Obs, "The observation of the current state.")
      .def("__reduce__",
           [m](py::object self) {
             auto& s = self.cast<SingleAgentCore&>();
             py::dict kwargs = CopyDict(s.kwargs());
             kwargs["max_episode_steps"] = s.max_episode_steps();
             const bool base = py::type::of(self).is(m.attr("SingleAgentCore"));
             py::tuple args = base ? py::make_tuple(s.task_name()) : py::tuple();
             return py::make_tuple(m.attr("_restore"), py::make_tuple(py::type::of(self), args, kwargs));
           })
      .def_property_readonly("task", &SingleAgentCore::task_name)
      .def_property_readonly("kwargs", [](const SingleAgentCore& s) { return CopyDict(s.kwargs()); })
      .def_property_readonly("max_episode_steps", &SingleAgentCore::max_episode_steps)
      .def_property_readonly("elapsed_steps", &SingleAgentCore::elapsed_steps);
  DefineTaskProperties<decltype(core), SingleAgentCore>(core);

  py::class_<MultiAgentEnv> multi(m, "MultiAgentEnv", py::dynamic_attr());
  multi.def(py::init([](const std::string& game, py::handle max_cycles, py::kwargs kwargs) {
              const int limit = max_cycles.is_none()
                                    ? 0
                                    : static_cast<int>(CheckInt(max_cycles, "max_cycles", 1));
              return std::make_unique<MultiAgentEnv>(game, limit, py::dict(kwargs));
            }),
            py::arg("game"), py::kw_only(), py::arg("max_cycles") = 1000)
      .def("reset", &MultiAgentEnv::Reset, py::kw_only(), py::arg("seed") = py::none(),
           py::arg("options") = py::none(),
           "Starts an episode (options: episode options such as shaping_weight); returns "
           "(obs [A, obs_dim], info rows [A, info_width]).")
      .def_property_readonly("episode_options", [](const MultiAgentEnv& s) { return OptionNames(s.task()); })
      .def("step", &MultiAgentEnv::Step, py::arg("actions"),
           "Steps every agent: actions [A, act_dim]; returns (obs, rewards, terminations, "
           "truncations, info rows, physics_unstable).")
      .def("state", &MultiAgentEnv::State, "Global state: qpos and qvel of the world (float32).")
      .def_property_readonly("state_dim", &MultiAgentEnv::state_dim)
      .def("get_state", &MultiAgentEnv::GetState)
      .def("set_state", &MultiAgentEnv::SetState, py::arg("qpos"), py::arg("qvel"))
      .def("get_obs", &MultiAgentEnv::Obs)
      .def("__reduce__",
           [m](py::object self) {
             auto& s = self.cast<MultiAgentEnv&>();
             py::dict kwargs = CopyDict(s.kwargs());
             kwargs["max_cycles"] = s.max_cycles() > 0 ? py::object(py::int_(s.max_cycles())) : py::object(py::none());
             return py::make_tuple(m.attr("_restore"),
                                   py::make_tuple(py::type::of(self), py::make_tuple(s.game()), kwargs));
           })
      .def_property_readonly("game", &MultiAgentEnv::game)
      .def_property_readonly("kwargs", [](const MultiAgentEnv& s) { return CopyDict(s.kwargs()); })
      .def_property_readonly("max_cycles", &MultiAgentEnv::max_cycles)
      .def_property_readonly("elapsed_steps", &MultiAgentEnv::elapsed_steps);
  DefineTaskProperties<decltype(multi), MultiAgentEnv>(multi);

  py::class_<PyWorldPool> pool(m, "WorldPool", py::dynamic_attr());
  pool.def(py::init([](const std::string& task, py::handle num_envs, py::handle num_threads,
                       py::handle max_episode_steps, const std::string& autoreset_mode,
                       py::kwargs kwargs) {
             return std::make_unique<PyWorldPool>(task, num_envs, num_threads, max_episode_steps,
                                                  autoreset_mode, py::dict(kwargs));
           }),
           py::arg("task"), py::arg("num_envs"), py::kw_only(), py::arg("num_threads") = py::none(),
           py::arg("max_episode_steps") = 1000, py::arg("autoreset_mode") = "next_step")
      .def("reset_all", &PyWorldPool::ResetAll, py::kw_only(), py::arg("seed") = py::none(),
           "Seeds world i with seed + i, resets all; returns the obs buffer.")
      .def("reset_one", &PyWorldPool::ResetOne, py::arg("index"), py::kw_only(),
           py::arg("seed") = py::none(), "Resets world `index` (reseeded if `seed` is given).")
      .def("step_all", &PyWorldPool::StepAll, py::arg("actions"),
           "Steps every world; returns the (obs, rewards, terminations, truncations) buffers.")
      .def("get_state", &PyWorldPool::GetState, py::arg("index"))
      .def("set_state", &PyWorldPool::SetState, py::arg("index"), py::arg("qpos"), py::arg("qvel"))
      .def("set_option", [](PyWorldPool& s, const std::string& name, py::handle value, py::handle index) {
             s.Open();
             s.SetOption(name, value, index);
           }, py::arg("name"), py::arg("value"), py::kw_only(), py::arg("index") = py::none(),
           "Sets an episode option (e.g. shaping_weight) for every world, or for world `index`; "
           "it applies from the next step on.")
      .def_property_readonly("episode_options", [](const PyWorldPool& s) { return OptionNames(s.Open().task()); })
      .def("close", &PyWorldPool::Close, "Joins the threads and frees the worlds; idempotent.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyWorldPool& self, py::args) {
        self.Close();
        return false;
      })
      .def("__reduce__",
           [m](py::object self) {
             auto& s = self.cast<PyWorldPool&>();
             py::dict kwargs = CopyDict(s.kwargs_);
             kwargs["num_threads"] = s.closed() ? py::object(py::none()) : py::object(py::int_(s.Open().num_threads()));
             kwargs["max_episode_steps"] = s.max_episode_steps_;
             kwargs["autoreset_mode"] = s.autoreset_mode_;
             const long n = s.obs_.shape(0);
             return py::make_tuple(m.attr("_restore"),
                                   py::make_tuple(py::type::of(self), py::make_tuple(s.task_name_, n), kwargs));
           })
      .def_property_readonly("closed", &PyWorldPool::closed)
      .def_property_readonly("task", [](const PyWorldPool& s) { return s.task_name_; })
      .def_property_readonly("kwargs", [](const PyWorldPool& s) { return CopyDict(s.kwargs_); })
      .def_property_readonly("num_envs", [](const PyWorldPool& s) { return s.obs_.shape(0); })
      .def_property_readonly("num_threads", [](const PyWorldPool& s) { return s.Open().num_threads(); })
      .def_property_readonly("max_episode_steps", [](const PyWorldPool& s) { return s.max_episode_steps_; })
      .def_property_readonly("autoreset_mode", [](const PyWorldPool& s) { return s.autoreset_mode_; })
      .def_readonly("obs", &PyWorldPool::obs_)
      .def_readonly("rewards", &PyWorldPool::reward_)
      .def_readonly("terminations", &PyWorldPool::terminated_)
      .def_readonly("truncations", &PyWorldPool::truncated_)
      .def_readonly("infos", &PyWorldPool::info_, "[num_envs, num_agents, info_width] float64")
      .def_readonly("final_obs", &PyWorldPool::final_obs_)
      .def_readonly("final_infos", &PyWorldPool::final_info_)
      .def_readonly("reset_kind", &PyWorldPool::reset_kind_,
                    "per world: 0 stepped, 1 reset by this call, 2 ended and auto-reset in this call")
      .def_readonly("unstable", &PyWorldPool::unstable_)
      .def_readonly("elapsed_steps", &PyWorldPool::elapsed_);
  // Task properties need the open pool.
  pool.def_property_readonly("num_agents", [](const PyWorldPool& s) { return s.Open().task().num_agents(); })
      .def_property_readonly("obs_dim", [](const PyWorldPool& s) { return s.Open().task().obs_dim(); })
      .def_property_readonly("act_dim", [](const PyWorldPool& s) { return s.Open().task().act_dim(); })
      .def_property_readonly("action_low", [](const PyWorldPool& s) { return ToFloatArray(s.Open().task().action_low()); })
      .def_property_readonly("action_high", [](const PyWorldPool& s) { return ToFloatArray(s.Open().task().action_high()); })
      .def_property_readonly("info_fields", [](const PyWorldPool& s) { return InfoFields(s.Open().task()); })
      .def_property_readonly("dt", [](const PyWorldPool& s) { return s.Open().task().dt(); })
      .def("model_mjb", [](const PyWorldPool& s) { return ModelBytes(s.Open().task().model()); },
           "The compiled model as MJB bytes (mujoco.MjModel.from_binary_path).");
}
