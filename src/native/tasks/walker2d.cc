// Walker2d: Gymnasium's Walker2d-v5, natively: a planar walker (see
// planar_walker.h for the step, observation and Gymnasium quirks it shares
// with Hopper). Unlike Hopper, health looks only at the torso height and
// pitch. The default model is walker2d_v5.xml (friction 1.9 on both feet).
#include "planar_walker.h"

namespace joltgym {
namespace {

constexpr const char* kDoc = R"(Walker2d, natively: Gymnasium's ``Walker2d-v5`` step for step.

================  ==========================================================
Action (6)        torques on thigh, leg, foot, thigh_left, leg_left, foot_left
                  joints, in [-1, 1]
Observation (17)  qpos[1:] (rootz, rooty, 6 joint angles), qvel (9) clipped to
                  [-10, 10]; 18 with ``exclude_current_positions_from_observation=False``
Reward            ``reward_forward`` = forward_reward_weight * x_velocity,
                  ``reward_survive`` = healthy_reward while healthy,
                  ``reward_ctrl`` = -ctrl_cost_weight * sum(action**2)
Info              x_position, z_distance_from_origin (these also on reset),
                  x_velocity, reward_forward, reward_ctrl, reward_survive
Termination       unhealthy (with ``terminate_when_unhealthy``): rootz outside
                  healthy_z_range (0.8, 2.0) or rooty outside
                  healthy_angle_range (-1, 1); truncated after 1000 steps
Reset noise       qpos + U(-s, s), qvel + U(-s, s), s = reset_noise_scale (0.005)
================  ==========================================================
)";

class Walker2d final : public PlanarWalker {
 public:
  explicit Walker2d(const Params& p) : PlanarWalker(p, "Walker2d") {}
};

std::vector<ParamSpec> Spec() {
  auto spec = LocomotionParams("walker2d_v5.xml", 5e-3, /*frame_skip=*/4);
  spec.push_back(FloatParam("forward_reward_weight", 1.0, "weight of the forward velocity"));
  spec.push_back(FloatParam("ctrl_cost_weight", 1e-3, "weight of the control cost"));
  spec.push_back(FloatParam("healthy_reward", 1.0, "reward per step while healthy"));
  spec.push_back(BoolParam("terminate_when_unhealthy", true, "end the episode when unhealthy"));
  spec.push_back(RangeParam("healthy_z_range", 0.8, 2.0,
                            "open range of torso heights (rootz) that count as healthy"));
  spec.push_back(RangeParam("healthy_angle_range", -1.0, 1.0,
                            "open range of torso pitch angles (rooty) that count as healthy"));
  return spec;
}

const TaskRegistration kRegistration(RunsOnJolt(SingleAgentTask<Walker2d>("walker2d", "Walker2d", Spec(), kDoc,
                                                                /*max_episode_steps=*/1000,
                                                                /*reward_threshold=*/std::nullopt)));

}  // namespace
}  // namespace joltgym
