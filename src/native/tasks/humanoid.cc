// Humanoid: Gymnasium's Humanoid-v5, natively. Its observation and tendon
// info fields are HumanoidStandup's too (humanoid_body.h).
#include <cmath>

#include "humanoid_body.h"

namespace joltgym {
namespace {

constexpr const char* kDoc = R"(Humanoid, natively: Gymnasium's ``Humanoid-v5`` step for step.

================  ==========================================================
Action (17)       abdomen, hip, knee, shoulder and elbow torques, in [-0.4, 0.4]
Observation (348) qpos[2:] (22), qvel (23), cinert[1:] (130), cvel[1:] (78),
                  qfrc_actuator[6:] (17), cfrc_ext[1:] (78); each of the last
                  four blocks can be dropped with its ``include_*_in_observation``
Reward            ``reward_forward`` = 1.25 * x velocity of the centre of mass,
                  ``reward_survive`` = 5 while healthy,
                  ``reward_ctrl`` = -0.1 * sum(ctrl**2),
                  ``reward_contact`` = -clip(5e-7 * sum(cfrc_ext**2), contact_cost_range)
Info              x_position, y_position, tendon_length, tendon_velocity,
                  distance_from_origin (these also on reset), x_velocity,
                  y_velocity and the four reward terms
Termination       torso z outside (1.0, 2.0); truncated after 1000 steps
Reset noise       qpos + U(-s, s), qvel + U(-s, s), s = reset_noise_scale (0.01)
================  ==========================================================
)";

class Humanoid final : public HumanoidBody {
 public:
  explicit Humanoid(const Params& p) : HumanoidBody(p, "Humanoid") {
    const mjModel* m = model();
    forward_weight_ = p.Float("forward_reward_weight");
    ctrl_weight_ = p.Float("ctrl_cost_weight");
    contact_weight_ = p.Float("contact_cost_weight");
    contact_range_ = p.Range("contact_cost_range");
    healthy_reward_ = p.Float("healthy_reward");
    terminate_when_unhealthy_ = p.Bool("terminate_when_unhealthy");
    healthy_z_ = p.Range("healthy_z_range");
    for (int b = 0; b < m->nbody; ++b) total_mass_ += m->body_mass[b];
    InfoLayout& info = mutable_info();
    position_.AddXY(info);
    AddTendonInfo(info);
    position_.AddDistance(info);
    x_velocity_ = info.Add("x_velocity");
    y_velocity_ = info.Add("y_velocity");
    reward_survive_ = info.Add("reward_survive");
    reward_forward_ = info.Add("reward_forward");
    reward_ctrl_ = info.Add("reward_ctrl");
    reward_contact_ = info.Add("reward_contact");
    RenderCamera camera;
    camera.distance = 5.0;
    SetCamera(camera);
  }

  void Reset(mjData* d, double*, Rng& rng, double* obs, double* info) const override {
    ResetWithNoise(d, rng, VelocityNoise::kUniform);
    Observe(d, nullptr, obs);
    WritePositionInfo(d, info);
  }

  bool Step(mjData* d, double*, const float* action, const StepOutput& out) const override {
    const mjModel* m = model();
    double before[2], after[2];
    MassCenter(d, before);
    const bool stable = Advance(d, action);
    MassCenter(d, after);
    const double x_velocity = (after[0] - before[0]) / dt();
    const double y_velocity = (after[1] - before[1]) / dt();
    Observe(d, nullptr, out.obs);

    const double z = d->qpos[2];
    const bool healthy = healthy_z_.first < z && z < healthy_z_.second;
    const double forward = forward_weight_ * x_velocity;
    const double survive = healthy ? healthy_reward_ : 0.0;
    // Humanoid-v5 squares data.ctrl (float64), not the action; both sums in
    // NumPy's order, the clip as np.clip's.
    const double ctrl_cost = ctrl_weight_ * NumpySumSquares(d->ctrl, m->nu);
    const double contact_raw = contact_weight_ * NumpySumSquares(d->cfrc_ext, 6 * m->nbody);
    const double contact_cost = contact_raw < contact_range_.first
                                    ? contact_range_.first
                                    : (contact_raw > contact_range_.second ? contact_range_.second : contact_raw);
    out.reward[0] = (forward + survive) - (ctrl_cost + contact_cost);
    out.terminated[0] = !healthy && terminate_when_unhealthy_;
    double* info = out.info;
    WritePositionInfo(d, info);
    info[x_velocity_] = x_velocity;
    info[y_velocity_] = y_velocity;
    info[reward_survive_] = survive;
    info[reward_forward_] = forward;
    info[reward_ctrl_] = -ctrl_cost;
    info[reward_contact_] = -contact_cost;
    return stable;
  }

 private:
  // Mass-weighted mean of the bodies' inertial frame positions (x, y).
  void MassCenter(const mjData* d, double* xy) const {
    const mjModel* m = model();
    double sx = 0.0, sy = 0.0;
    for (int b = 0; b < m->nbody; ++b) {
      sx += m->body_mass[b] * d->xipos[3 * b];
      sy += m->body_mass[b] * d->xipos[3 * b + 1];
    }
    xy[0] = sx / total_mass_;
    xy[1] = sy / total_mass_;
  }

  // Writes the fields that reset and step share.
  void WritePositionInfo(const mjData* d, double* info) const {
    position_.Write(d, info);
    WriteTendonInfo(d, info);
  }

  double forward_weight_, ctrl_weight_, contact_weight_, healthy_reward_;
  std::pair<double, double> contact_range_, healthy_z_;
  bool terminate_when_unhealthy_;
  double total_mass_ = 0.0;
  XYPositionInfo position_;
  int x_velocity_, y_velocity_, reward_survive_, reward_forward_, reward_ctrl_,
      reward_contact_;  // info offsets
};

std::vector<ParamSpec> Spec() {
  auto spec = LocomotionParams("humanoid.xml", 1e-2);
  spec.push_back(FloatParam("forward_reward_weight", 1.25, "weight of the forward velocity"));
  spec.push_back(FloatParam("ctrl_cost_weight", 0.1, "weight of the control cost"));
  spec.push_back(FloatParam("contact_cost_weight", 5e-7, "weight of the contact cost"));
  spec.push_back(RangeParam("contact_cost_range", -INFINITY, 10.0, "clip range of the contact cost"));
  spec.push_back(FloatParam("healthy_reward", 5.0, "reward per step while healthy"));
  spec.push_back(BoolParam("terminate_when_unhealthy", true, "end the episode when unhealthy"));
  spec.push_back(RangeParam("healthy_z_range", 1.0, 2.0, "torso heights that count as healthy"));
  HumanoidBody::AddObservationParams(spec);
  return spec;
}

const TaskRegistration kRegistration(
    RunsOnJolt(SingleAgentTask<Humanoid>("humanoid", "Humanoid", Spec(), kDoc, /*max_episode_steps=*/1000,
                                         /*reward_threshold=*/std::nullopt)));

}  // namespace
}  // namespace joltgym
