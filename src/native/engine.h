// The physics engine seam. The core funnels all physics through two places:
// advancing a world by `frame_skip` timesteps (Simulate, task.h) and writing a
// state into the physics at reset and set_state (World). MuJoCo is the
// default and the reference: a world without an Engine steps its mjData with
// mj_step. Another engine (Jolt, src/native/jolt/) keeps the world's mjData as
// a mirror: after each step it writes qpos/qvel back and runs MuJoCo's
// kinematics, so every task's observe/reward/termination code runs unchanged.
#pragma once

#include <mujoco/mujoco.h>

#include <memory>
#include <string>
#include <vector>

namespace joltgym {

// One world's physics in another engine.
class Engine {
 public:
  virtual ~Engine() = default;
  // Advances by `frame_skip` timesteps with the controls in data->ctrl, then
  // writes qpos/qvel/time back into `data` and runs the mirror passes.
  // Returns false if the physics became unstable (non-finite or runaway).
  virtual bool Advance(const mjModel* model, mjData* data, int frame_skip) = 0;
  // Makes the engine's state the one in `data` (qpos/qvel, with mj_forward
  // run): called after a task's Reset and after set_state.
  virtual void WriteState(const mjModel* model, mjData* data) = 0;
  // Each body's world pose as the engine holds it, [nbody, 7] (pos, quat
  // w-x-y-z); the world body is at the origin.
  virtual void BodyPoses(const mjModel* model, double* out) const = 0;
};

// What makes one task's engines: built once per task from its compiled
// model, shared read-only by every world of the task.
class EngineModel {
 public:
  virtual ~EngineModel() = default;
  virtual const std::string& name() const = 0;
  virtual std::unique_ptr<Engine> MakeEngine() const = 0;
  // The name of a field of `model` (one of the model's arrays this engine
  // model was built from, e.g. "body_mass") whose values differ from those
  // it was built with, or "" if none does. A user may change the model of a
  // Gymnasium env between steps; an engine that reads a field only when it
  // is built cannot follow such a change, and says so through this.
  virtual std::string ChangedField(const mjModel* model) const = 0;
};

// Solver settings of an engine other than MuJoCo (the Jolt keywords).
struct EngineOptions {
  int substeps = 1;              // Jolt collision steps per MuJoCo timestep
  int velocity_iterations = 10;  // Jolt's velocity solver iterations
  int position_iterations = 2;   // Jolt's position solver iterations
};

// The Ant's defaults: its armature (1, about a hundred times a leg's own
// inertia) couples light links through stiff joint rows, which Jolt's
// iterative solver needs more velocity iterations to resolve (they cost
// little next to collision detection; docs/guides/jolt.md has the figures).
inline constexpr EngineOptions kAntJoltOptions{1, 40, 2};

// The engines a task may name, as spelled by the `engine` keyword.
inline const char* const kMujocoEngine = "mujoco";
inline const char* const kJoltEngine = "jolt";

// True if this build has the Jolt engine (JOLTGYM_WITH_JOLT).
bool JoltAvailable();
// True if its Jolt checks its own asserts (JOLTGYM_JOLT_ASSERTS: a failed
// one prints what failed and aborts the process).
bool JoltAssertsEnabled();

// The engine model for `engine` and `model` of task `task` (nullptr for
// "mujoco"). Throws BadValue for an unknown engine, an engine this build
// lacks (saying how to get it) or a model the engine cannot represent.
std::shared_ptr<const EngineModel> MakeEngineModel(const std::string& engine,
                                                    const mjModel* model, const std::string& task,
                                                    const EngineOptions& options = {});

// The engine of the world whose task code runs on this thread (set by World
// around its calls into a task), or nullptr: MuJoCo.
Engine* CurrentEngine();

// Sets the current engine for its lifetime.
class EngineScope {
 public:
  explicit EngineScope(Engine* engine);
  ~EngineScope();
  EngineScope(const EngineScope&) = delete;
  EngineScope& operator=(const EngineScope&) = delete;

 private:
  Engine* previous_;
};

}  // namespace joltgym
