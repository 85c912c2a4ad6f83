#include "world_binding.h"

#include <pybind11/numpy.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../errors.h"
#include "../model_indices.h"
#include "../simulation_poll.h"
#include "../world.h"
#include "checks.h"
#include "common.h"
#include "diagnostics.h"
#include "gil.h"
#include "info_decoder.h"

// MuJoCo's own check that a model's index arrays (body_parentid, jnt_qposadr,
// geom_bodyid, ...) point inside the model, which mj_loadModel runs on every
// MJB. Exported by libmujoco (MJAPI) but declared in its internal engine_io.h,
// not in mujoco.h: declared here, for the pinned MuJoCo.
extern "C" const char* mj_validateReferences(const mjModel* m);

namespace joltgym::bindings {

namespace {

// A world, its task and its result arrays ([num_agents, ...], allocated once).
// Both Python classes below are this object with a different face.
class PyWorld {
 public:
  PyWorld(const std::string& task_name, int limit, const py::dict& kwargs, const std::string& owner)
      : task_name_(task_name), kwargs_(CopyDict(kwargs)), limit_(limit) {
    ThreadConstructionReport().Clear();
    task_ = MakeTask(task_name, kwargs, owner, limit);
    task_name_ = TaskRegistry::Get().Find(task_name).name;  // the native name of any spelling
    world_ = std::make_unique<World>(task_, limit);
    actions_.assign(static_cast<std::size_t>(task_->num_agents()) * task_->act_dim(), 0.0f);
    RaiseConstructionWarnings(owner);
    RaiseReport(world_->report(), owner, "reset()");
    decoder_ = std::make_unique<InfoDecoder>(task_->info_layout());
    const py::ssize_t a = task_->num_agents();
    obs_ = py::array_t<double>({a, py::ssize_t{task_->obs_dim()}});
    info_ = py::array_t<double>({a, py::ssize_t{task_->info_layout().width()}});
    reward_ = py::array_t<double>(a);
    terminated_ = py::array_t<bool>(a);
    truncated_ = py::array_t<bool>(a);
    for (py::array* array : {static_cast<py::array*>(&obs_), static_cast<py::array*>(&info_),
                             static_cast<py::array*>(&reward_), static_cast<py::array*>(&terminated_),
                             static_cast<py::array*>(&truncated_)}) {
      std::memset(array->mutable_data(), 0, array->nbytes());
    }
  }

  // reset(seed=None) continues the world's random stream once seeded; the
  // first reset without a seed draws one.
  void Reset(const py::object& seed, const py::object& options) {
    RequireNotPolling();
    CheckAdoptedModel();
    const bool reseed = !seed.is_none() || !seeded_;
    const SeedWords s = reseed ? SeedOrRandom(seed) : SeedWords{};
    ApplyOptions(*task_, options, {world_->scratch()});
    if (reseed) {
      world_->Seed(s);
      seeded_ = true;
    }
    world_->Reset(obs_.mutable_data(), info_.mutable_data());
    RaiseReport(world_->report(), "reset()", "reset()");
  }

  // A signal handler run by this world's own step (see Step) must not change
  // the world under it.
  void RequireNotPolling() const {
    if (IsPolling(this)) {
      throw StateError("this world was called from a signal handler that interrupted its own "
                       "step(); expected the handler to leave it alone (raise, and use the world "
                       "once the call has returned)");
    }
  }

  void RequireUsable(const char* call) const {
    RequireNotPolling();
    CheckAdoptedModel();
    if (world_->interrupted()) {
      throw StateError(std::string(call) +
                       " called after a step that was interrupted half-way (a signal handler "
                       "raised during it, leaving the world mid-step); expected reset() first");
    }
    if (world_->failed()) {
      throw StateError(std::string(call) +
                       " called after a MuJoCo error in this world; expected reset() first");
    }
  }

