// A compiled MuJoCo model shared read-only by every world of a task.
#pragma once

#include <mujoco/mujoco.h>

#include <memory>
#include <string>

namespace joltgym {

using ModelPtr = std::shared_ptr<const mjModel>;

// Compiles an MJCF file. Throws FileNotFound if `path` does not exist,
// std::invalid_argument (with MuJoCo's own message) if it does not compile and
// MujocoError if MuJoCo fails otherwise (out of memory). MuJoCo's warnings go
// to ThreadConstructionReport(), not to stdout.
ModelPtr LoadModel(const std::string& path);

// Looks a named object up once, at task construction. Throws
// std::invalid_argument naming the missing object.
int RequireId(const mjModel* model, mjtObj type, const std::string& name);

}  // namespace joltgym
