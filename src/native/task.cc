#include "task.h"

#include <cstdlib>
#include <sstream>

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

}  // namespace joltgym
