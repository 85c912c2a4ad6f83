#include "task.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>

#include "engine.h"
#include "errors.h"
#include "simulation_poll.h"
#include "task_names.h"

namespace joltgym {

void Task::SetActionBoundsFromCtrlRange(int first_actuator) {
  const mjModel* m = model_.get();
  action_low_.assign(act_dim_, -1.0);
  action_high_.assign(act_dim_, 1.0);
  for (int j = 0; j < act_dim_; ++j) {
    const int a = first_actuator + j;
    if (m->actuator_ctrllimited[a]) {
      action_low_[j] = m->actuator_ctrlrange[2 * a];
      action_high_[j] = m->actuator_ctrlrange[2 * a + 1];
    } else {
      action_low_[j] = -mjMAXVAL;
      action_high_[j] = mjMAXVAL;
    }
  }
}

bool Simulate(const mjModel* model, mjData* data, int frame_skip) {
  if (frame_skip <= 0) {  // v5's do_simulation(ctrl, 0): nothing steps but MuJoCo's last pass
    if (CurrentEngine() == nullptr) mj_rnePostConstraint(model, data);
    return true;
  }
  if (Engine* engine = CurrentEngine()) return engine->Advance(model, data, frame_skip);
  const int before = data->warning[mjWARN_BADQACC].number + data->warning[mjWARN_BADQVEL].number +
                     data->warning[mjWARN_BADQPOS].number;
  // MuJoCo answers a bad state by resetting the data (mj_resetData), which zeroes the warning
  // counts before it counts the new warning: a blow-up in a world whose last step blew up too
  // (stepped on without a reset) leaves the sum as it was. Its other trace is the clock, set
  // back to 0 by the reset: a step then ends at most frame_skip timesteps after 0, never later
  // than where a world that has made a whole env step (time > 0) started it.
  const mjtNum time_before = data->time;
  if (SimulationPoll::poll() == nullptr) {
    for (int i = 0; i < frame_skip; ++i) mj_step(model, data);
  } else {  // a single world's step, on a thread that notices signals
    auto next = SimulationPoll::FirstDue();
    for (int i = 0; i < frame_skip; ++i) {
      mj_step(model, data);
      if (i + 1 < frame_skip && SimulationPoll::Due(&next)) return true;  // the world is mid-step
    }
  }
  mj_rnePostConstraint(model, data);
  const int after = data->warning[mjWARN_BADQACC].number + data->warning[mjWARN_BADQVEL].number +
                    data->warning[mjWARN_BADQPOS].number;
  const bool reset = model->opt.timestep > 0 && data->time <= time_before;
  return after == before && !reset;
}

namespace {
std::string& AssetDirStorage() {
  static std::string dir;
  return dir;
}
}  // namespace

void SetAssetDir(const std::string& dir) { AssetDirStorage() = dir; }
const std::string& AssetDir() { return AssetDirStorage(); }

std::string ResolveAssetPath(const std::string& xml_file) {
  if (xml_file.empty()) return xml_file;
  if (xml_file[0] == '/' || xml_file[0] == '.') return xml_file;
  if (xml_file[0] == '~') {
    const char* home = std::getenv("HOME");
    return std::string(home ? home : "") + xml_file.substr(1);
  }
  return AssetDir() + "/" + xml_file;
}

TaskInfo RunsOnJolt(TaskInfo info, const EngineOptions& defaults) {
  info.engines.push_back(kJoltEngine);
  info.params.push_back(StringParam("engine", kMujocoEngine,
                                    "physics engine: 'mujoco' (the reference) or 'jolt'"));
  info.params.push_back(IntParam("jolt_substeps", defaults.substeps,
                                 "engine='jolt': Jolt collision steps per MuJoCo timestep", 1, 64));
  info.params.push_back(IntParam("jolt_velocity_iterations", defaults.velocity_iterations,
                                 "engine='jolt': velocity solver iterations", 1, 255));
  info.params.push_back(IntParam("jolt_position_iterations", defaults.position_iterations,
                                 "engine='jolt': position solver iterations", 0, 255));
  TaskFactory inner = std::move(info.factory);
  const std::string name = info.name;
  info.factory = [inner, name, defaults](const Params& p) {
    EngineOptions options;
    options.substeps = p.Int("jolt_substeps");
    options.velocity_iterations = p.Int("jolt_velocity_iterations");
    options.position_iterations = p.Int("jolt_position_iterations");
    // Jolt's solver settings with another engine would be silently ignored.
    if (p.String("engine") != kJoltEngine) {
      const std::pair<const char*, std::pair<int, int>> settings[] = {
          {"jolt_substeps", {options.substeps, defaults.substeps}},
          {"jolt_velocity_iterations", {options.velocity_iterations, defaults.velocity_iterations}},
          {"jolt_position_iterations", {options.position_iterations, defaults.position_iterations}}};
      for (const auto& [setting, values] : settings) {
        if (values.first != values.second) {
          throw BadValue(std::string(setting) + "=" + std::to_string(values.first) +
                         " only applies to engine='jolt'; got engine='" + p.String("engine") +
                         "' (pass engine='jolt', or leave " + setting + " at its default " +
                         std::to_string(values.second) + ")");
        }
      }
    }
    auto task = std::const_pointer_cast<Task>(inner(p));
    task->SetEngineModel(MakeEngineModel(p.String("engine"), task->model(), name, options));
    return std::shared_ptr<const Task>(std::move(task));
  };
  return info;
}

void RequireEngine(const TaskInfo& info, const std::string& engine) {
  for (const std::string& known : info.engines) {
    if (known == engine) return;
  }
  if (engine != kJoltEngine) {
    throw BadValue("engine should be 'mujoco' or 'jolt', got '" + engine + "'");
  }
  std::ostringstream msg;
  msg << "task '" << info.name << "' does not run on engine '" << engine
      << "' (it reads what the Jolt world does not provide, or is not ported yet); engine='"
      << engine << "' runs:";
  for (const auto& [name, other] : TaskRegistry::Get().all()) {
    for (const std::string& e : other.engines) {
      if (e == engine) msg << " '" << name << "'";
    }
  }
  throw BadValue(msg.str());
}

TaskRegistry& TaskRegistry::Get() {
  static TaskRegistry registry;
  return registry;
}

void TaskRegistry::Add(TaskInfo info) {
  std::string name = info.name;
  tasks_.emplace(std::move(name), std::move(info));
}

namespace {

// 'a', 'a' or 'b', 'a', 'b' or 'c'
std::string QuotedList(const std::vector<std::string>& names, const char* last) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? std::string(" ") + last + " " : ", ";
    out += "'" + names[i] + "'";
  }
  return out;
}

}  // namespace

