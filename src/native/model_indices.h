// The index and kind arrays of a model that MuJoCo's own reference check
// (mj_validateReferences) leaves out, though stepping or rendering uses them
// as indices: a user who holds the Gymnasium env's mujoco.MjModel and writes
// model.geom_type[0] = 2**30 (or mat_texid, dof_treeid, ...) crashed the
// process at the next step or render.
#pragma once

#include <mujoco/mujoco.h>

#include <string>

namespace joltgym {

// "model.<field>[<i>] = <value>; expected <low> to <high>" for the first
// entry outside its range, or "" if every one is inside.
std::string FirstBadIndex(const mjModel* m);

}  // namespace joltgym
