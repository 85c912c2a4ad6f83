// WorldPool: num_envs worlds of any task stepped on native threads, results in
// NumPy arrays allocated once by the binding. PyWorldPool is that binding; a
// front end with a task of its own (MaMuJoCo's robot plus observation plan)
// is this class over its task (see mamujoco_binding.cc), so every pool has
// the same buffers, locking, fork handling and signal polling.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "../errors.h"
#include "../fork_guard.h"
#include "../simulation_poll.h"
#include "../task.h"
#include "../validation.h"
#include "../world_pool.h"
#include "checks.h"
#include "common.h"
#include "diagnostics.h"
#include "gil.h"

namespace joltgym::bindings {

void DefinePool(pybind11::module_& m);

// A NumPy array over memory the pool owns: its base is a capsule that frees
// the memory once the pool and every view are gone. A view that does not own
// its data cannot be resized (ndarray.resize raises ValueError), so the
// pool's pointers stay valid however the arrays are used.
template <typename T>
py::array_t<T> PoolArray(std::vector<py::ssize_t> shape) {
  py::ssize_t size = 1;
  for (py::ssize_t d : shape) size *= d;
  T* data = new T[static_cast<std::size_t>(std::max<py::ssize_t>(size, 1))]();
  py::capsule owner(data, [](void* p) { delete[] static_cast<T*>(p); });
  return py::array_t<T>(std::move(shape), data, owner);
}

// What every pool's constructor checks first, in this order (num_envs,
// batch_size, num_threads, max_episode_steps, autoreset_mode).
struct PoolSpec {
  int num_envs = 1;
  int batch_size = 1;
  int threads = 1;  // capped at the CPUs this process may use, and at num_envs
  int max_episode_steps = 0;  // 0: no time limit
  AutoresetMode mode = AutoresetMode::kNextStep;
  std::string autoreset_mode = "next_step";

  static PoolSpec Parse(py::handle num_envs, py::handle num_threads, py::handle max_episode_steps,
                        const std::string& autoreset_mode, py::handle batch_size) {
    PoolSpec spec;
    const int n = static_cast<int>(CheckInt(num_envs, "num_envs", 1, kMaxNumEnvs));
    spec.num_envs = n;
    spec.batch_size =
        batch_size.is_none() ? n : static_cast<int>(CheckInt(batch_size, "batch_size", 1, n));
    // Capped at the CPUs this process may use, and at num_envs (validation.h).
    spec.threads = PoolThreads(
        n, num_threads.is_none() ? 0 : static_cast<int>(CheckInt(num_threads, "num_threads", 1)));
    spec.max_episode_steps =
        max_episode_steps.is_none() ? 0 : static_cast<int>(CheckInt(max_episode_steps, "max_episode_steps", 0));
    spec.mode = ParseAutoresetMode(autoreset_mode);
    spec.autoreset_mode = autoreset_mode;
    return spec;
  }
};

// The binding of WorldPool (the Python class WorldPool, and the base of
// every pool class over a task of its own, such as MaMuJoCoPool). Hidden,
// as pybind11's own types are (InfoDecoder's note in info_decoder.h).
class __attribute__((visibility("hidden"))) PyWorldPool {
 public:
  // WorldPool(task, num_envs, ...): a registered task, by name.
  PyWorldPool(const std::string& task_name, py::handle num_envs, py::handle num_threads,
              py::handle max_episode_steps, const std::string& autoreset_mode,
              py::handle batch_size, py::handle dtype, py::dict kwargs)
      : kind_("WorldPool"), task_name_(task_name), kwargs_(CopyDict(kwargs)) {
    const PoolSpec spec =
        PoolSpec::Parse(num_envs, num_threads, max_episode_steps, autoreset_mode, batch_size);
    const std::string owner = "WorldPool('" + task_name + "')";
    ThreadConstructionReport().Clear();
    auto task = MakeTask(task_name, kwargs, owner, spec.max_episode_steps);
    task_name_ = TaskRegistry::Get().Find(task_name).name;  // the native name of any spelling
    CheckPoolFits(*task, spec.num_envs);
    const bool float64 = ParseDtype(dtype, TaskRegistry::Get().Find(task_name).kind);
    Build(spec, std::move(task), float64, owner);
  }

