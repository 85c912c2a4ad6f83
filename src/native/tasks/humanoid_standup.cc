// HumanoidStandup: Gymnasium's HumanoidStandup-v5, natively. Its observation
// and tendon info fields are Humanoid's (humanoid_body.h).
//
// Gymnasium quirks reproduced here:
// * uph_cost_weight is accepted but unused: the "up" reward is the torso
//   height divided by the MuJoCo timestep (not by dt, and unweighted);
// * reward_linup is computed from the state after the physics step;
// * the control cost is taken from data.ctrl (the float32 action widened to
//   float64) and both squared sums follow numpy's pairwise summation, so the
//   reward is Gymnasium's float64 reward rounded to float32, bit for bit.
#include <cmath>

#include "humanoid_body.h"

namespace joltgym {
namespace {

constexpr const char* kDoc =
    R"(HumanoidStandup, natively: Gymnasium's ``HumanoidStandup-v5`` step for step.

================  ==========================================================
Action (17)       abdomen, hip, knee, shoulder and elbow torques, in [-0.4, 0.4]
Observation (348) qpos[2:] (22), qvel (23), cinert[1:] (130), cvel[1:] (78),
                  qfrc_actuator[6:] (17), cfrc_ext[1:] (78); each of the last
                  four blocks can be dropped with its ``include_*_in_observation``,
                  350 with ``exclude_current_positions_from_observation=False``
Reward            ``reward_linup`` = torso z / timestep (after the step),
                  ``reward_quadctrl`` = -ctrl_cost_weight * sum(ctrl**2),
                  ``reward_impact`` = -clip(impact_cost_weight * sum(cfrc_ext**2),
                  impact_cost_range); reward = their sum + 1
Info              x_position, y_position, z_distance_from_origin, tendon_length,
                  tendon_velocity (these also on reset), reward_linup,
                  reward_quadctrl, reward_impact
Termination       never; truncated after 1000 steps
Reset noise       qpos + U(-s, s), qvel + U(-s, s), s = reset_noise_scale (0.01)
================  ==========================================================
)";

class HumanoidStandup final : public HumanoidBody {
 public:
  explicit HumanoidStandup(const Params& p) : HumanoidBody(p, "HumanoidStandup") {
    // uph_cost_weight is declared (as in Gymnasium) but, as there, not used.
    ctrl_weight_ = p.Float("ctrl_cost_weight");
    impact_weight_ = p.Float("impact_cost_weight");
    impact_range_ = p.Range("impact_cost_range");
    InfoLayout& info = mutable_info();
    position_.AddXY(info);  // no distance_from_origin in HumanoidStandup-v5
    z_distance_from_origin_ = info.AddAtReset("z_distance_from_origin");
    AddTendonInfo(info);
    reward_linup_ = info.Add("reward_linup");
    reward_quadctrl_ = info.Add("reward_quadctrl");
    reward_impact_ = info.Add("reward_impact");
    // Gymnasium's DEFAULT_CAMERA_CONFIG: distance 4, elevation -20, tracking
    // the torso. From the side (azimuth 90) the supine body, whose legs reach
    // about 1.4 m along +x from the torso, and the risen one both fit.
    RenderCamera camera;
    camera.distance = 4.0;
    camera.elevation = -20.0;
    SetCamera(camera);
  }

  void Reset(mjData* d, double*, Rng& rng, double* obs, double* info) const override {
    ResetWithNoise(d, rng, VelocityNoise::kUniform);
    Observe(d, nullptr, obs);
    WritePositionInfo(d, info);
  }

  bool Step(mjData* d, double*, const float* action, const StepOutput& out) const override {
    const mjModel* m = model();
    const bool stable = Advance(d, action);
    Observe(d, nullptr, out.obs);

    const double uph = (d->qpos[2] - 0.0) / m->opt.timestep;
    const double ctrl_cost = ctrl_weight_ * NumpySumSquares(d->ctrl, m->nu);
    const double impact_raw = impact_weight_ * NumpySumSquares(d->cfrc_ext, 6 * m->nbody);
    const double impact_cost = impact_raw < impact_range_.first
                                   ? impact_range_.first
                                   : (impact_raw > impact_range_.second ? impact_range_.second : impact_raw);
    out.reward[0] = uph - ctrl_cost - impact_cost + 1.0;
    out.terminated[0] = false;
    double* info = out.info;
    WritePositionInfo(d, info);
    info[reward_linup_] = uph;
    info[reward_quadctrl_] = -ctrl_cost;
    info[reward_impact_] = -impact_cost;
    return stable;
  }

 private:
  // Writes the fields that reset and step share.
  void WritePositionInfo(const mjData* d, double* info) const {
    position_.Write(d, info);
    info[z_distance_from_origin_] = d->qpos[2] - model()->qpos0[2];
    WriteTendonInfo(d, info);
  }

  double ctrl_weight_, impact_weight_;
  std::pair<double, double> impact_range_;
  XYPositionInfo position_;
  int z_distance_from_origin_, reward_linup_, reward_quadctrl_, reward_impact_;  // info offsets
};

std::vector<ParamSpec> Spec() {
  auto spec = LocomotionParams("humanoidstandup.xml", 1e-2);
  spec.push_back(
      FloatParam("uph_cost_weight", 1.0,
                 "accepted for Gymnasium compatibility; unused, as in HumanoidStandup-v5"));
  spec.push_back(FloatParam("ctrl_cost_weight", 0.1, "weight of the control cost"));
  spec.push_back(FloatParam("impact_cost_weight", 0.5e-6, "weight of the impact (contact) cost"));
  spec.push_back(RangeParam("impact_cost_range", -INFINITY, 10.0, "clip range of the impact cost"));
  HumanoidBody::AddObservationParams(spec);
  return spec;
}

const TaskRegistration kRegistration(RunsOnJolt(SingleAgentTask<HumanoidStandup>(
    "humanoid_standup", "HumanoidStandup", Spec(), kDoc, /*max_episode_steps=*/1000,
    /*reward_threshold=*/std::nullopt)));

}  // namespace
}  // namespace joltgym
