// The task interface: what one world of a robot or a game computes on reset
// and on step. A task is immutable after construction and shared by every
// world of a pool, so all its methods are const and thread-safe; per-world
// mutable state lives in mjData and in the world's scratch array.
#pragma once

#include <mujoco/mujoco.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine.h"
#include "model.h"
#include "params.h"
#include "rng.h"

namespace joltgym {

class EngineModel;  // engine.h

// How the Python layers decode one info entry from its float64 slot(s).
enum class InfoKind {
  kReal,     // a float (or a float array when size > 1)
  kInteger,  // an int (e.g. a rank)
  kLabel,    // an index into `labels` (e.g. a game's outcome)
};

// The Python type a single real entry is given, as Gymnasium v5's env has it
// (NumPy's promotion rules decide it there): the vector envs' info columns
// take the matching dtype.
enum class InfoScalar {
  kFloat,    // a Python float (games; a v5 term computed from Python numbers)
  kFloat64,  // numpy.float64 (a v5 term computed from MuJoCo's arrays)
  kFloat32,  // numpy.float32 (a v5 cost computed from the float32 action)
};

// One named entry of a per-agent info record: `size` doubles starting at
// `offset`. Entries with `at_reset` are also written by Reset().
struct InfoField {
  std::string name;
  int offset = 0;
  int size = 1;
  bool at_reset = false;
  InfoKind kind = InfoKind::kReal;
  std::vector<std::string> labels;  // kLabel only
  InfoScalar scalar = InfoScalar::kFloat;  // kReal of size 1 only
};

// Builds the field list with running offsets. Each Add* returns the new
// field's offset, which the task keeps in a named member: a step writes
// `info[x_velocity_]`, never a bare index that must match the Add order.
class InfoLayout {
 public:
  int Add(const std::string& name, int size = 1, bool at_reset = false) {
    return Push({name, width_, size, at_reset, InfoKind::kReal, {}});
  }
  int AddAtReset(const std::string& name, int size = 1) { return Add(name, size, true); }
  int AddInteger(const std::string& name, bool at_reset = false) {
    return Push({name, width_, 1, at_reset, InfoKind::kInteger, {}});
  }
  int AddLabel(const std::string& name, std::vector<std::string> labels, bool at_reset = false) {
    return Push({name, width_, 1, at_reset, InfoKind::kLabel, std::move(labels)});
  }
  const std::vector<InfoField>& fields() const { return fields_; }
  int width() const { return width_; }
  // The scalar type of the real fields added from now on (single-agent
  // tasks: numpy.float64, as Gymnasium v5), and of the field at `offset`.
  void SetDefaultScalar(InfoScalar scalar) { default_scalar_ = scalar; }
  void SetScalar(int offset, InfoScalar scalar) {
    for (InfoField& field : fields_) {
      if (field.offset == offset) field.scalar = scalar;
    }
  }

 private:
  int Push(InfoField field) {
    const int offset = width_;
    width_ += field.size;
    field.scalar = default_scalar_;
    fields_.push_back(std::move(field));
    return offset;
  }

  std::vector<InfoField> fields_;
  int width_ = 0;
  InfoScalar default_scalar_ = InfoScalar::kFloat;
};

// Where the renderer's free camera looks: the robot's root body (agent 0's
// in a shared world), the agent furthest along x, or a fixed point.
enum class CameraTarget { kRootBody, kLeader, kFixed };

// The default view of a task, for the Python renderer (MuJoCo's free camera).
struct RenderCamera {
  CameraTarget target = CameraTarget::kRootBody;
  double distance = 4.0;
  double elevation = -15.0;
  double azimuth = 90.0;
  double lookat[3] = {0.0, 0.0, 0.0};  // kFixed only
};

// Where a task writes one world's results. Arrays are [num_agents, ...].
// Observations and rewards are written in double, Gymnasium v5's dtype; a
// float32 pool rounds them once, after the task (see WorldPool).
struct StepOutput {
  double* obs;        // [num_agents, obs_dim]
  double* reward;     // [num_agents]
  bool* terminated;   // [num_agents]
  double* info;       // [num_agents, info_width]
};

class Task {
 public:
  virtual ~Task() = default;