  virtual ~PyWorldPool() {
    // (Finalized in a forked child, mutex_ keeps a mutex a vanished thread may
    // hold, and the pool's threads are abandoned likewise, see ThreadPool.)
    // The pool goes first: its destructor joins the workers, which may still
    // be stepping worlds sent and never received, reading actions_ and
    // writing the result arrays that the members below own (a pool dropped
    // without close() would otherwise free them under the workers' feet).
    // Nothing else can hold the mutex now (every call holds a reference).
    if (pool_) WithoutGil([&] { pool_.reset(); });
  }

 protected:
  // For a subclass over a task of its own: `kind` is its Python class name
  // (in error messages); it then builds its task and calls Build.
  PyWorldPool(std::string kind, std::string task_name, py::dict kwargs)
      : kind_(std::move(kind)), task_name_(std::move(task_name)), kwargs_(CopyDict(kwargs)) {}

  // Allocates the result buffers, starts the WorldPool of `task` over them
  // and raises the warnings of its construction; `owner` names the pool in
  // them ("WorldPool('half_cheetah')").
  void Build(const PoolSpec& spec, std::shared_ptr<const Task> pool_task, bool float64,
             const std::string& owner) {
    task_ = std::move(pool_task);
    max_episode_steps_ = spec.max_episode_steps;
    autoreset_mode_ = spec.autoreset_mode;
    batch_size_ = spec.batch_size;
    float64_ = float64;
    const int n = spec.num_envs, threads = spec.threads;
    const AutoresetMode mode = spec.mode;
    const Task& task = *task_;
    const py::ssize_t a = task.num_agents(), od = task.obs_dim(), iw = task.info_layout().width();
    auto real = [this](std::vector<py::ssize_t> shape) -> py::array {
      if (float64_) return PoolArray<double>(std::move(shape));
      return PoolArray<float>(std::move(shape));
    };
    obs_ = real({py::ssize_t{n}, a, od});
    final_obs_ = real({py::ssize_t{n}, a, od});
    reward_ = real({py::ssize_t{n}, a});
    terminated_ = PoolArray<bool>({py::ssize_t{n}, a});
    truncated_ = PoolArray<bool>({py::ssize_t{n}, a});
    info_ = PoolArray<double>({py::ssize_t{n}, a, iw});
    final_info_ = PoolArray<double>({py::ssize_t{n}, a, iw});
    reset_kind_ = PoolArray<std::uint8_t>({py::ssize_t{n}});
    unstable_ = PoolArray<bool>({py::ssize_t{n}});
    elapsed_ = PoolArray<std::int32_t>({py::ssize_t{n}});
    const py::ssize_t bs = batch_size_;
    recv_ids_ = PoolArray<std::int32_t>({bs});
    recv_obs_ = real({bs, a, od});
    recv_final_obs_ = real({bs, a, od});
    recv_reward_ = real({bs, a});
    recv_terminated_ = PoolArray<bool>({bs, a});
    recv_truncated_ = PoolArray<bool>({bs, a});
    recv_info_ = PoolArray<double>({bs, a, iw});
    recv_final_info_ = PoolArray<double>({bs, a, iw});
    recv_reset_kind_ = PoolArray<std::uint8_t>({bs});
    recv_unstable_ = PoolArray<bool>({bs});
    recv_elapsed_ = PoolArray<std::int32_t>({bs});
    send_ids_.assign(static_cast<std::size_t>(n), 0);
    recv_scratch_ids_.assign(static_cast<std::size_t>(batch_size_), 0);
    send_checker_ = std::make_unique<SendIdChecker>(n);
    send_actions_.assign(static_cast<std::size_t>(n) * a * task.act_dim(), 0.0f);
    action_shape_ = {py::ssize_t{n}, a, py::ssize_t{task.act_dim()}};
    actions_.assign(static_cast<std::size_t>(n) * a * task.act_dim(), 0.0f);
    WithoutGil(
        [&] { pool_ = std::make_unique<WorldPool>(task_, n, threads, max_episode_steps_, mode); });
    pool_->Bind(PointAt(obs_, reward_, final_obs_, terminated_, truncated_, info_, final_info_, reset_kind_,
                        unstable_, elapsed_));
    // A long reset_all(), step_all() or recv() on the main thread notices
    // signals (Ctrl-C, SIGALRM): see PollSignals.
    pool_->SetInterruptPoll(&PollSelf, this);
    recv_ = PointAt(recv_obs_, recv_reward_, recv_final_obs_, recv_terminated_, recv_truncated_, recv_info_,
                    recv_final_info_, recv_reset_kind_, recv_unstable_, recv_elapsed_);
    RaiseConstructionWarnings(owner);
    std::vector<std::pair<int, MujocoReport>> reports;
    pool_->TakeReports(reports);
    RaiseReports(reports, owner, "reset_all()", true);
  }

