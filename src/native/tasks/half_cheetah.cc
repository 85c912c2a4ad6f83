// HalfCheetah: Gymnasium's HalfCheetah-v5, natively.
#include "locomotion.h"

namespace joltgym {
namespace {

constexpr const char* kDoc = R"(HalfCheetah, natively: Gymnasium's ``HalfCheetah-v5`` step for step.

================  ==========================================================
Action (6)        torques on bthigh, bshin, bfoot, fthigh, fshin, ffoot, in [-1, 1]
Observation (17)  qpos[1:] (rootz, rooty, 6 joint angles), qvel (9);
                  18 with ``exclude_current_positions_from_observation=False``
Reward            ``reward_forward`` = forward_reward_weight * x_velocity,
                  ``reward_ctrl`` = -ctrl_cost_weight * sum(action**2)
Info              x_position (also on reset), x_velocity, reward_forward, reward_ctrl
Termination       never; truncated after 1000 steps
Reset noise       qpos + U(-s, s), qvel + s * N(0, 1), s = reset_noise_scale (0.1)
================  ==========================================================
)";

class HalfCheetah final : public LocomotionTask {
 public:
  explicit HalfCheetah(const Params& p) : LocomotionTask(p) {
    RequireRoot(mjJNT_SLIDE, "HalfCheetah");
    forward_weight_ = p.Float("forward_reward_weight");
    ctrl_weight_ = p.Float("ctrl_cost_weight");
    const mjModel* m = model();
    skip_ = exclude_positions_ ? 1 : 0;
    SetDims(1, m->nq - skip_ + m->nv, m->nu);
    SetActionBoundsFromCtrlRange(0);
    InfoLayout& info = mutable_info();
    x_position_ = info.AddAtReset("x_position");
    x_velocity_ = info.Add("x_velocity");
    reward_forward_ = info.Add("reward_forward");
    reward_ctrl_ = info.Add("reward_ctrl");
    info.SetScalar(reward_ctrl_, InfoScalar::kFloat32);  // a cost of the float32 action
  }

  void Reset(mjData* d, double*, Rng& rng, double* obs, double* info) const override {
    ResetWithNoise(d, rng, VelocityNoise::kNormal);
    Observe(d, nullptr, obs);
    info[x_position_] = d->qpos[0];
  }

  bool Step(mjData* d, double*, const float* action, const StepOutput& out) const override {
    const double x_before = d->qpos[0];
    const bool stable = Advance(d, action);
    const double x_after = d->qpos[0];
    const double x_velocity = (x_after - x_before) / dt();
    Observe(d, nullptr, out.obs);
    const double forward = forward_weight_ * x_velocity;
    const double ctrl_cost = Float32ControlCost(ctrl_weight_, action, act_dim());
    out.reward[0] = forward - ctrl_cost;
    out.terminated[0] = false;
    double* info = out.info;
    info[x_position_] = x_after;
    info[x_velocity_] = x_velocity;
    info[reward_forward_] = forward;
    info[reward_ctrl_] = -ctrl_cost;
    return stable;
  }

  void Observe(const mjData* d, const double*, double* obs) const override {
    PutQposQvel(obs, d, skip_);
  }

 private:
  double forward_weight_;
  double ctrl_weight_;
  int skip_;
  int x_position_, x_velocity_, reward_forward_, reward_ctrl_;  // info offsets
};

std::vector<ParamSpec> Spec() {
  auto spec = LocomotionParams("half_cheetah.xml", 0.1);
  spec.push_back(FloatParam("forward_reward_weight", 1.0, "weight of the forward velocity"));
  spec.push_back(FloatParam("ctrl_cost_weight", 0.1, "weight of the control cost"));
  return spec;
}

const TaskRegistration kRegistration(
    RunsOnJolt(SingleAgentTask<HalfCheetah>("half_cheetah", "HalfCheetah", Spec(), kDoc,
                                            /*max_episode_steps=*/1000, /*reward_threshold=*/4800.0)));

}  // namespace
}  // namespace joltgym
