#include "task.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "errors.h"
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
    msg << "ambiguous task name '" << name << "': it names " << QuotedList(names, "and")
        << "; give one of their native names";
    throw BadValue(msg.str());
  }
  msg << "unknown task '" << name << "'";
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