 public:
  static constexpr const char* kResetHint = "reset_all() or reset_one(i)";

  // SimulationPoll's callback: PollSignals for this pool.
  static bool PollSelf(void* self) { return PollSignals(self); }

  // dtype=None: float64 (Gymnasium v5's) for a single-agent task, float32 for a game.
  static bool ParseDtype(py::handle dtype, TaskKind kind) {
    if (dtype.is_none()) return kind == TaskKind::kSingleAgent;
    py::object numpy = py::module_::import("numpy");
    py::object given;
    try {
      given = numpy.attr("dtype")(dtype);
    } catch (py::error_already_set&) {
      given = py::none();
    }
    if (!given.is_none()) {
      if (given.equal(numpy.attr("dtype")("float64"))) return true;
      if (given.equal(numpy.attr("dtype")("float32"))) return false;
    }
    throw py::value_error("dtype should be None, numpy.float32 or numpy.float64, got " +
                          py::repr(dtype).cast<std::string>());
  }

  // One set of result arrays (the step's, or recv()'s batch) as the core's
  // PoolBuffers: observations, rewards and final observations in the pool's
  // layout (float32 or float64).
  PoolBuffers PointAt(py::array& obs, py::array& reward, py::array& final_obs, py::array_t<bool>& terminated,
                      py::array_t<bool>& truncated, py::array_t<double>& info, py::array_t<double>& final_info,
                      py::array_t<std::uint8_t>& reset_kind, py::array_t<bool>& unstable,
                      py::array_t<std::int32_t>& elapsed) const {
    PoolBuffers b;
    if (float64_) {
      b.obs64 = static_cast<double*>(obs.mutable_data());
      b.reward64 = static_cast<double*>(reward.mutable_data());
      b.final_obs64 = static_cast<double*>(final_obs.mutable_data());
    } else {
      b.obs = static_cast<float*>(obs.mutable_data());
      b.reward = static_cast<float*>(reward.mutable_data());
      b.final_obs = static_cast<float*>(final_obs.mutable_data());
    }
    b.terminated = terminated.mutable_data();
    b.truncated = truncated.mutable_data();
    b.info = info.mutable_data();
    b.final_info = final_info.mutable_data();
    b.reset_kind = reset_kind.mutable_data();
    b.unstable = unstable.mutable_data();
    b.elapsed = elapsed.mutable_data();
    return b;
  }

  // reset_all(seed=s) seeds world i with s + i (as Gymnasium's SyncVectorEnv
  // seeds its envs); reset_all(seed=None) continues each world's random
  // stream once that world has been seeded (as Gymnasium's vector envs and
  // SuperSuit do), and seeds a world never seeded from fresh entropy (the
  // rule is WorldPool's, shared with the C API).
  py::array ResetAll(const py::object& seed) {
    const bool reseed = !seed.is_none();
    const SeedWords base = reseed || Open().any_unseeded() ? SeedOrRandom(seed) : SeedWords{};
    std::vector<std::pair<int, MujocoReport>> reports;
    std::mutex& mutex = Mutex();
    WithoutGil([&] {
      std::lock_guard<std::mutex> lock(mutex);
      if (pool_) {
        pool_->ResetAll(reseed, base);
        pool_->TakeReports(reports);
      }
    });
    Open();
    RaiseReports(reports, "reset_all()", kResetHint, true);
    return obs_;
  }

