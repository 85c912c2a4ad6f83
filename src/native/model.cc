#include "model.h"

#include <sys/stat.h>

#include <cstring>

#include "errors.h"
#include "mujoco_errors.h"

namespace joltgym {

ModelPtr LoadModel(const std::string& path) {
  struct stat info{};
  if (path.empty() || stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
    throw FileNotFound("MJCF file '" + path + "' does not exist (expected a readable model file)");
  }
  char error[1024] = "";
  mjModel* model = nullptr;
  MujocoReport report;
  const bool ok = GuardMujoco(
      [&] { model = mj_loadXML(path.c_str(), nullptr, error, sizeof(error)); }, &report);
  if (!ok) {
    if (model != nullptr) mj_deleteModel(model);
    throw MujocoError("MuJoCo failed loading MJCF file '" + path + "': " + report.error_message,
                      report.error == MujocoReport::Error::kOutOfMemory);
  }
  if (model == nullptr) {
    throw BadValue("MJCF file '" + path + "' could not be compiled: " + error);
  }
  ModelPtr owned(model, [](const mjModel* m) { mj_deleteModel(const_cast<mjModel*>(m)); });
  // MuJoCo 4 warns that `settotalmass` is deprecated. The bundled HalfCheetah
  // keeps it on purpose (it is what makes its masses bit-identical to
  // Gymnasium's HalfCheetah-v5), so that one notice is dropped; the others
  // are raised as Python warnings by the binding.
  MujocoReport& pending = ThreadConstructionReport();
  for (std::string& warning : report.warnings) {
    if (warning.find("settotalmass") != std::string::npos) continue;
    MujocoReport one;
    one.warnings.push_back(std::move(warning));
    pending.TakeWarnings(one);
  }
  pending.dropped_warnings += report.dropped_warnings;
  return owned;
}

int RequireId(const mjModel* model, mjtObj type, const std::string& name) {
  const int id = mj_name2id(model, type, name.c_str());
  if (id < 0) {
    throw BadValue("model has no " + std::string(mju_type2Str(type)) + " named '" + name + "'");
  }
  return id;
}

}  // namespace joltgym