  void Step(py::handle actions, const std::vector<py::ssize_t>& shape, const char* what) {
    RequireUsable("step()");
    if (!world_->has_episode()) {
      throw StateError("step() called before reset(); expected reset() first");
    }
    // Stepped from the world's own copy, checked as copied (see CopyFinite).
    auto checked = CheckFloatArray(actions, shape, what);
    CopyFinite(checked.data(), actions_.data(), actions_.size(), shape, what);
    // A long step (frame_skip timesteps of a large model) notices signals
    // (Ctrl-C, SIGALRM) with the GIL held, as Python code would: a handler
    // that raises stops it half-way and leaves the world waiting for reset().
    HeldGilSignals signals(this);
    {
      const SimulationPoll poll(signals.poll(), &signals);
      world_->Step(actions_.data(), obs_.mutable_data(), reward_.mutable_data(),
                   terminated_.mutable_data(), truncated_.mutable_data(), info_.mutable_data());
    }
    if (world_->interrupted()) world_->report().Clear();
    signals.RethrowIfRaised();
    RaiseReport(world_->report(), "step()", "reset()");
  }

  // do_simulation's physics on the world's own engine: `n_frames` timesteps
  // with the controls in the world's data. Returns whether it stayed stable.
  // n_frames = 0 steps nothing (v5's do_simulation(ctrl, 0) is a no-op but for MuJoCo's
  // mj_rnePostConstraint, run on that engine as v5 does).
  bool Simulate(py::handle n_frames) {
    RequireUsable("simulate()");
    const int frames = static_cast<int>(CheckInt(n_frames, "n_frames", 0, kMaxSimulateFrames));
    HeldGilSignals signals(this);
    bool stable = true;
    {
      const SimulationPoll poll(signals.poll(), &signals);
      stable = world_->Simulate(frames);
    }
    if (world_->interrupted()) world_->report().Clear();
    signals.RethrowIfRaised();
    RaiseReport(world_->report(), "simulate()", "reset()");
    return stable;
  }
  static constexpr long kMaxSimulateFrames = 1000;

  void SetState(py::handle qpos, py::handle qvel) {
    RequireUsable("set_state()");
    const mjModel* m = task_->model();
    auto p = CheckStateArray(qpos, m->nq, "qpos");
    auto v = CheckStateArray(qvel, m->nv, "qvel");
    std::vector<double> state(static_cast<std::size_t>(m->nq + m->nv));
    CopyFinite(p.data(), state.data(), m->nq, "qpos");
    CopyFinite(v.data(), state.data() + m->nq, m->nv, "qvel");
    world_->SetState(state.data(), state.data() + m->nq, obs_.mutable_data());
    RaiseReport(world_->report(), "set_state()", "reset()");
  }

  // Global state: qpos and qvel of the whole world, float32.
  py::array_t<float> State() const {
    const mjModel* m = task_->model();
    const mjData* d = world_->data();
    py::array_t<float> out(static_cast<py::ssize_t>(m->nq + m->nv));
    float* p = out.mutable_data();
    for (int i = 0; i < m->nq; ++i) *p++ = static_cast<float>(d->qpos[i]);
    for (int i = 0; i < m->nv; ++i) *p++ = static_cast<float>(d->qvel[i]);
    return out;
  }

  // A fresh float64 array holding agent 0's observation (single-agent face).
  py::array_t<double> FirstObs() const {
    py::array_t<double> out(py::ssize_t{task_->obs_dim()});
    std::memcpy(out.mutable_data(), obs_.data(), sizeof(double) * task_->obs_dim());
    return out;
  }