  // reset_one(i, seed=s) seeds world i with s; with seed=None it continues the
  // world's stream, or seeds it from fresh entropy if it was never seeded.
  py::array ResetOne(py::handle index, const py::object& seed) {
    const int i = CheckIndex(index);
    const bool reseed = !seed.is_none();
    const SeedWords s = reseed || !Open().seeded(i) ? SeedOrRandom(seed) : SeedWords{};
    std::vector<std::pair<int, MujocoReport>> reports;
    std::mutex& mutex = Mutex();
    bool busy = false;
    WithoutGil([&] {
      std::lock_guard<std::mutex> lock(mutex);
      if (pool_) {
        busy = pool_->in_flight(i);
        if (!busy) {
          pool_->ResetOne(i, reseed, s);
          pool_->TakeReportsOf(&i, 1, reports);
        }
      }
    });
    Open();
    if (busy) throw InFlightError("reset_one()", i);
    RaiseReports(reports, "reset_one()", kResetHint, true);
    return obs_[py::int_(i)];
  }

  py::tuple StepAll(py::handle actions) {
    // Sizes are read before converting `actions`, which may run Python code
    // (even close() this pool); the pool is looked up again under the lock.
    Open();
    const py::ssize_t num_envs = action_shape_[0], num_agents = action_shape_[1],
                      act_dim = action_shape_[2];
    const std::vector<py::ssize_t> shape = ActionShape(actions, num_envs, num_agents, act_dim);
    // Type, shape and values are checked here; the values are checked again
    // as they are copied into the pool's own buffer, with the GIL held,
    // and the worlds step from that copy: another thread writing into the
    // caller's array (even NumPy, which writes without the GIL) cannot slip
    // a NaN in after the check.
    auto checked = CheckFloatArray(actions, shape, "actions");
    const float* source = checked.data();
    const std::size_t count = actions_.size();
    std::string not_steppable;
    std::vector<std::pair<int, MujocoReport>> reports;
    std::unique_lock<std::mutex> lock(Mutex(), std::try_to_lock);
    // Staged when another thread is inside the pool, or when worlds are in
    // flight: their workers read their rows of actions_ (send()'s), which a
    // refused step_all must not overwrite.
    const bool direct = lock.owns_lock() && Open().in_flight() == 0;
    std::vector<float> staged;
    if (direct) {
      CopyFinite(source, actions_.data(), count, shape, "actions");
    } else {
      staged.resize(count);
      CopyFinite(source, staged.data(), count, shape, "actions");
    }
    WithoutGil([&] {
      if (!lock.owns_lock()) lock.lock();
      if (pool_) {
        not_steppable = NotSteppableMessage(*pool_, "step_all()");
        if (not_steppable.empty()) {
          if (!direct) std::copy(staged.begin(), staged.end(), actions_.begin());
          // (Each world's step polls inside itself too: ThreadPool::ParallelFor.)
          pool_->StepAll(actions_.data());
          pool_->TakeReports(reports);
        }
      }
      lock.unlock();
    });
    Open();  // raises if closed meanwhile
    if (!not_steppable.empty()) throw StateError(not_steppable);
    RaiseReports(reports, "step_all()", kResetHint, true);
    return py::make_tuple(obs_, reward_, terminated_, truncated_);
  }