  const mjModel* model() const { return model_.get(); }
  const ModelPtr& shared_model() const { return model_; }
  int num_agents() const { return num_agents_; }
  int obs_dim() const { return obs_dim_; }  // per agent
  int act_dim() const { return act_dim_; }  // per agent
  int scratch_size() const { return scratch_size_; }
  // Simulated seconds per env step (timestep * frame_skip, read from the
  // model each time, as Gymnasium's MujocoEnv.dt: a new timestep counts).
  double dt() const { return model_->opt.timestep * frame_skip_; }
  int frame_skip() const { return frame_skip_; }
  // Replaces the model by one of identical structure (a Python
  // mujoco.MjModel made from this task's MJB, whose fields a user may
  // change). Only for a task that one world owns (SingleAgentCore); `model`
  // must outlive the task.
  void ReplaceModel(ModelPtr model) { model_ = std::move(model); }
  const InfoLayout& info_layout() const { return info_; }
  const RenderCamera& camera() const { return camera_; }
  // Games: the prefix of this instance's agent names and bodies
  // ("<prefix>_<k>", "<prefix>_<k>/..."), when it depends on the task's
  // parameters (sumo's robot); empty: the registry's agent_prefix.
  const std::string& agent_prefix() const { return agent_prefix_; }
  // Games with roles: each agent's name (e.g. "walker_0", "blocker_0"); empty:
  // "<prefix>_<k>". The bodies are still "<prefix>_<k>/...".
  const std::vector<std::string>& agent_names() const { return agent_names_; }
  // Steps after which the owner truncates an episode (0: never). Set once by
  // whoever creates the task, before it is shared, so that tasks whose
  // observation or reward depend on the time left can read it.
  int episode_limit() const { return episode_limit_; }
  void SetEpisodeLimit(int steps) { episode_limit_ = steps; }
  // What its worlds' physics run on (engine.h); nullptr: MuJoCo. Set once by
  // the registry's factory (RunsOnJolt), before the task is shared.
  const std::shared_ptr<const EngineModel>& engine_model() const { return engine_model_; }
  void SetEngineModel(std::shared_ptr<const EngineModel> engine) { engine_model_ = std::move(engine); }
  // Per-agent action bounds, [act_dim] each.
  const std::vector<double>& action_low() const { return action_low_; }
  const std::vector<double>& action_high() const { return action_high_; }

  // Puts `data` in a fresh episode's initial state (noise drawn from `rng`)
  // and writes the observation and the reset info fields.
  virtual void Reset(mjData* data, double* scratch, Rng& rng, double* obs,
                     double* info) const = 0;

  // Applies `actions` ([num_agents, act_dim], validated by the caller),
  // advances the physics and writes the results. Returns false if MuJoCo
  // flagged the physics as unstable during this step.
  virtual bool Step(mjData* data, double* scratch, const float* actions,
                    const StepOutput& out) const = 0;

  // Writes the observation of the current state (after set_state).
  virtual void Observe(const mjData* data, const double* scratch, double* obs) const = 0;

  // Episode options: per-world values a user may change between episodes
  // (e.g. a reward-shaping weight), kept in scratch slots. InitScratch writes
  // their defaults when a world is created.
  virtual void InitScratch(double* /*scratch*/) const {}
  const std::vector<std::pair<std::string, int>>& episode_options() const { return options_; }
  // [min, max] of the option in `slot` (OptionSlot).
  std::pair<double, double> OptionRange(int slot) const {
    for (std::size_t k = 0; k < options_.size(); ++k) {
      if (options_[k].second == slot) return option_ranges_[k];
    }
    return {-kMaxRealParam, kMaxRealParam};
  }
  int OptionSlot(const std::string& name) const {
    for (const auto& [option, slot] : options_) {
      if (option == name) return slot;
    }
    return -1;
  }

 protected:
  void SetModel(ModelPtr model) { model_ = std::move(model); }
  void SetDims(int num_agents, int obs_dim, int act_dim) {
    num_agents_ = num_agents;
    obs_dim_ = obs_dim;
    act_dim_ = act_dim;
  }
  void SetScratchSize(int size) { scratch_size_ = size; }
  void SetFrameSkip(int frame_skip) { frame_skip_ = frame_skip; }
  // An episode option and the values it takes (by default those of a real
  // keyword argument, params.h): the front ends refuse others, naming them.
  void AddEpisodeOption(const std::string& name, int scratch_slot, double min = -kMaxRealParam,
                        double max = kMaxRealParam) {
    options_.emplace_back(name, scratch_slot);
    option_ranges_.emplace_back(min, max);
  }
  InfoLayout& mutable_info() { return info_; }
  void SetCamera(const RenderCamera& camera) { camera_ = camera; }
  void SetAgentPrefix(std::string prefix) { agent_prefix_ = std::move(prefix); }
  void SetAgentNames(std::vector<std::string> names) { agent_names_ = std::move(names); }
  // Action bounds from the actuators' ctrlrange, for agent 0's `act_dim`
  // actuators starting at `first_actuator`.
  void SetActionBoundsFromCtrlRange(int first_actuator);

