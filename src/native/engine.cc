#include "engine.h"

#include "errors.h"

#ifdef JOLTGYM_HAVE_JOLT
#include "jolt/jolt_engine.h"
#endif

namespace joltgym {

namespace {
thread_local Engine* current_engine = nullptr;
}  // namespace

Engine* CurrentEngine() { return current_engine; }

EngineScope::EngineScope(Engine* engine) : previous_(current_engine) { current_engine = engine; }
EngineScope::~EngineScope() { current_engine = previous_; }

bool JoltAvailable() {
#ifdef JOLTGYM_HAVE_JOLT
  return true;
#else
  return false;
#endif
}

bool JoltAssertsEnabled() {
#ifdef JPH_ENABLE_ASSERTS
  return true;
#else
  return false;
#endif
}

std::shared_ptr<const EngineModel> MakeEngineModel(const std::string& engine,
                                                    const mjModel* model, const std::string& task,
                                                    const EngineOptions& options) {
  if (engine == kMujocoEngine) return nullptr;
  if (engine != kJoltEngine) {
    throw BadValue("engine should be 'mujoco' or 'jolt', got '" + engine + "'");
  }
#ifdef JOLTGYM_HAVE_JOLT
  return MakeJoltModel(model, task, options);
#else
  (void)model;
  (void)options;
  throw BadValue(
      "engine='jolt' (task '" + task +
      "'): this joltgym_marl was built without Jolt Physics. Rebuild with Jolt: "
      "`python tools/fetch_jolt.py` (fetches and caches the pinned Jolt 5.5.0 source), then "
      "`pip install .` (or configure CMake with -DJOLTGYM_WITH_JOLT=ON, which fetches it; "
      "JOLT_SOURCE_DIR=<your Jolt checkout> also works)");
#endif
}

}  // namespace joltgym
