// CoupledHalfCheetah: MaMuJoCo's two half cheetahs joined by an elastic
// tendon (Farama's CoupledHalfCheetahEnv), as a single-agent robot task that
// only MaMuJoCo uses (it has no Gymnasium -v5 twin, so it is not in the task
// registry).
#pragma once

#include <memory>
#include <vector>

#include "../params.h"
#include "../task.h"

namespace joltgym::mamujoco {

inline constexpr const char* kCoupledHalfCheetah = "coupled_half_cheetah";

// Its keyword arguments (xml_file: the generated MJCF; Farama's env takes no others).
std::vector<ParamSpec> CoupledHalfCheetahParams();
std::shared_ptr<const Task> MakeCoupledHalfCheetah(const Params& params);

}  // namespace joltgym::mamujoco
