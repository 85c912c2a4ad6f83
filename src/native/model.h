// A compiled MuJoCo model shared read-only by every world of a task.
#pragma once

#include <mujoco/mujoco.h>

#include <memory>
#include <string>

namespace joltgym {

using ModelPtr = std::shared_ptr<const mjModel>;

// Compiles an MJCF file (see RequireModelFile for the checks made first).
// Throws std::invalid_argument (with MuJoCo's own message) if it does not
// compile and, when `simulated`, if its timestep is not positive and finite;
// MujocoError if MuJoCo fails otherwise (out of memory). MuJoCo's warnings go
// to ThreadConstructionReport(), not to stdout.
ModelPtr LoadModel(const std::string& path, bool simulated = true);

// Checks a model path before MuJoCo opens it. Throws std::invalid_argument if
// it has a NUL byte, FileNotFound if it is not an existing regular file, and
// std::invalid_argument if a file that the model includes or loads (the
// `file` attributes of include, mesh, texture, hfield, skin, ...) is a FIFO,
// a device or a socket: MuJoCo would block reading it, or read forever.
void RequireModelFile(const std::string& path);

// Throws std::invalid_argument naming `path` unless the timestep is positive
// and finite (a timestep of 0 would make dt 0).
void RequirePositiveTimestep(const mjModel* model, const std::string& path);

// Looks a named object up once, at task construction. Throws
// std::invalid_argument naming the missing object.
int RequireId(const mjModel* model, mjtObj type, const std::string& name);

}  // namespace joltgym
