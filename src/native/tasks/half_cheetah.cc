// HalfCheetah: Gymnasium's HalfCheetah-v5, natively.
//
// obs  (17): qpos[1:] (rootz, rooty, 6 joint angles), qvel (9)
//            (18 with the root x position kept)
// act   (6): torques on bthigh, bshin, bfoot, fthigh, fshin, ffoot, in [-1, 1]
// reward   : forward_reward_weight * x_velocity - ctrl_cost_weight * |a|^2
// info     : x_position (also on reset), x_velocity, reward_forward, reward_ctrl
// episode  : never terminates; truncated at 1000 steps
#include "locomotion.h"

namespace joltgym {
namespace {

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
    mutable_info()
        .Add("x_position", 1, true)
        .Add("x_velocity")
        .Add("reward_forward")
        .Add("reward_ctrl");
  }

  void Reset(mjData* d, double*, Rng& rng, float* obs, double* info) const override {
    ResetWithNoise(d, rng, VelocityNoise::kNormal);
    Observe(d, nullptr, obs);
    info[0] = d->qpos[0];
  }

  bool Step(mjData* d, double*, const float* action, const StepOutput& out) const override {
    const double x_before = d->qpos[0];
    const bool stable = Advance(d, action);
    const double x_after = d->qpos[0];
    const double x_velocity = (x_after - x_before) / dt();
    Observe(d, nullptr, out.obs);
    const double forward = forward_weight_ * x_velocity;
    const double ctrl_cost = ctrl_weight_ * SumSquares(action, act_dim());
    out.reward[0] = static_cast<float>(forward - ctrl_cost);
    out.terminated[0] = false;
    double* info = out.info;
    info[0] = x_after;
    info[1] = x_velocity;
    info[2] = forward;
    info[3] = -ctrl_cost;
    return stable;
  }

  void Observe(const mjData* d, const double*, float* obs) const override {
    const mjModel* m = model();
    obs = Put(obs, d->qpos + skip_, m->nq - skip_);
    Put(obs, d->qvel, m->nv);
  }

 private:
  double forward_weight_;
  double ctrl_weight_;
  int skip_;
};

std::vector<ParamSpec> Spec() {
  auto spec = LocomotionParams("half_cheetah.xml", 0.1);
  spec.push_back(FloatParam("forward_reward_weight", 1.0, "weight of the forward velocity"));
  spec.push_back(FloatParam("ctrl_cost_weight", 0.1, "weight of the control cost"));
  return spec;
}

const TaskRegistration kRegistration({"half_cheetah", "HalfCheetahCore", Spec(),
                                      [](const Params& p) { return std::make_shared<HalfCheetah>(p); }});

}  // namespace
}  // namespace joltgym
