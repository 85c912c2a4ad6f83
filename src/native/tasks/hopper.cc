// Hopper: Gymnasium's Hopper-v5, natively.
//
// Quirks kept from Gymnasium: health is judged on the unclipped state (only
// the observed qvel is clipped), all health ranges are open intervals and a
// NaN counts as unhealthy; the survive reward is `is_healthy * healthy_reward`,
// so 0 * inf is NaN as there. The model must start with the planar root
// rootx (slide), rootz (slide), rooty (hinge) on its first body.
#include <cmath>
#include <string>
#include <utility>

#include "locomotion.h"

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

// Clips an observed velocity to [-10, 10] like np.clip (a NaN stays NaN).
double ClipVelocity(double v) { return v < -10.0 ? -10.0 : (v > 10.0 ? 10.0 : v); }

class Hopper final : public LocomotionTask {
 public:
  explicit Hopper(const Params& p) : LocomotionTask(p) {
    RequireRoot(mjJNT_SLIDE, "Hopper");
    RequirePlanarRoot();
    const mjModel* m = model();
    forward_weight_ = p.Float("forward_reward_weight");
    ctrl_weight_ = p.Float("ctrl_cost_weight");
    healthy_reward_ = p.Float("healthy_reward");
    terminate_when_unhealthy_ = p.Bool("terminate_when_unhealthy");
    healthy_state_ = p.Range("healthy_state_range");
    healthy_z_ = p.Range("healthy_z_range");
    healthy_angle_ = p.Range("healthy_angle_range");
    skip_ = exclude_positions_ ? 1 : 0;
    SetDims(1, m->nq - skip_ + m->nv, m->nu);
    SetActionBoundsFromCtrlRange(0);
    InfoLayout& info = mutable_info();
    x_position_ = info.AddAtReset("x_position");
    z_distance_from_origin_ = info.AddAtReset("z_distance_from_origin");
    x_velocity_ = info.Add("x_velocity");
    reward_forward_ = info.Add("reward_forward");
    reward_ctrl_ = info.Add("reward_ctrl");
    reward_survive_ = info.Add("reward_survive");
    RenderCamera camera;  // side view following the torso (+x to the right), feet in view
    camera.distance = 3.5;
    camera.elevation = -20.0;
    camera.azimuth = 90.0;
    SetCamera(camera);
  }

  void Reset(mjData* d, double*, Rng& rng, float* obs, double* info) const override {
    ResetWithNoise(d, rng, VelocityNoise::kUniform);
    Observe(d, nullptr, obs);
    WritePositionInfo(d, info);
  }

  bool Step(mjData* d, double*, const float* action, const StepOutput& out) const override {
    const double x_before = d->qpos[0];
    const bool stable = Advance(d, action);
    const double x_velocity = (d->qpos[0] - x_before) / dt();
    Observe(d, nullptr, out.obs);

    const bool healthy = IsHealthy(d);
    const double forward = forward_weight_ * x_velocity;
    const double survive = (healthy ? 1.0 : 0.0) * healthy_reward_;
    const double ctrl_cost = Float32ControlCost(ctrl_weight_, action, act_dim());
    out.reward[0] = static_cast<float>((forward + survive) - ctrl_cost);
    out.terminated[0] = !healthy && terminate_when_unhealthy_;
    double* info = out.info;
    WritePositionInfo(d, info);
    info[x_velocity_] = x_velocity;
    info[reward_forward_] = forward;
    info[reward_ctrl_] = -ctrl_cost;
    info[reward_survive_] = survive;
    return stable;
  }

  void Observe(const mjData* d, const double*, float* obs) const override {
    const mjModel* m = model();
    obs = Put(obs, d->qpos + skip_, m->nq - skip_);
    for (int i = 0; i < m->nv; ++i) *obs++ = static_cast<float>(ClipVelocity(d->qvel[i]));
  }

 private:
  // The task reads qpos[0] (x), qpos[1] (height) and qpos[2] (pitch).
  void RequirePlanarRoot() const {
    const mjModel* m = model();
    const mjtJoint kRoot[3] = {mjJNT_SLIDE, mjJNT_SLIDE, mjJNT_HINGE};
    bool ok = m->njnt >= 3;
    for (int j = 0; ok && j < 3; ++j) ok = m->jnt_type[j] == kRoot[j] && m->jnt_bodyid[j] == 1;
    if (ok) return;
    static const char* const kNames[] = {"free", "ball", "slide", "hinge"};
    std::string found;
    for (int j = 0; j < 3 && j < m->njnt; ++j) {
      const int type = m->jnt_type[j];
      found += std::string(j ? ", " : "") + (type >= 0 && type < 4 ? kNames[type] : "unknown") +
               " (body " + std::to_string(m->jnt_bodyid[j]) + ")";
    }
    throw BadValue(
        "Hopper model should start with a planar root on its first body: joints slide (x), "
        "slide (z), hinge (pitch); got " +
        (found.empty() ? std::string("no joints") : found));
  }

  bool IsHealthy(const mjData* d) const {
    const mjModel* m = model();
    const auto inside = [](double v, const std::pair<double, double>& range) {
      return range.first < v && v < range.second;
    };
    // state_vector()[2:]: qpos[2:] then qvel, not clipped.
    for (int i = 2; i < m->nq; ++i) {
      if (!inside(d->qpos[i], healthy_state_)) return false;
    }
    for (int i = 0; i < m->nv; ++i) {
      if (!inside(d->qvel[i], healthy_state_)) return false;
    }
    return inside(d->qpos[1], healthy_z_) && inside(d->qpos[2], healthy_angle_);
  }

  void WritePositionInfo(const mjData* d, double* info) const {
    info[x_position_] = d->qpos[0];
    info[z_distance_from_origin_] = d->qpos[1] - model()->qpos0[1];
  }

  double forward_weight_, ctrl_weight_, healthy_reward_;
  bool terminate_when_unhealthy_;
  std::pair<double, double> healthy_state_, healthy_z_, healthy_angle_;
  int skip_;
  int x_position_, z_distance_from_origin_, x_velocity_, reward_forward_, reward_ctrl_,
      reward_survive_;  // info offsets
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

const TaskRegistration kRegistration(SingleAgentTask<Hopper>("hopper", "Hopper", Spec(), kDoc,
                                                             /*max_episode_steps=*/1000));

}  // namespace
}  // namespace joltgym