  // Copies world `index`'s whole mjData (mj_copyData: state, derived
  // quantities and contacts, as its last step left them) into `data`, a
  // mujoco.MjData of a model with this task's sizes (one made from
  // model_mjb()), under the pool's lock: a renderer then draws the world
  // exactly as the Gymnasium env it equals would draw itself.
  void CopyDataInto(py::handle index, const py::object& data) {
    const int i = CheckIndex(index);
    const mjModel* m = Open().task().model();
    if (!py::hasattr(data, "_address") || !py::hasattr(data, "model") ||
        !py::hasattr(data.attr("model"), "_address")) {
      throw py::type_error("data should be a mujoco.MjData of a model made from model_mjb(), got " +
                           ClipMiddle(py::str(py::type::of(data)).cast<std::string>(), 200));
    }
    const py::object model = data.attr("model");
    const std::pair<const char*, long long> sizes[] = {
        {"nq", m->nq}, {"nv", m->nv}, {"nu", m->nu}, {"na", m->na}, {"nbody", m->nbody},
        {"ngeom", m->ngeom}, {"nbuffer", static_cast<long long>(m->nbuffer)},
        {"narena", static_cast<long long>(m->narena)}};
    for (const auto& [name, expected] : sizes) {
      const long long got = model.attr(name).cast<long long>();
      if (got != expected) {
        throw py::value_error("data should be a mujoco.MjData of a model made from model_mjb(); its model has " +
                              std::string(name) + "=" + std::to_string(got) + ", expected " +
                              std::to_string(expected));
      }
    }
    auto* dest = reinterpret_cast<mjData*>(data.attr("_address").cast<std::uintptr_t>());
    std::mutex& mutex = Mutex();
    bool busy = false;
    WithoutGil([&] {
      std::lock_guard<std::mutex> lock(mutex);
      if (pool_) {
        busy = pool_->in_flight(i);
        if (!busy) mj_copyData(dest, m, pool_->world(i).data());
      }
    });
    Open();
    if (busy) throw InFlightError("copy_data_into()", i);
  }

  // Copies world `index`'s qpos/qvel under the pool's lock, so a reader (a
  // renderer, say) never sees a world half-way through a step that another
  // Python thread is running.
  py::tuple GetState(py::handle index) {
    const int i = CheckIndex(index);
    const mjModel* m = Open().task().model();
    const long nq = m->nq, nv = m->nv;
    py::array_t<double> qpos(nq), qvel(nv);
    double* p = qpos.mutable_data();
    double* v = qvel.mutable_data();
    std::mutex& mutex = Mutex();
    bool busy = false;
    WithoutGil([&] {
      std::lock_guard<std::mutex> lock(mutex);
      if (pool_) {
        busy = pool_->in_flight(i);
        if (busy) return;
        const mjData* d = pool_->world(i).data();
        std::copy(d->qpos, d->qpos + nq, p);
        std::copy(d->qvel, d->qvel + nv, v);
      }
    });
    Open();
    if (busy) throw InFlightError("get_state()", i);
    return py::make_tuple(qpos, qvel);
  }

  void SetState(py::handle index, py::handle qpos, py::handle qvel) {
    const int i = CheckIndex(index);
    const Task& task = *task_;
    const long nq = task.model()->nq, nv = task.model()->nv;
    // Copied (and checked as copied) with the GIL held, like the actions.
    auto checked_p = CheckStateArray(qpos, nq, "qpos");
    auto checked_v = CheckStateArray(qvel, nv, "qvel");
    std::vector<double> p(nq), v(nv);
    CopyFinite(checked_p.data(), p.data(), p.size(), "qpos");
    CopyFinite(checked_v.data(), v.data(), v.size(), "qvel");
    bool failed = false;
    bool busy = false;
    bool ended = false;
    MujocoReport report;
    std::mutex& mutex = Mutex();
    WithoutGil([&] {
      std::lock_guard<std::mutex> lock(mutex);
      if (pool_) {
        busy = pool_->in_flight(i);
        if (busy) return;
        // Its next step would reset it and discard the state set.
        ended = pool_->awaiting_autoreset(i);
        if (ended) return;
        World& world = pool_->world(i);
        failed = world.failed();
        if (!failed) {
          world.SetState(p.data(), v.data(), pool_->obs_row(i));
          pool_->Publish(i);
          report = std::move(world.report());
          world.report().Clear();
        }
      }
    });
    Open();
    if (busy) throw InFlightError("set_state()", i);
    if (ended) {
      throw StateError("set_state() called on world " + std::to_string(i) +
                       ", whose episode ended (its next step only resets it, autoreset_mode="
                       "'next_step'), so the state would be discarded; expected reset_one(" +
                       std::to_string(i) + ") (or a step) first");
    }
    if (failed) {
      throw StateError("set_state() called after a MuJoCo error in world " + std::to_string(i) +
                       "; expected reset_all() or reset_one(" + std::to_string(i) + ") first");
    }
    std::vector<std::pair<int, MujocoReport>> reports;
    if (!report.empty()) reports.emplace_back(i, std::move(report));
    RaiseReports(reports, "set_state()", kResetHint, true);
  }

