// InvertedDoublePendulum: Gymnasium's InvertedDoublePendulum-v5, natively.
//
// Quirks kept from Gymnasium: the tip is site 0 and its height is what
// Gymnasium calls y; the observed qvel and qfrc_constraint[0] are clipped like
// np.clip (NaN stays NaN). Gymnasium's module-level DEFAULT_CAMERA_CONFIG is
// never used (the constructor's default_camera_config is None).
#include <cmath>
#include <string>
#include <vector>

#include "locomotion.h"

namespace joltgym {
namespace {

constexpr const char* kDoc =
    R"(InvertedDoublePendulum, natively: Gymnasium's ``InvertedDoublePendulum-v5`` step for step.

================  ==========================================================
Action (1)        force on the cart (motor ``slide``, gear 500), in [-1, 1]
Observation (9)   cart x, sin and cos of the two pole angles (qpos[1:]),
                  qvel (3) clipped to [-10, 10], the cart's
                  qfrc_constraint[0] clipped to [-10, 10]
Reward            ``reward_survive`` = healthy_reward (10) while the tip is
                  above height 1, 0 on the terminating step,
                  ``distance_penalty`` = -(0.01 * tip_x**2 + (tip_z - 2)**2),
                  ``velocity_penalty`` = -(1e-3 * qvel[1]**2 + 5e-3 * qvel[2]**2)
Info              reward_survive, distance_penalty, velocity_penalty
Termination       tip height (site 0's z) <= 1; truncated after 1000 steps
Reset noise       qpos + U(-s, s), qvel + s * N(0, 1), s = reset_noise_scale (0.1)
================  ==========================================================
)";

// Observed velocities and constraint force are clipped to +-kClip.
constexpr double kClip = 10.0;
// Tip heights at or below this end the episode (fixed in Gymnasium's v5).
constexpr double kMinTipHeight = 1.0;

class InvertedDoublePendulum final : public LocomotionTask {
 public:
  explicit InvertedDoublePendulum(const Params& p) : LocomotionTask(p) {
    RequireRoot(mjJNT_SLIDE, "InvertedDoublePendulum");
    const mjModel* m = model();
    if (m->nv < 3) {
      throw BadValue(
          "InvertedDoublePendulum model should have the cart and two pole hinges as its first "
          "three degrees of freedom (the velocity penalty reads qvel[1] and qvel[2]); got nv = " +
          std::to_string(m->nv));
    }
    if (m->nsite < 1) {
      throw BadValue(
          "InvertedDoublePendulum model should have a site (site 0 marks the tip of the second "
          "pole); got none");
    }
    healthy_reward_ = p.Float("healthy_reward");
    SetDims(1, 1 + 2 * (m->nq - 1) + m->nv + 1, m->nu);
    SetActionBoundsFromCtrlRange(0);
    InfoLayout& info = mutable_info();
    reward_survive_ = info.Add("reward_survive");
    info.SetScalar(reward_survive_, InfoScalar::kFloat);  // healthy_reward * int(not terminated)
    distance_penalty_ = info.Add("distance_penalty");
    velocity_penalty_ = info.Add("velocity_penalty");
    // A side view of the whole rail (x in [-1, 1]) and both upright poles.
    RenderCamera camera;
    camera.target = CameraTarget::kFixed;
    camera.lookat[2] = 0.55;
    camera.distance = 4.5;
    camera.elevation = -10.0;
    camera.azimuth = 90.0;
    SetCamera(camera);
  }

  void Reset(mjData* d, double*, Rng& rng, double* obs, double*) const override {
    ResetWithNoise(d, rng, VelocityNoise::kNormal);
    Observe(d, nullptr, obs);
  }

  bool Step(mjData* d, double*, const float* action, const StepOutput& out) const override {
    const bool stable = Advance(d, action);
    const double x = d->site_xpos[0];
    const double y = d->site_xpos[2];  // Gymnasium calls the tip's height y
    Observe(d, nullptr, out.obs);
    const bool terminated = y <= kMinTipHeight;
    const double v1 = d->qvel[1], v2 = d->qvel[2];
    // Gymnasium squares with NumPy's scalar `**`, i.e. libm's pow.
    const double distance = 0.01 * NumpyScalarSquare(x) + NumpyScalarSquare(y - 2.0);
    const double velocity = 1e-3 * NumpyScalarSquare(v1) + 5e-3 * NumpyScalarSquare(v2);
    const double survive = healthy_reward_ * (terminated ? 0.0 : 1.0);
    out.reward[0] = survive - distance - velocity;
    out.terminated[0] = terminated;
    double* info = out.info;
    info[reward_survive_] = survive;
    info[distance_penalty_] = -distance;
    info[velocity_penalty_] = -velocity;
    return stable;
  }

  void Observe(const mjData* d, const double*, double* obs) const override {
    const mjModel* m = model();
    *obs++ = d->qpos[0];
    for (int i = 1; i < m->nq; ++i) *obs++ = std::sin(d->qpos[i]);
    for (int i = 1; i < m->nq; ++i) *obs++ = std::cos(d->qpos[i]);
    for (int i = 0; i < m->nv; ++i) *obs++ = NpClip(d->qvel[i], kClip);
    *obs = NpClip(d->qfrc_constraint[0], kClip);
  }

 private:
  double healthy_reward_;
  int reward_survive_, distance_penalty_, velocity_penalty_;  // info offsets
};

std::vector<ParamSpec> Spec() {
  auto spec = ModelParams("inverted_double_pendulum.xml", 5);
  spec.push_back(
      FloatParam("healthy_reward", 10.0, "reward per step while the tip is above height 1"));
  spec.push_back(FloatParam("reset_noise_scale", 0.1, "scale of the reset noise"));
  return spec;
}

const TaskRegistration kRegistration(RunsOnJolt(SingleAgentTask<InvertedDoublePendulum>(
    "inverted_double_pendulum", "InvertedDoublePendulum", Spec(), kDoc,
    /*max_episode_steps=*/1000, /*reward_threshold=*/9100.0)));

}  // namespace
}  // namespace joltgym