  // A model handed over by AdoptMujoco is the user's to change between calls.
  // MuJoCo checks most of its options as it steps (an unknown integrator or
  // solver is its error, which arrives as MujocoError), but not the friction
  // cone, which it uses as an index: model.opt.cone = 7 ended the process
  // with a segmentation fault (v5's envs too). And another engine builds its
  // world from the model once (see EngineModel::ChangedField). Checked before
  // every call that steps, resets or reads the world.
  void CheckAdoptedModel() const {
    if (!mujoco_refs_) return;
    const mjOption& opt = task_->model()->opt;
    if (opt.cone != mjCONE_PYRAMIDAL && opt.cone != mjCONE_ELLIPTIC) {
      throw py::value_error("model.opt.cone should be 0 (mujoco.mjtCone.mjCONE_PYRAMIDAL) or 1 "
                            "(mjCONE_ELLIPTIC), got " + std::to_string(opt.cone));
    }
    if (opt.jacobian != mjJAC_DENSE && opt.jacobian != mjJAC_SPARSE && opt.jacobian != mjJAC_AUTO) {
      throw py::value_error("model.opt.jacobian should be 0 (mujoco.mjtJacobian.mjJAC_DENSE), 1 "
                            "(mjJAC_SPARSE) or 2 (mjJAC_AUTO), got " + std::to_string(opt.jacobian));
    }
    // A timestep of 0 made dt zero: the reward was NaN (0 / 0) with no word of why on MuJoCo,
    // physics_unstable on another engine; a construction with it is refused (model.cc), so is
    // the change.
    if (!(opt.timestep > 0) || !std::isfinite(opt.timestep)) {
      throw py::value_error("model.opt.timestep should be a positive, finite number of seconds, got " +
                            py::repr(py::float_(opt.timestep)).cast<std::string>());
    }
    // An index array pointed outside the model (model.body_parentid[:] = 1000) corrupted the
    // heap at the next step (glibc aborted the process; v5's envs crash the same way). About a
    // microsecond for HalfCheetah, three for Humanoid, on an env whose model a user holds.
    if (const char* invalid = mj_validateReferences(task_->model())) {
      throw py::value_error(std::string("the model was changed where MuJoCo cannot step it: ") + invalid +
                            "; expected each index array (body_parentid, jnt_qposadr, ...) as the env "
                            "made it, or within the model's sizes");
    }
    // What MuJoCo's check leaves out, though stepping or rendering indexes with it
    // (model.geom_type[0] = 2**30 crashed the next step, mat_texid the next render).
    const std::string bad_index = FirstBadIndex(task_->model());
    if (!bad_index.empty()) {
      throw py::value_error("the model was changed where MuJoCo cannot step or render it: " + bad_index +
                            " (as the env made it, or within the model's sizes)");
    }
    if (task_->engine_model()) {
      const mjData* d = world_->data();
      for (int i = 0; i < task_->model()->nv; ++i) {
        if (d->qfrc_applied[i] != 0) {
          throw py::value_error("data.qfrc_applied[" + std::to_string(i) + "] = " +
                                py::repr(py::float_(d->qfrc_applied[i])).cast<std::string>() +
                                ": engine='" + task_->engine_model()->name() +
                                "' does not apply generalized forces; expected zeros (push a body with "
                                "data.xfrc_applied, which it applies, or use engine='mujoco')");
        }
      }
    }
    // Another engine builds its world from the model once: a change it cannot follow is
    // refused rather than silently ignored.
    if (const auto& engine = task_->engine_model()) {
      const std::string field = engine->ChangedField(task_->model());
      if (!field.empty()) {
        throw py::value_error(
            "model." + field + " was changed; engine='" + engine->name() +
            "' builds its bodies, joints and actuators from the model once, so of the model only "
            "opt.timestep, opt.gravity, the actuators' ctrlrange, forcerange and forcelimited, and "
            "for a robot made in a fluid the fluid options may change on it (engine='mujoco' takes "
            "every change): expected model." + field +
            " as the env was made (set it back, or make a new env, e.g. from an edited xml_file)");
      }
    }
  }