const TaskInfo& TaskRegistry::Find(const std::string& name) const {
  auto it = tasks_.find(name);
  if (it != tasks_.end()) return it->second;
  // Any spelling of any of a task's names (task_names.h).
  const std::string key = NameKey(name);
  std::vector<const TaskInfo*> named, every;
  for (const auto& [_, info] : tasks_) {
    every.push_back(&info);
    const auto spellings = TaskSpellings(info);
    if (!key.empty() && std::any_of(spellings.begin(), spellings.end(),
                                    [&](const std::string& s) { return NameKey(s) == key; })) {
      named.push_back(&info);
    }
  }
  if (named.size() == 1) return *named.front();
  std::ostringstream msg;
  if (named.size() > 1) {
    std::vector<std::string> names;
    for (const TaskInfo* info : named) names.push_back(info->name);
    msg << "ambiguous task name '" << ClipMiddle(name) << "': it names " << QuotedList(names, "and")
        << "; give one of their native names";
    throw BadValue(msg.str());
  }
  msg << "unknown task '" << ClipMiddle(name) << "'";  // a huge name is not echoed whole
  const std::vector<std::string> close = CloseTaskNames(name, every);
  if (!close.empty()) {
    msg << "; did you mean " << QuotedList(close, "or") << "? expected one of:";
  } else {
    msg << "; expected one of:";
  }
  for (const auto& [known, _] : tasks_) msg << " '" << known << "'";
  if (!every.empty()) {  // the other names, shown on the first task's
    const std::vector<std::string> spellings = TaskSpellings(*every.front());
    msg << " (or another name of one, in any case, with or without '_', '-' or ' ' between words: "
        << "its title, Gymnasium or PettingZoo id or class name, such as "
        << QuotedList({spellings.begin() + 1, spellings.begin() + std::min<std::size_t>(spellings.size(), 4)},
                      "or")
        << ")";
  }
  throw BadValue(msg.str());
}