  // The value is converted (which may run Python code: a __float__ that
  // calls back into this pool) before the lock is taken.
  void SetOption(py::handle name, py::handle value, py::handle index) {
    Open();
    if (!py::isinstance<py::str>(name)) {
      throw py::type_error("name should be a str (an option name), got " +
                           ClipRepr(py::repr(name).cast<std::string>()));
    }
    py::dict options;
    options[name] = value;  // the str itself: a NUL in it is part of the name
    SetOptions(options, index);
  }

  // Every option is checked before any is written: all or none.
  void SetOptions(const py::object& options, py::handle index) {
    Open();
    const auto writes = ConvertOptions(*task_, options);
    const int only = index.is_none() ? -1 : CheckIndex(index);
    std::mutex& mutex = Mutex();
    int busy = -1;
    WithoutGil([&] {
      std::lock_guard<std::mutex> lock(mutex);
      if (!pool_) return;
      for (int i = 0; i < pool_->num_envs() && busy < 0; ++i) {
        if ((only < 0 || i == only) && pool_->in_flight(i)) busy = i;
      }
      if (busy >= 0) return;
      std::vector<double*> scratches;
      for (int i = 0; i < pool_->num_envs(); ++i) {
        if (only < 0 || i == only) scratches.push_back(pool_->world(i).scratch());
      }
      WriteOptions(writes, scratches);
    });
    Open();  // raises if the conversion closed the pool
    if (busy >= 0) throw InFlightError("set_option()", busy);
  }

  static StateError InFlightError(const std::string& call, int i) {
    return StateError(InFlightMessage(call, i));
  }

  // The shape `actions` is checked against for `rows` worlds: [rows,
  // num_agents, act_dim], or [rows, act_dim] for a single-agent pool given a
  // 2-d array (anything without ndim is left to CheckFloatArray to reject).
  static std::vector<py::ssize_t> ActionShape(py::handle actions, py::ssize_t rows,
                                              py::ssize_t num_agents, py::ssize_t act_dim) {
    if (num_agents == 1) {
      py::array as_array;
      try {
        as_array = py::array::ensure(actions);
      } catch (py::error_already_set&) {
      }
      if (!as_array) PyErr_Clear();
      if (as_array && as_array.ndim() == 2) return {rows, act_dim};
    }
    return {rows, num_agents, act_dim};
  }

  // Locks the pool's mutex: at once if free (the GIL held), otherwise waiting
  // with the GIL released (see Close() for the lock order).
  std::unique_lock<std::mutex> LockPool() {
    std::unique_lock<std::mutex> lock(Mutex(), std::try_to_lock);
    if (!lock.owns_lock()) WithoutGil([&] { lock.lock(); });
    return lock;
  }

