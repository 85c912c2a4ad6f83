// Jolt Physics as a second engine (engine.h): a world is one JPH::PhysicsSystem
// with a single-threaded job system, built from the task's compiled mjModel,
// and the world's mjData is kept as a mirror of it.
#pragma once

#include <mujoco/mujoco.h>

#include <memory>
#include <string>

#include "../engine.h"

namespace joltgym {

// Builds the Jolt description of `model` (once per task). Throws BadValue
// naming what it cannot represent (a body with two or three hinges, a ball
// joint, a mesh geom, ...).
std::shared_ptr<const EngineModel> MakeJoltModel(const mjModel* model, const std::string& task,
                                                  const EngineOptions& options);

}  // namespace joltgym