namespace {

// NumPy's pairwise summation of f(x[0]), ..., f(x[n-1]) in T: sequential
// below eight values, eight interleaved accumulators up to 128, halves (cut
// at a multiple of eight) beyond. (X: the inputs' type, converted by f.)
template <typename T, typename X, typename F>
T PairwiseSum(const X* x, int n, F f) {
  if (n < 8) {
    T sum = 0;
    for (int i = 0; i < n; ++i) sum += f(x[i]);
    return sum;
  }
  if (n <= 128) {
    T r[8];
    for (int j = 0; j < 8; ++j) r[j] = f(x[j]);
    int i = 8;
    for (; i < n - n % 8; i += 8) {
      for (int j = 0; j < 8; ++j) r[j] += f(x[i + j]);
    }
    T sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) sum += f(x[i]);
    return sum;
  }
  int half = n / 2;
  half -= half % 8;
  return PairwiseSum<T>(x, half, f) + PairwiseSum<T>(x + half, n - half, f);
}

template <typename T>
T Square(T v) {
  return v * v;
}

template <typename T>
T Same(T v) {
  return v;
}

}  // namespace

double Float32ControlCost(double weight, const float* action, int count) {
  return static_cast<double>(static_cast<float>(weight) * PairwiseSum<float>(action, count, Square<float>));
}

double NumpySum(const double* values, int count) { return PairwiseSum<double>(values, count, Same<double>); }

double NumpySumSquares(const double* values, int count) {
  return PairwiseSum<double>(values, count, Square<double>);
}

double NumpyClippedSumSquares(const double* values, int count, double low, double high) {
  return PairwiseSum<double>(values, count, [low, high](double v) {
    const double clipped = v < low ? low : (v > high ? high : v);
    return clipped * clipped;
  });
}

double NumpySumSquaresAsFloat64(const float* values, int count) {
  return PairwiseSum<double>(values, count, [](float v) { return static_cast<double>(v) * v; });
}

double NumpyScalarSquare(double x) {
  // Volatile, so that the compiler cannot turn pow(x, 2.0) into x * x.
  static volatile double two = 2.0;
  return std::pow(x, two);
}

namespace {

NormRounding InitialNormRounding() {
  const char* value = std::getenv("JOLTGYM_NUMPY_NORM");
  if (value != nullptr && std::string(value) == "separate") return NormRounding::kSeparate;
  return NormRounding::kFusedMultiplyAdd;
}

std::atomic<int>& NormRoundingSetting() {
  static std::atomic<int> setting{static_cast<int>(InitialNormRounding())};
  return setting;
}

}  // namespace

void SetNumpyNormRounding(NormRounding rounding) {
  NormRoundingSetting().store(static_cast<int>(rounding), std::memory_order_relaxed);
}

NormRounding NumpyNormRounding() {
  return static_cast<NormRounding>(NormRoundingSetting().load(std::memory_order_relaxed));
}

double NumpyNorm(const double* values, int count) {
  if (count == 0) return 0.0;
  double sum = values[0] * values[0];
  if (NumpyNormRounding() == NormRounding::kSeparate) {
    for (int i = 1; i < count; ++i) sum += values[i] * values[i];
  } else {
    for (int i = 1; i < count; ++i) sum = std::fma(values[i], values[i], sum);
  }
  return std::sqrt(sum);
}

}  // namespace joltgym