  // send(actions, env_ids): one step of each listed world, queued; returns at
  // once. Arguments are converted (which may run Python code) before the
  // lock is taken, and copied (and checked as copied) with the GIL held.
  void Send(py::handle actions, py::handle env_ids) {
    Open();
    const long n = action_shape_[0];
    const py::ssize_t num_agents = action_shape_[1], act_dim = action_shape_[2];
    py::array ids_array;
    try {
      ids_array = py::array::ensure(env_ids);
    } catch (py::error_already_set&) {
    }
    if (!ids_array) PyErr_Clear();
    if (ids_array && ids_array.ndim() == 1 && ids_array.shape(0) == 0) CheckSendCount(0, n);
    if (!ids_array || (ids_array.dtype().kind() != 'i' && ids_array.dtype().kind() != 'u') ||
        ids_array.ndim() != 1) {
      throw py::type_error("env_ids should be a 1-D sequence of ints in [0, " + std::to_string(n) +
                           "), got " + ClipRepr(py::repr(env_ids).cast<std::string>()));
    }
    const py::ssize_t count = ids_array.shape(0);
    CheckSendCount(count, n);
    const std::vector<py::ssize_t> shape = ActionShape(actions, count, num_agents, act_dim);
    auto checked = CheckFloatArray(actions, shape, "actions");
    // recv()'s int32 ids (and int64 ones) are read in place; other integer
    // arrays are converted.
    // Unsigned ids above int64's range would wrap to negatives in the
    // conversion below: named as given.
    if (ids_array.dtype().kind() == 'u' && ids_array.itemsize() == 8) {
      using Wide = py::array_t<std::uint64_t, kReadable>;
      const Wide wide = Wide::ensure(ids_array);
      if (!wide) throw py::error_already_set();
      for (py::ssize_t k = 0; k < count; ++k) {
        const std::uint64_t id = wide.data()[k];
        if (id >= static_cast<std::uint64_t>(n)) {
          throw BadIndex("env_ids should be in [0, " + std::to_string(n) + "), got " +
                         std::to_string(id) + " at position " + std::to_string(k));
        }
      }
    }
    py::array ids_owner = ids_array;
    const bool in_place = (ids_array.flags() & py::array::c_style) != 0 && IsAligned(ids_array) &&
                          (ids_array.dtype().is(py::dtype::of<std::int32_t>()) ||
                           ids_array.dtype().is(py::dtype::of<std::int64_t>()));
    if (!in_place) {
      using Ids = py::array_t<std::int64_t, kReadable>;
      ids_owner = Ids::ensure(ids_array);
      if (!ids_owner) throw py::error_already_set();
    }
    const bool narrow = ids_owner.dtype().is(py::dtype::of<std::int32_t>());
    const void* id_data = ids_owner.data();
    auto id_at = [&](py::ssize_t k) -> long long {
      return narrow ? static_cast<const std::int32_t*>(id_data)[k]
                    : static_cast<const std::int64_t*>(id_data)[k];
    };
    const std::size_t row = static_cast<std::size_t>(num_agents * act_dim);
    std::unique_lock<std::mutex> lock(Mutex(), std::try_to_lock);
    std::vector<int> local_ids;      // only when another thread is inside the pool
    std::vector<float> local_actions;
    int* staged_ids = send_ids_.data();
    float* staged_actions = send_actions_.data();
    if (!lock.owns_lock()) {
      local_ids.resize(static_cast<std::size_t>(count));
      local_actions.resize(static_cast<std::size_t>(count) * row);
      staged_ids = local_ids.data();
      staged_actions = local_actions.data();
    }
    for (py::ssize_t k = 0; k < count; ++k) staged_ids[k] = CheckSendId(id_at(k), k, n);
    CopyFinite(checked.data(), staged_actions, static_cast<std::size_t>(count) * row, shape,
               "actions");
    if (!lock.owns_lock()) WithoutGil([&] { lock.lock(); });
    // Mutex and GIL held from here: no Python code runs until the unlock.
    WorldPool& pool = Open();
    send_checker_->Check(pool, staged_ids, static_cast<int>(count));
    for (py::ssize_t k = 0; k < count; ++k) {
      std::memcpy(actions_.data() + static_cast<std::size_t>(staged_ids[k]) * row,
                  staged_actions + static_cast<std::size_t>(k) * row, sizeof(float) * row);
    }
    pool.Send(actions_.data(), staged_ids, static_cast<int>(count));
  }

