#include "task_names.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "task.h"

namespace joltgym {

std::vector<std::string> TaskSpellings(const TaskInfo& info) {
  std::vector<std::string> names = {info.name, info.title, info.env_id};
  if (!info.reference_id.empty()) names.push_back(info.reference_id);
  if (info.kind == TaskKind::kSingleAgent) {
    for (const char* suffix : {"Core", "Env", "VectorEnv"}) names.push_back(info.title + suffix);
  }
  return names;
}

std::string NameKey(const std::string& name) {
  static const std::string kNamespace = "joltgymmarl";
  std::string key;
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) key += static_cast<char>(std::tolower(u));
  }
  if (key.size() > kNamespace.size() && key.compare(0, kNamespace.size(), kNamespace) == 0) {
    key.erase(0, kNamespace.size());
  }
  return key;
}

std::size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> CloseTaskNames(const std::string& name, const std::vector<const TaskInfo*>& tasks,
                                        std::size_t limit) {
  const std::string key = NameKey(name);
  // A typo allowance that grows with the name: one edit in the first eight
  // characters, one more per four after that.
  const std::size_t allowed = key.size() <= 8 ? 1 : 1 + (key.size() - 5) / 4;
  std::vector<std::pair<std::size_t, std::string>> close;
  for (const TaskInfo* info : tasks) {
    std::size_t best = allowed + 1;
    for (const std::string& spelling : TaskSpellings(*info)) {
      const std::string other = NameKey(spelling);
      // A part of a task's name ("cheetah", "pendulum") is close to it.
      const bool part = key.size() >= 3 && other.find(key) != std::string::npos;
      best = std::min(best, part ? 0 : EditDistance(key, other));
    }
    if (best <= allowed) close.emplace_back(best, info->name);
  }
  std::sort(close.begin(), close.end());
  std::vector<std::string> names;
  for (std::size_t i = 0; i < close.size() && i < limit; ++i) names.push_back(close[i].second);
  return names;
}

}  // namespace joltgym
