#include "model.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstring>

#include "errors.h"

namespace joltgym {

namespace {

void (*g_previous_warning)(const char*) = nullptr;

// MuJoCo 4 warns that `settotalmass` is deprecated. The bundled HalfCheetah
// keeps it on purpose (it is what makes its masses bit-identical to
// Gymnasium's HalfCheetah-v5), so that one notice is dropped; every other
// warning goes on to the previous handler, or to MuJoCo's default output.
void FilterCompilerWarning(const char* message) {
  if (std::strstr(message, "settotalmass") != nullptr) return;
  if (g_previous_warning != nullptr) {
    g_previous_warning(message);
  } else {
    std::fprintf(stderr, "WARNING: %s\n", message);
  }
}

}  // namespace

ModelPtr LoadModel(const std::string& path) {
  struct stat info {};
  if (path.empty() || stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
    throw FileNotFound("MJCF file '" + path + "' does not exist (expected a readable model file)");
  }
  char error[1024] = "";
  // Models are compiled at construction, with the GIL held, so swapping the
  // process-wide handler around the call does not race with another load.
  g_previous_warning = mju_user_warning;
  mju_user_warning = FilterCompilerWarning;
  mjModel* model = mj_loadXML(path.c_str(), nullptr, error, sizeof(error));
  mju_user_warning = g_previous_warning;
  if (model == nullptr) {
    throw BadValue("MJCF file '" + path + "' could not be compiled: " + error);
  }
  return ModelPtr(model, [](const mjModel* m) { mj_deleteModel(const_cast<mjModel*>(m)); });
}

int RequireId(const mjModel* model, mjtObj type, const std::string& name) {
  const int id = mj_name2id(model, type, name.c_str());
  if (id < 0) {
    throw BadValue("model has no " + std::string(mju_type2Str(type)) + " named '" + name + "'");
  }
  return id;
}

}  // namespace joltgym