  // Hands the world over to a Python mujoco.MjModel / MjData pair made from
  // this task's MJB: the world's state is copied into `data`, and from then on
  // every reset and step runs on them, so the Python objects are the live
  // simulation (and a change to the model, its timestep say, takes effect).
  // Both are kept alive by this object.
  void AdoptMujoco(const py::object& model, const py::object& data) {
    RequireUsable("adopt_mujoco()");
    const mjModel* m = task_->model();
    auto size = [&](const char* name) { return model.attr(name).cast<long long>(); };
    const bool same = size("nq") == m->nq && size("nv") == m->nv && size("nu") == m->nu &&
                      size("nbody") == m->nbody && size("na") == m->na && size("nbuffer") == m->nbuffer;
    if (!same) {
      throw py::value_error("model should be a mujoco.MjModel of this task's model_mjb(), got one with nq=" +
                            std::to_string(size("nq")) + ", nbuffer=" + std::to_string(size("nbuffer")) +
                            " (expected nq=" + std::to_string(m->nq) + ", nbuffer=" +
                            std::to_string(m->nbuffer) + ")");
    }
    if (data.attr("model").attr("_address").cast<std::uintptr_t>() != model.attr("_address").cast<std::uintptr_t>()) {
      throw py::value_error("data should be a mujoco.MjData of that model");
    }
    const auto* raw_model = reinterpret_cast<const mjModel*>(model.attr("_address").cast<std::uintptr_t>());
    auto* raw_data = reinterpret_cast<mjData*>(data.attr("_address").cast<std::uintptr_t>());
    world_->AdoptData(raw_data);
    // The task is this world's own (MakeTask made it for this object alone).
    const_cast<Task&>(*task_).ReplaceModel(ModelPtr(raw_model, [](const mjModel*) {}));
    mujoco_refs_ = py::make_tuple(model, data);
  }

  // PCG64's (state, inc), as numpy.random.PCG64().state["state"] holds them.
  py::tuple RngState() {
    const Rng::State s = world_->rng().GetState();
    auto join = [](std::uint64_t high, std::uint64_t low) {
      return py::int_(high).attr("__lshift__")(64).attr("__or__")(py::int_(low));
    };
    return py::make_tuple(join(s.state_high, s.state_low), join(s.inc_high, s.inc_low));
  }

  void SetRngState(const py::tuple& value) {
    RequireNotPolling();
    if (value.size() != 2) throw py::value_error("rng_state should be a (state, inc) pair of ints");
    auto split = [](py::handle v, const char* name, std::uint64_t* high, std::uint64_t* low) {
      // An exact int through operator.index (py::int_ of a str would parse it; an int
      // subclass may lie in its comparisons).
      if (PyBool_Check(v.ptr()) || !PyIndex_Check(v.ptr())) {
        throw py::type_error(std::string("rng_state's ") + name + " should be an int in [0, 2**128), got " +
                             py::str(py::type::of(v).attr("__name__")).cast<std::string>());
      }
      auto i = py::reinterpret_steal<py::int_>(PyNumber_Index(v.ptr()));
      if (!i) throw py::error_already_set();
      if (i.attr("__lt__")(0).cast<bool>() || i.attr("bit_length")().cast<int>() > 128) {
        throw py::value_error(std::string("rng_state's ") + name + " should be an int in [0, 2**128)");
      }
      const py::int_ mask(0xFFFFFFFFFFFFFFFFULL);
      *low = i.attr("__and__")(mask).cast<std::uint64_t>();
      *high = i.attr("__rshift__")(64).cast<std::uint64_t>();
    };
    Rng::State s{};
    split(value[0], "state", &s.state_high, &s.state_low);
    split(value[1], "inc", &s.inc_high, &s.inc_low);
    world_->rng().SetState(s);
    seeded_ = true;
  }

  // The observation of the world's current state, computed afresh (after a
  // change to the adopted MjData, say).
  py::array_t<double> Observe() {
    RequireUsable("observe()");
    task_->Observe(world_->data(), world_->scratch(), obs_.mutable_data());
    return FirstObs();
  }

