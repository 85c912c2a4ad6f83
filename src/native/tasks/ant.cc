// Ant: Gymnasium's Ant-v5, natively.
#include <cmath>
#include <vector>

#include "locomotion.h"

namespace joltgym {
namespace {

constexpr const char* kDoc = R"(Ant, natively: Gymnasium's ``Ant-v5`` step for step.

================  ==========================================================
Action (8)        hip and ankle torques of the four legs, in [-1, 1]
Observation (105) qpos[2:] (13), qvel (14), cfrc_ext[1:] clipped to
                  contact_force_range (78); 27 without contact forces,
                  107 with ``exclude_current_positions_from_observation=False``
Reward            ``reward_forward`` = x_velocity of ``main_body``,
                  ``reward_survive`` = 1 while healthy,
                  ``reward_ctrl`` = -0.5 * sum(action**2),
                  ``reward_contact`` = -5e-4 * sum(clip(cfrc_ext)**2)
Info              x_position, y_position, distance_from_origin (these also on
                  reset), x_velocity, y_velocity and the four reward terms
Termination       state not finite, or torso z outside [0.2, 1.0]; truncated
                  after 1000 steps
Reset noise       qpos + U(-s, s), qvel + s * N(0, 1), s = reset_noise_scale (0.1)
================  ==========================================================
)";

class Ant final : public LocomotionTask {
 public:
  explicit Ant(const Params& p) : LocomotionTask(p) {
    RequireRoot(mjJNT_FREE, "Ant");
    const mjModel* m = model();
    forward_weight_ = p.Float("forward_reward_weight");
    ctrl_weight_ = p.Float("ctrl_cost_weight");
    contact_weight_ = p.Float("contact_cost_weight");
    healthy_reward_ = p.Float("healthy_reward");
    terminate_when_unhealthy_ = p.Bool("terminate_when_unhealthy");
    healthy_z_ = p.Range("healthy_z_range");
    contact_range_ = p.Range("contact_force_range");
    include_cfrc_ext_ = p.Bool("include_cfrc_ext_in_observation");
    const ParamValue& body = p.Get("main_body");
    main_body_ = body.is_text ? RequireId(m, mjOBJ_BODY, body.text)
                              : static_cast<int>(body.numbers.at(0));
    if (main_body_ < 0 || main_body_ >= m->nbody) {
      throw BadValue("main_body should be a body index in [0, " + std::to_string(m->nbody) +
                     ") or a body name, got " + std::to_string(main_body_));
    }
    skip_ = exclude_positions_ ? 2 : 0;
    SetDims(1, m->nq - skip_ + m->nv + (include_cfrc_ext_ ? 6 * (m->nbody - 1) : 0), m->nu);
    SetActionBoundsFromCtrlRange(0);
    InfoLayout& info = mutable_info();
    position_.Add(info);
    x_velocity_ = info.Add("x_velocity");
    y_velocity_ = info.Add("y_velocity");
    reward_forward_ = info.Add("reward_forward");
    reward_ctrl_ = info.Add("reward_ctrl");
    info.SetScalar(reward_ctrl_, InfoScalar::kFloat32);  // -weight * np.sum(np.square(action))
    reward_contact_ = info.Add("reward_contact");
    reward_survive_ = info.Add("reward_survive");
    RenderCamera camera;
    camera.distance = 5.0;
    camera.elevation = -30.0;
    SetCamera(camera);
  }

  void Reset(mjData* d, double*, Rng& rng, double* obs, double* info) const override {
    ResetWithNoise(d, rng, VelocityNoise::kNormal);
    Observe(d, nullptr, obs);
    position_.Write(d, info);
  }