  // recv(): the first batch_size worlds in flight to finish.
  py::tuple Recv() {
    Open();
    std::unique_lock<std::mutex> lock = LockPool();
    WorldPool& pool = Open();
    const std::string blocked = NotReceivableMessage(pool, batch_size_);
    if (!blocked.empty()) throw StateError(blocked);
    std::vector<std::pair<int, MujocoReport>> reports;
    // Collected into recv_scratch_ids_, so that a recv() stopped by a signal
    // handler (the worlds stay in flight, for the next recv()) leaves the
    // batch buffers as they were.
    int* ids = recv_scratch_ids_.data();
    WithoutGil([&] {
      if (!pool.Recv(ids, batch_size_, recv_)) return;
      std::copy(ids, ids + batch_size_, recv_ids_.mutable_data());
      pool.TakeReportsOf(ids, batch_size_, reports);
    });
    lock.unlock();
    RaiseReports(reports, "recv()", kResetHint, true);
    return py::make_tuple(recv_ids_, recv_obs_, recv_reward_, recv_terminated_, recv_truncated_);
  }

  // async_reset(seed=...): reset_all(seed=...), then every world in flight
  // with its reset observation, for recv() to return batch by batch.
  void AsyncReset(const py::object& seed) {
    ResetAll(seed);
    std::unique_lock<std::mutex> lock = LockPool();
    Open().SendReset();
  }

  // Lock order: the mutex (GIL released), then the GIL. No call waits for
  // the mutex while holding the GIL (step_all only try_locks it then, to copy
  // the actions, and otherwise waits with the GIL released) or runs Python
  // while holding the mutex, so this cannot deadlock; taking the GIL for the
  // swap keeps every reader that holds the GIL (properties, argument checks)
  // from seeing a dangling pool.
  void Close() {
    std::mutex& mutex = Mutex();
    WithoutGil([&] {
      std::lock_guard<std::mutex> lock(mutex);
      std::unique_ptr<WorldPool> doomed;
      WithGil([&] { doomed = std::move(pool_); });
      doomed.reset();  // joins the worker threads, GIL released
    });
  }

  // The pool's mutex, with the GIL held (every call takes it through here
  // before releasing the GIL, so a forked child replaces it only once).
  std::mutex& Mutex() {
    // A signal handler run by this pool's own reset_all() / step_all() (see
    // PollSignals) while it holds the lock: waiting for it would never end.
    if (IsPolling(this)) {
      throw StateError(kind_ + " called from a signal handler that interrupted its own "
                       "reset_all(), step_all() or recv(); expected the handler to leave this pool "
                       "alone (raise, and use the pool once the call has returned)");
    }
    return mutex_.Get(pool_.get());
  }

  WorldPool& Open() const {
    if (!pool_) throw StateError(kind_ + " is closed; expected an open pool (create a new one)");
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

  std::string kind_;  // the Python class: WorldPool, MaMuJoCoPool
  std::string task_name_;
  py::dict kwargs_;
  int max_episode_steps_ = 0;
  std::string autoreset_mode_;
  std::shared_ptr<const Task> task_;
  std::unique_ptr<WorldPool> pool_;
  // Serializes native calls. Replaced (the old one leaked) in a forked child,
  // where a thread of the parent may have held it at the fork.
  ForkAwareMutex mutex_;
  std::vector<py::ssize_t> action_shape_;  // [num_envs, num_agents, act_dim]
  std::vector<float> actions_;             // the pool's copy of the last actions (under mutex_)
  int batch_size_ = 1;
  PoolBuffers recv_;  // the batch buffers recv() fills
  std::vector<int> send_ids_;              // send()'s staging (under mutex_)
  std::vector<int> recv_scratch_ids_;      // recv()'s (under mutex_)
  std::unique_ptr<SendIdChecker> send_checker_;  // (under mutex_)
  std::vector<float> send_actions_;
  py::array_t<std::int32_t> recv_ids_, recv_elapsed_;
  bool float64_ = false;  // observation/reward layout
  py::array recv_obs_, recv_final_obs_, recv_reward_;
  py::array_t<bool> recv_terminated_, recv_truncated_, recv_unstable_;
  py::array_t<double> recv_info_, recv_final_info_;
  py::array_t<std::uint8_t> recv_reset_kind_;
  py::array obs_, final_obs_, reward_;
  py::array_t<bool> terminated_, truncated_, unstable_;
  py::array_t<double> info_, final_info_;
  py::array_t<std::uint8_t> reset_kind_;
  py::array_t<std::int32_t> elapsed_;
};

}  // namespace joltgym::bindings
