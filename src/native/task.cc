#include "task.h"

#include <cstdlib>
#include <sstream>

#include "engine.h"
#include "errors.h"

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
  if (Engine* engine = CurrentEngine()) return engine->Advance(model, data, frame_skip);
  const int before = data->warning[mjWARN_BADQACC].number + data->warning[mjWARN_BADQVEL].number +
                     data->warning[mjWARN_BADQPOS].number;
  for (int i = 0; i < frame_skip; ++i) mj_step(model, data);
  mj_rnePostConstraint(model, data);
  const int after = data->warning[mjWARN_BADQACC].number + data->warning[mjWARN_BADQVEL].number +
                    data->warning[mjWARN_BADQPOS].number;
  return after == before;
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

TaskInfo RunsOnJolt(TaskInfo info) {
  info.engines.push_back(kJoltEngine);
  info.params.push_back(StringParam("engine", kMujocoEngine,
                                    "physics engine: 'mujoco' (the reference) or 'jolt'"));
  const EngineOptions defaults;
  info.params.push_back(IntParam("jolt_substeps", defaults.substeps,
                                 "engine='jolt': Jolt collision steps per MuJoCo timestep", 1, 64));
  info.params.push_back(IntParam("jolt_velocity_iterations", defaults.velocity_iterations,
                                 "engine='jolt': velocity solver iterations", 1, 255));
  info.params.push_back(IntParam("jolt_position_iterations", defaults.position_iterations,
                                 "engine='jolt': position solver iterations", 0, 255));
  TaskFactory inner = std::move(info.factory);
  const std::string name = info.name;
  info.factory = [inner, name](const Params& p) {
    auto task = std::const_pointer_cast<Task>(inner(p));
    EngineOptions options;
    options.substeps = p.Int("jolt_substeps");
    options.velocity_iterations = p.Int("jolt_velocity_iterations");
    options.position_iterations = p.Int("jolt_position_iterations");
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

const TaskInfo& TaskRegistry::Find(const std::string& name) const {
  auto it = tasks_.find(name);
  if (it == tasks_.end()) {
    std::ostringstream msg;
    msg << "unknown task '" << name << "'; expected one of:";
    for (const auto& [known, _] : tasks_) msg << " '" << known << "'";
    throw BadValue(msg.str());
  }
  return it->second;
}

namespace {

// np.sum of `n` float32 squares: sequential below eight values, eight
// interleaved accumulators up to 128, halves (cut at a multiple of eight)
// beyond.
float NumpySumSquaresFloat32(const float* x, int n) {
  if (n < 8) {
    float sum = 0.0f;
    for (int i = 0; i < n; ++i) sum += x[i] * x[i];
    return sum;
  }
  if (n <= 128) {
    float r[8];
    for (int j = 0; j < 8; ++j) r[j] = x[j] * x[j];
    int i = 8;
    for (; i < n - n % 8; i += 8) {
      for (int j = 0; j < 8; ++j) r[j] += x[i + j] * x[i + j];
    }
    float sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) sum += x[i] * x[i];
    return sum;
  }
  int half = n / 2;
  half -= half % 8;
  return NumpySumSquaresFloat32(x, half) + NumpySumSquaresFloat32(x + half, n - half);
}

}  // namespace

double Float32ControlCost(double weight, const float* action, int count) {
  return static_cast<double>(static_cast<float>(weight) * NumpySumSquaresFloat32(action, count));
}

}  // namespace joltgym