  static py::array Copy(const py::array& a) { return py::array(a.attr("copy")()); }
  // Games stay float32 (observations and rewards rounded once, from double).
  static py::array Float32(const py::array& a) { return py::array_t<float, py::array::forcecast>(a); }

  const Task& task() const { return *task_; }
  const World& world() const { return *world_; }
  const InfoDecoder& decoder() const { return *decoder_; }
  const std::string& task_name() const { return task_name_; }
  const py::dict& kwargs() const { return kwargs_; }
  int limit() const { return limit_; }

  py::array_t<double> obs_;
  py::array_t<double> info_;
  py::array_t<double> reward_;
  py::array_t<bool> terminated_, truncated_;

 private:
  std::string task_name_;
  py::dict kwargs_;
  int limit_;
  std::shared_ptr<const Task> task_;
  std::unique_ptr<World> world_;
  std::unique_ptr<InfoDecoder> decoder_;
  std::vector<float> actions_;  // the world's copy of the last actions
  bool seeded_ = false;
  py::object mujoco_refs_;  // the adopted (MjModel, MjData), if any
};

// The single-agent face: Gymnasium-shaped results.
class SingleAgentCore : public PyWorld {
 public:
  SingleAgentCore(const std::string& task, int limit, const py::dict& kwargs)
      : PyWorld(task, limit, kwargs, task) {
    if (this->task().num_agents() != 1) {
      throw py::value_error("task '" + task + "' has " + std::to_string(this->task().num_agents()) +
                            " agents; SingleAgentCore expects a single-agent task");
    }
  }

  py::tuple ResetPy(const py::object& seed, const py::object& options) {
    Reset(seed, options);
    return py::make_tuple(FirstObs(), decoder().Row(info_.data(), true));
  }

  py::tuple StepPy(py::handle action) {
    Step(action, {task().act_dim()}, "action");
    py::dict info = decoder().Row(info_.data(), false);
    if (world().last_step_unstable()) info["physics_unstable"] = true;
    return py::make_tuple(FirstObs(), static_cast<double>(reward_.data()[0]),
                          static_cast<bool>(terminated_.data()[0]),
                          static_cast<bool>(truncated_.data()[0]), info);
  }
};

// The shared-world face: arrays over agents; the PettingZoo layer makes dicts.
class MultiAgentEnv : public PyWorld {
 public:
  MultiAgentEnv(const std::string& game, int limit, const py::dict& kwargs)
      : PyWorld(game, limit, kwargs, "MultiAgentEnv('" + game + "')") {}

  py::tuple ResetPy(const py::object& seed, const py::object& options) {
    Reset(seed, options);
    return py::make_tuple(Float32(obs_), Copy(info_));
  }