  bool Step(mjData* d, double*, const float* action, const StepOutput& out) const override {
    const mjtNum* xpos = d->xpos + 3 * main_body_;
    const double x_before = xpos[0], y_before = xpos[1];
    const bool stable = Advance(d, action);
    const double x_velocity = (xpos[0] - x_before) / dt();
    const double y_velocity = (xpos[1] - y_before) / dt();
    Observe(d, nullptr, out.obs);

    const bool healthy = IsHealthy(d);
    const double forward = x_velocity * forward_weight_;
    const double survive = healthy ? healthy_reward_ : 0.0;
    const double ctrl_cost = Float32ControlCost(ctrl_weight_, action, act_dim());
    const double contact_cost = contact_weight_ * ClippedContactSumSquares(d);
    out.reward[0] = (forward + survive) - (ctrl_cost + contact_cost);
    out.terminated[0] = !healthy && terminate_when_unhealthy_;
    double* info = out.info;
    position_.Write(d, info);
    info[x_velocity_] = x_velocity;
    info[y_velocity_] = y_velocity;
    info[reward_forward_] = forward;
    info[reward_ctrl_] = -ctrl_cost;
    info[reward_contact_] = -contact_cost;
    info[reward_survive_] = survive;
    return stable;
  }

  void Observe(const mjData* d, const double*, double* obs) const override {
    const mjModel* m = model();
    obs = PutQposQvel(obs, d, skip_);
    if (!include_cfrc_ext_) return;
    for (int i = 6; i < 6 * m->nbody; ++i) *obs++ = Clip(d->cfrc_ext[i]);
  }

 private:
  // np.clip: a NaN stays NaN.
  double Clip(double f) const {
    return f < contact_range_.first ? contact_range_.first : (f > contact_range_.second ? contact_range_.second : f);
  }

  // np.sum(np.square(np.clip(cfrc_ext, ...))) over every body, the world's
  // too, in NumPy's order of additions.
  double ClippedContactSumSquares(const mjData* d) const {
    return NumpyClippedSumSquares(d->cfrc_ext, 6 * model()->nbody, contact_range_.first, contact_range_.second);
  }

  bool IsHealthy(const mjData* d) const {
    return StateIsFinite(d) && healthy_z_.first <= d->qpos[2] && d->qpos[2] <= healthy_z_.second;
  }

  double forward_weight_, ctrl_weight_, contact_weight_, healthy_reward_;
  bool terminate_when_unhealthy_, include_cfrc_ext_;
  std::pair<double, double> healthy_z_, contact_range_;
  int main_body_;
  int skip_;
  XYPositionInfo position_;
  int x_velocity_, y_velocity_, reward_forward_, reward_ctrl_, reward_contact_,
      reward_survive_;  // info offsets
};

std::vector<ParamSpec> Spec() {
  auto spec = LocomotionParams("ant.xml", 0.1);
  spec.push_back(FloatParam("forward_reward_weight", 1.0, "weight of the forward velocity"));
  spec.push_back(FloatParam("ctrl_cost_weight", 0.5, "weight of the control cost"));
  spec.push_back(FloatParam("contact_cost_weight", 5e-4, "weight of the contact cost"));
  spec.push_back(FloatParam("healthy_reward", 1.0, "reward per step while healthy"));
  spec.push_back(BodyRefParam("main_body", 1, "body whose xy motion is rewarded (index or name)"));
  spec.push_back(BoolParam("terminate_when_unhealthy", true, "end the episode when unhealthy"));
  spec.push_back(RangeParam("healthy_z_range", 0.2, 1.0, "torso heights that count as healthy"));
  spec.push_back(RangeParam("contact_force_range", -1.0, 1.0, "clip range of cfrc_ext"));
  spec.push_back(BoolParam("include_cfrc_ext_in_observation", true, "append contact forces"));
  return spec;
}

const TaskRegistration kRegistration(RunsOnJolt(SingleAgentTask<Ant>("ant", "Ant", Spec(), kDoc,
                                                                    /*max_episode_steps=*/1000,
                                                                    /*reward_threshold=*/6000.0),
                                                kAntJoltOptions));

}  // namespace
}  // namespace joltgym
