// Swimmer: Gymnasium's Swimmer-v5, natively.
//
// Unlike the other locomotion tasks, the velocities and positions are those of
// the front tip, read from qpos[0:2] (the slide joints slider1, slider2), and
// the default frame_skip is 4 (dt = 0.04 s). Swimmer-v5 has no
// DEFAULT_CAMERA_CONFIG; our camera looks down on the pool from above.
#include "locomotion.h"

namespace joltgym {
namespace {

constexpr const char* kDoc = R"(Swimmer, natively: Gymnasium's ``Swimmer-v5`` step for step.

================  ==========================================================
Action (2)        torques on motor1_rot, motor2_rot, in [-1, 1]
Observation (8)   qpos[2:] (heading, 2 rotor angles), qvel (5);
                  10 with ``exclude_current_positions_from_observation=False``
Reward            ``reward_forward`` = forward_reward_weight * x_velocity,
                  ``reward_ctrl`` = -ctrl_cost_weight * sum(action**2);
                  the velocities are the front tip's (qpos[0:2])
Info              x_position, y_position, distance_from_origin (these also on
                  reset), x_velocity, y_velocity, reward_forward, reward_ctrl
Termination       never; truncated after 1000 steps
Reset noise       qpos + U(-s, s), qvel + U(-s, s), s = reset_noise_scale (0.1)
================  ==========================================================
)";

class Swimmer final : public LocomotionTask {
 public:
  explicit Swimmer(const Params& p) : LocomotionTask(p) {
    RequireRoot(mjJNT_SLIDE, "Swimmer");
    const mjModel* m = model();
    // x, y velocities and positions are read from qpos[0:2]: the first two
    // joints must be the tip's planar slides.
    if (m->njnt < 2 || m->jnt_type[1] != mjJNT_SLIDE || m->jnt_bodyid[1] != 1) {
      static const char* const kNames[] = {"free", "ball", "slide", "hinge"};
      const int type = m->njnt < 2 ? -1 : m->jnt_type[1];
      const std::string found =
          type < 0 ? std::string("no second joint")
                   : std::string("a ") + (type < 4 ? kNames[type] : "unknown") +
                         " joint second (in body " + std::to_string(m->jnt_bodyid[1]) + ")";
      throw BadValue(
          "Swimmer model should have two slide joints (the tip's x and y) as its first two "
          "joints, in the first body; got " +
          found);
    }
    forward_weight_ = p.Float("forward_reward_weight");
    ctrl_weight_ = p.Float("ctrl_cost_weight");
    skip_ = exclude_positions_ ? 2 : 0;
    SetDims(1, m->nq - skip_ + m->nv, m->nu);
    SetActionBoundsFromCtrlRange(0);
    InfoLayout& info = mutable_info();
    position_.Add(info);
    x_velocity_ = info.Add("x_velocity");
    y_velocity_ = info.Add("y_velocity");
    reward_forward_ = info.Add("reward_forward");
    reward_ctrl_ = info.Add("reward_ctrl");
    info.SetScalar(reward_ctrl_, InfoScalar::kFloat32);  // a cost of the float32 action
    // The 3 m swimmer lies flat in the xy plane: look down on it steeply,
    // following the front link's frame (whose origin starts at the middle of
    // the body); 6 m keeps it in view when it curls away from that point.
    RenderCamera camera;
    camera.distance = 6.0;
    camera.elevation = -60.0;
    SetCamera(camera);
  }

  void Reset(mjData* d, double*, Rng& rng, double* obs, double* info) const override {
    ResetWithNoise(d, rng, VelocityNoise::kUniform);
    Observe(d, nullptr, obs);
    position_.Write(d, info);
  }

  bool Step(mjData* d, double*, const float* action, const StepOutput& out) const override {
    const double x_before = d->qpos[0], y_before = d->qpos[1];
    const bool stable = Advance(d, action);
    const double x_velocity = (d->qpos[0] - x_before) / dt();
    const double y_velocity = (d->qpos[1] - y_before) / dt();
    Observe(d, nullptr, out.obs);
    const double forward = forward_weight_ * x_velocity;
    const double ctrl_cost = Float32ControlCost(ctrl_weight_, action, act_dim());
    out.reward[0] = forward - ctrl_cost;
    out.terminated[0] = false;
    double* info = out.info;
    position_.Write(d, info);
    info[x_velocity_] = x_velocity;
    info[y_velocity_] = y_velocity;
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
  XYPositionInfo position_;
  int x_velocity_, y_velocity_, reward_forward_, reward_ctrl_;  // info offsets
};

std::vector<ParamSpec> Spec() {
  auto spec = LocomotionParams("swimmer.xml", 0.1, /*frame_skip=*/4);
  spec.push_back(FloatParam("forward_reward_weight", 1.0, "weight of the forward velocity"));
  spec.push_back(FloatParam("ctrl_cost_weight", 1e-4, "weight of the control cost"));
  return spec;
}

const TaskRegistration kRegistration(RunsOnJolt(SingleAgentTask<Swimmer>("swimmer", "Swimmer", Spec(), kDoc,
                                                                         /*max_episode_steps=*/1000,
                                                                         /*reward_threshold=*/360.0)));

}  // namespace
}  // namespace joltgym