 private:
  ModelPtr model_;
  int num_agents_ = 1;
  int obs_dim_ = 0;
  int act_dim_ = 0;
  int scratch_size_ = 0;
  int frame_skip_ = 1;
  int episode_limit_ = 0;
  std::shared_ptr<const EngineModel> engine_model_;
  std::vector<std::pair<std::string, int>> options_;
  std::vector<std::pair<double, double>> option_ranges_;  // per option, [min, max]
  InfoLayout info_;
  RenderCamera camera_;
  std::string agent_prefix_;
  std::vector<std::string> agent_names_;
  std::vector<double> action_low_;
  std::vector<double> action_high_;
};

// Sum of squares of `count` float32 values, accumulated in double (control
// costs).
inline double SumSquares(const float* values, int count) {
  double sum = 0.0;
  for (int i = 0; i < count; ++i) sum += static_cast<double>(values[i]) * values[i];
  return sum;
}

// Gymnasium's control cost `weight * np.sum(np.square(action))` of a float32
// action, operation for operation: NumPy squares and sums in float32 (its
// pairwise summation: eight interleaved accumulators from eight values on)
// and multiplies by the weight rounded to float32. Bit for bit, so that our
// float32 reward is Gymnasium's float64 reward rounded to float32.
double Float32ControlCost(double weight, const float* action, int count);

// NumPy's np.sum of `count` doubles, operation for operation (its pairwise
// summation), and np.sum(np.square(values)): reward terms computed as
// Gymnasium computes them are equal to its own, not merely close.
double NumpySum(const double* values, int count);
double NumpySumSquares(const double* values, int count);
// np.sum(np.square(np.clip(values, low, high))), without a copy (a NaN stays NaN).
double NumpyClippedSumSquares(const double* values, int count, double low, double high);
// np.sum(np.square(values.astype(np.float64))) of a float32 array.
double NumpySumSquaresAsFloat64(const float* values, int count);

// np.linalg.norm(v) of a short float64 vector: sqrt(v.dot(v)). The dot is
// OpenBLAS's, whose kernel is picked for the CPU at run time: some kernels
// accumulate with fused multiply-adds (v[0]*v[0], then fma(v[i], v[i], sum)),
// others round each product (sum + v[i]*v[i]). The process uses one of the
// two: the environment variable JOLTGYM_NUMPY_NORM ("fma" or "separate") when
// set, else fma; the Python package probes NumPy at import and sets it (and
// the variable, for C API hosts it starts), so that the tasks stay bit-exact
// with Gymnasium's v5 on any CPU.
enum class NormRounding { kFusedMultiplyAdd = 0, kSeparate = 1 };
void SetNumpyNormRounding(NormRounding rounding);
NormRounding NumpyNormRounding();
double NumpyNorm(const double* values, int count);

// `x ** 2` of a NumPy float64 scalar: libm's pow(x, 2), which is not always
// x * x (one ulp off on about 1 in 1000 values).
double NumpyScalarSquare(double x);

// Sets ctrl, runs `frame_skip` mj_step calls, then mj_rnePostConstraint so
// that cacc / cfrc_int / cfrc_ext are current, exactly as Gymnasium's
// MujocoEnv does. Returns false if MuJoCo warned about bad qpos/qvel/qacc.
// Under a SimulationPoll (simulation_poll.h) it may stop early, mid-step.
bool Simulate(const mjModel* model, mjData* data, int frame_skip);

// Resolves an MJCF path the way Gymnasium does: absolute, "./"-relative and
// "~"-paths are used as given; bare names are looked up in the asset folder.
std::string ResolveAssetPath(const std::string& xml_file);
void SetAssetDir(const std::string& dir);
const std::string& AssetDir();

// ---------------------------------------------------------------------------
// Registry: each task file registers itself with one line.

using TaskFactory = std::function<std::shared_ptr<const Task>(const Params&)>;

enum class TaskKind {
  kSingleAgent,  // one robot: a *Core, a Gymnasium env and a vector env
  kGame,         // several robots in one world: a PettingZoo game
};

// Everything the Python side derives a task's classes, registrations, tests
// and benchmarks from. Filled by SingleAgentTask<T>() or Game<T>().
struct TaskInfo {
  std::string name;          // native name: "half_cheetah", "sumo"
  TaskKind kind = TaskKind::kSingleAgent;
  std::string title;         // class-name stem: "HalfCheetah" -> HalfCheetahCore, HalfCheetahEnv, ...
  std::string env_id;        // "joltgym_marl/HalfCheetah-v0" (Gymnasium) or "sumo_v0" (PettingZoo)
  std::string reference_id;  // the env it reproduces: "HalfCheetah-v5" (Gymnasium), or ""
  std::string agent_prefix;  // games: agents are "<prefix>_<k>" and their bodies "<prefix>_<k>/..."
  int max_episode_steps = 1000;  // truncation (max_cycles for games)
  // The return at which the task counts as solved: Gymnasium's reward_threshold of the env
  // it reproduces (the id's registration carries it), or none where that env has none.
  std::optional<double> reward_threshold;
  std::string doc;           // the docstring: action / observation / reward / info table
  std::vector<ParamSpec> params;
  TaskFactory factory;
  // The physics engines its worlds can run on (the `engine` keyword).
  std::vector<std::string> engines = {"mujoco"};
};

// A task that also runs on Jolt: adds the `engine` keyword ("mujoco", the
// default, or "jolt") to its parameters; its factory builds the engine model.
// Only for tasks whose code reads what a Jolt world's mjData mirror holds
// (qpos, qvel, body poses, centre-of-mass quantities, actuator forces, and
// contact forces cfrc_ext in models whose roots are all free; not
// qfrc_constraint, qacc or fluids).
// `defaults`: the task's default Jolt solver settings (the keywords'
// defaults; docs/guides/jolt.md justifies them per robot).
TaskInfo RunsOnJolt(TaskInfo info, const EngineOptions& defaults = {});

// For a task without the `engine` keyword (MuJoCo only): accepts "mujoco",
// throws BadValue naming the tasks that run on `engine` otherwise.
void RequireEngine(const TaskInfo& info, const std::string& engine);

// A single-agent robot reproducing Gymnasium's "<title>-v5" as
// "joltgym_marl/<title>-v0", with that env's max_episode_steps and
// reward_threshold.
template <typename T>
TaskInfo SingleAgentTask(std::string name, std::string title, std::vector<ParamSpec> params,
                         std::string doc, int max_episode_steps,
                         std::optional<double> reward_threshold) {
  TaskInfo info;
  info.name = std::move(name);
  info.kind = TaskKind::kSingleAgent;
  info.env_id = "joltgym_marl/" + title + "-v0";
  info.reference_id = title + "-v5";
  info.title = std::move(title);
  info.max_episode_steps = max_episode_steps;
  info.reward_threshold = reward_threshold;
  info.doc = std::move(doc);
  info.params = std::move(params);
  info.factory = [](const Params& p) { return std::make_shared<T>(p); };
  return info;
}

// A shared-world game, registered with PettingZoo's naming as "<name>_v0".
template <typename T>
TaskInfo Game(std::string name, std::string title, std::string agent_prefix,
              std::vector<ParamSpec> params, std::string doc, int max_cycles) {
  TaskInfo info;
  info.kind = TaskKind::kGame;
  info.env_id = name + "_v0";
  info.name = std::move(name);
  info.title = std::move(title);
  info.agent_prefix = std::move(agent_prefix);
  info.max_episode_steps = max_cycles;
  info.doc = std::move(doc);
  info.params = std::move(params);
  info.factory = [](const Params& p) { return std::make_shared<T>(p); };
  return info;
}

class TaskRegistry {
 public:
  static TaskRegistry& Get();
  void Add(TaskInfo info);
  // The task `name` names: its native name, or any spelling of another of its
  // names (task_names.h). Throws BadValue naming the close matches and every
  // task for an unknown name, and the tasks it names for an ambiguous one.
  const TaskInfo& Find(const std::string& name) const;
  const std::map<std::string, TaskInfo>& all() const { return tasks_; }

 private:
  std::map<std::string, TaskInfo> tasks_;
};

// Each task file registers itself with one line:
//   const TaskRegistration kRegistration(SingleAgentTask<Hopper>("hopper", "Hopper", Spec(), kDoc,
//                                                                /*max_episode_steps=*/1000,
//                                                                /*reward_threshold=*/3800.0));
struct TaskRegistration {
  explicit TaskRegistration(TaskInfo info) { TaskRegistry::Get().Add(std::move(info)); }
};

}  // namespace joltgym