  py::tuple StepPy(py::handle actions) {
    Step(actions, {task().num_agents(), task().act_dim()}, "actions");
    return py::make_tuple(Float32(obs_), Float32(reward_), Copy(terminated_), Copy(truncated_),
                          Copy(info_), world().last_step_unstable());
  }
};

// The engine's body poses [nbody, 7] (MuJoCo's own when it is the engine).
py::array_t<double> BodyPoses(const World& world) {
  const mjModel* m = world.task().model();
  py::array_t<double> out({py::ssize_t{m->nbody}, py::ssize_t{7}});
  double* o = out.mutable_data();
  if (world.engine() != nullptr) {
    world.engine()->BodyPoses(m, o);
    return out;
  }
  const mjData* d = world.data();
  for (int b = 0; b < m->nbody; ++b) {
    for (int k = 0; k < 3; ++k) o[7 * b + k] = d->xpos[3 * b + k];
    for (int k = 0; k < 4; ++k) o[7 * b + 3 + k] = d->xquat[4 * b + k];
  }
  return out;
}

// What both faces expose: the task's dimensions, bounds, info layout, model,
// camera and state access.
template <typename Self, typename Class>
void DefineCommon(Class& cls) {
  cls.def_property_readonly("num_agents", [](const Self& s) { return s.task().num_agents(); })
      .def_property_readonly("obs_dim", [](const Self& s) { return s.task().obs_dim(); },
                             "observation size per agent")
      .def_property_readonly("act_dim", [](const Self& s) { return s.task().act_dim(); },
                             "action size per agent")
      .def_property_readonly("action_low", [](const Self& s) { return ToFloatArray(s.task().action_low()); })
      .def_property_readonly("action_high",
                             [](const Self& s) { return ToFloatArray(s.task().action_high()); })
      .def_property_readonly("info_fields", [](const Self& s) { return InfoFields(s.task()); },
                             "(name, offset, size, at_reset) of each per-agent info entry")
      .def_property_readonly("info_decoder", [](const Self& s) { return InfoDecoder(s.task().info_layout()); },
                             "the decoder of this task's info rows")
      .def_property_readonly("camera", [](const Self& s) { return CameraDict(s.task()); },
                             "the task's default render camera")
      .def_property_readonly("episode_options", [](const Self& s) { return OptionNames(s.task()); })
      .def_property_readonly("agent_prefix", [](const Self& s) { return s.task().agent_prefix(); },
                             "games: this instance's agent-name prefix when its parameters choose it "
                             "(sumo's robot), else ''")
      .def_property_readonly("agent_names", [](const Self& s) {
                               py::list names;
                               for (const std::string& name : s.task().agent_names()) names.append(name);
                               return names;
                             },
                             "games with roles: each agent's name (walker_0, blocker_0), else []")
      .def("model_mjb", [](const Self& s) { return ModelBytes(s.task().model()); },
           "The compiled model as MJB bytes.")
      .def_property_readonly("dt", [](const Self& s) { return s.task().dt(); }, "simulated seconds per step")
      .def("get_state", [](const Self& s) { return StateOf(s.world()); }, "Returns copies of (qpos, qvel).")
      .def("body_poses", [](const Self& s) { return BodyPoses(s.world()); },
           "Each body's world pose [nbody, 7] (pos, quat w-x-y-z) as the engine holds it: the "
           "Jolt bodies' own, or MuJoCo's xpos/xquat.")
      .def_property_readonly("engine", [](const Self& s) {
        return std::string(s.world().engine() ? kJoltEngine : kMujocoEngine);
      })
      .def("set_state", &Self::SetState, py::arg("qpos"), py::arg("qvel"),
           "Sets qpos and qvel and runs mj_forward, as Gymnasium's set_state.")
      .def_property_readonly("task", &Self::task_name)
      .def_property_readonly("kwargs", [](const Self& s) { return CopyDict(s.kwargs()); })
      .def_property_readonly("elapsed_steps", [](const Self& s) { return s.world().elapsed_steps(); });
}

}  // namespace

void DefineWorlds(py::module_& m) {
  py::class_<SingleAgentCore> core(m, "SingleAgentCore", py::dynamic_attr());
  core.def(py::init([](const std::string& task, py::handle max_episode_steps, py::kwargs kwargs) {
             return std::make_unique<SingleAgentCore>(
                 task, LimitOrZero(max_episode_steps, "max_episode_steps", 0), py::dict(kwargs));
           }),
           py::arg("task"), py::kw_only(), py::arg("max_episode_steps") = 1000)
      .def("reset", &SingleAgentCore::ResetPy, py::kw_only(), py::arg("seed") = py::none(),
           py::arg("options") = py::none(), "Starts an episode; returns (obs, info).")
      .def("step", &SingleAgentCore::StepPy, py::arg("action"),
           "Advances one env step; returns (obs, reward, terminated, truncated, info).")
      .def("get_obs", &SingleAgentCore::FirstObs, "The observation of the current state.")
      .def("observe", &SingleAgentCore::Observe,
           "The observation of the world's current state, computed afresh.")
      .def("simulate", &SingleAgentCore::Simulate, py::arg("n_frames"),
           "Advances the physics alone by n_frames (0 to 1000) timesteps with the world's "
           "current controls, on its engine (do_simulation); returns False if it became unstable.")
      .def("check_model", &SingleAgentCore::CheckAdoptedModel,
           "Raises ValueError if the adopted model's options would crash MuJoCo (an unknown "
           "friction cone or Jacobian type), or if an array the world's other engine was built "
           "from (engine='jolt': a mass, a size, a gear...) was changed.")
      .def("adopt_mujoco", &SingleAgentCore::AdoptMujoco, py::arg("model"), py::arg("data"),
           "Runs the world on this mujoco.MjModel / MjData (made from model_mjb()) from now on, "
           "its current state copied into `data` first.")
      .def_property("rng_state", &SingleAgentCore::RngState, &SingleAgentCore::SetRngState,
                    "The reset noise generator's PCG64 (state, inc); setting it seeds the stream.")
      .def_property_readonly("frame_skip", [](const SingleAgentCore& s) { return s.task().frame_skip(); })
      .def("__reduce__",
           [m](py::object self) {
             auto& s = self.cast<SingleAgentCore&>();
             py::dict kwargs = CopyDict(s.kwargs());
             kwargs["max_episode_steps"] = s.limit() > 0 ? py::object(py::int_(s.limit())) : py::object(py::none());
             // Task classes derived in Python (HalfCheetahCore, ...) know their task.
             const bool base = py::type::of(self).is(m.attr("SingleAgentCore"));
             return Reduce(self, base ? py::make_tuple(s.task_name()) : py::tuple(), kwargs);
           })
      .def_property_readonly("max_episode_steps", [](const SingleAgentCore& s) {
        return s.limit() > 0 ? py::object(py::int_(s.limit())) : py::object(py::none());
      });
  DefineCommon<SingleAgentCore>(core);

  py::class_<MultiAgentEnv> multi(m, "MultiAgentEnv", py::dynamic_attr());
  multi.def(py::init([](const std::string& game, py::handle max_cycles, py::kwargs kwargs) {
              return std::make_unique<MultiAgentEnv>(game, LimitOrZero(max_cycles, "max_cycles", 1),
                                                     py::dict(kwargs));
            }),
            py::arg("game"), py::kw_only(), py::arg("max_cycles") = 1000)
      .def("reset", &MultiAgentEnv::ResetPy, py::kw_only(), py::arg("seed") = py::none(),
           py::arg("options") = py::none(),
           "Starts an episode (options: episode options such as shaping_weight); returns "
           "(obs [A, obs_dim], info rows [A, info_width]).")
      .def("step", &MultiAgentEnv::StepPy, py::arg("actions"),
           "Steps every agent: actions [A, act_dim]; returns (obs, rewards, terminations, "
           "truncations, info rows, physics_unstable).")
      .def("state", &MultiAgentEnv::State, "Global state: qpos and qvel of the world (float32).")
      .def_property_readonly("state_dim", [](const MultiAgentEnv& s) {
        return s.task().model()->nq + s.task().model()->nv;
      })
      .def("get_obs", [](const MultiAgentEnv& s) { return MultiAgentEnv::Float32(s.obs_); })
      .def("__reduce__",
           [](py::object self) {
             auto& s = self.cast<MultiAgentEnv&>();
             py::dict kwargs = CopyDict(s.kwargs());
             kwargs["max_cycles"] = s.limit() > 0 ? py::object(py::int_(s.limit())) : py::object(py::none());
             return Reduce(self, py::make_tuple(s.task_name()), kwargs);
           })
      .def_property_readonly("game", &MultiAgentEnv::task_name)
      .def_property_readonly("max_cycles", [](const MultiAgentEnv& s) { return s.limit(); });
  DefineCommon<MultiAgentEnv>(multi);
}

}  // namespace joltgym::bindings
