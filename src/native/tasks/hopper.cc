// Hopper: Gymnasium's Hopper-v5, natively: a planar walker (see
// planar_walker.h for what it shares with Walker2d and the Gymnasium quirks
// kept) whose health also requires the whole state in healthy_state_range.
#include <cmath>
#include <utility>

#include "planar_walker.h"

namespace joltgym {
namespace {

constexpr const char* kDoc = R"(Hopper, natively: Gymnasium's ``Hopper-v5`` step for step.

================  ==========================================================
Action (3)        torques on thigh_joint, leg_joint, foot_joint, in [-1, 1]
Observation (11)  qpos[1:] (rootz, rooty, 3 joint angles), qvel (6) clipped to
                  [-10, 10]; 12 with ``exclude_current_positions_from_observation=False``
Reward            ``reward_forward`` = forward_reward_weight * x_velocity,
                  ``reward_survive`` = healthy_reward while healthy,
                  ``reward_ctrl`` = -ctrl_cost_weight * sum(action**2)
Info              x_position, z_distance_from_origin (these also on reset),
                  x_velocity, reward_forward, reward_ctrl, reward_survive
Termination       unhealthy (with ``terminate_when_unhealthy``): qpos[2:] or qvel
                  outside healthy_state_range (-100, 100), rootz outside
                  healthy_z_range (0.7, inf) or rooty outside
                  healthy_angle_range (-0.2, 0.2); truncated after 1000 steps
Reset noise       qpos + U(-s, s), qvel + U(-s, s), s = reset_noise_scale (0.005)
================  ==========================================================
)";

class Hopper final : public PlanarWalker {
 public:
  explicit Hopper(const Params& p) : PlanarWalker(p, "Hopper") {
    healthy_state_ = p.Range("healthy_state_range");
    // Hopper-v5's is_healthy is a Python bool (all(...)), so reward_survive is a float.
    mutable_info().SetScalar(reward_survive_offset(), InfoScalar::kFloat);
  }

 private:
  // Hopper also requires state_vector()[2:] (qpos[2:] then qvel, not
  // clipped) inside healthy_state_range.
  bool IsHealthy(const mjData* d) const override {
    const mjModel* m = model();
    for (int i = 2; i < m->nq; ++i) {
      if (!Inside(d->qpos[i], healthy_state_)) return false;
    }
    for (int i = 0; i < m->nv; ++i) {
      if (!Inside(d->qvel[i], healthy_state_)) return false;
    }
    return PlanarWalker::IsHealthy(d);
  }

  std::pair<double, double> healthy_state_;
};

std::vector<ParamSpec> Spec() {
  auto spec = LocomotionParams("hopper.xml", 5e-3, /*frame_skip=*/4);
  spec.push_back(FloatParam("forward_reward_weight", 1.0, "weight of the forward velocity"));
  spec.push_back(FloatParam("ctrl_cost_weight", 1e-3, "weight of the control cost"));
  spec.push_back(FloatParam("healthy_reward", 1.0, "reward per step while healthy"));
  spec.push_back(BoolParam("terminate_when_unhealthy", true, "end the episode when unhealthy"));
  spec.push_back(RangeParam("healthy_state_range", -100.0, 100.0,
                            "open range every qpos[2:] and qvel value must stay in to be healthy"));
  spec.push_back(RangeParam("healthy_z_range", 0.7, INFINITY,
                            "open range of torso heights (rootz) that count as healthy"));
  spec.push_back(RangeParam("healthy_angle_range", -0.2, 0.2,
                            "open range of torso pitch angles (rooty) that count as healthy"));
  return spec;
}

const TaskRegistration kRegistration(RunsOnJolt(SingleAgentTask<Hopper>("hopper", "Hopper", Spec(), kDoc,
                                                              /*max_episode_steps=*/1000,
                                                              /*reward_threshold=*/3800.0)));

}  // namespace
}  // namespace joltgym
