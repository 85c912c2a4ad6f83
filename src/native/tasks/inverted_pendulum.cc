// InvertedPendulum: Gymnasium's InvertedPendulum-v5, natively.
//
// Gymnasium's reward is the int `not terminated`; it is returned here as the
// float 1 or 0, which equals it exactly.
#include <cmath>
#include <string>
#include <vector>

#include "locomotion.h"

namespace joltgym {
namespace {

constexpr const char* kDoc =
    R"(InvertedPendulum, natively: Gymnasium's ``InvertedPendulum-v5`` step for step.

================  ==========================================================
Action (1)        force on the cart (motor ``slide``, gear 100), in [-3, 3]
Observation (4)   qpos (cart x, pole angle), qvel (2)
Reward            ``reward_survive`` = 1 while the pole is upright, 0 on the
                  terminating step
Info              reward_survive
Termination       state not finite, or |pole angle| > 0.2 rad; truncated after
                  1000 steps
Reset noise       qpos + U(-s, s), qvel + U(-s, s), s = reset_noise_scale (0.01)
================  ==========================================================
)";

// |pole angle| above which the pole has fallen (fixed in Gymnasium's v5).
constexpr double kMaxAngle = 0.2;

class InvertedPendulum final : public LocomotionTask {
 public:
  explicit InvertedPendulum(const Params& p) : LocomotionTask(p) {
    RequireRoot(mjJNT_SLIDE, "InvertedPendulum");
    const mjModel* m = model();
    if (m->nq < 2) {
      throw BadValue(
          "InvertedPendulum model should have the pole's angle as its second coordinate "
          "(nq >= 2); got nq = " +
          std::to_string(m->nq));
    }
    SetDims(1, m->nq + m->nv, m->nu);
    SetActionBoundsFromCtrlRange(0);
    reward_survive_ = mutable_info().AddInteger("reward_survive");  // int(not terminated), as v5
    // A side view of the whole rail (x in [-1, 1]) and the upright pole.
    RenderCamera camera;
    camera.target = CameraTarget::kFixed;
    camera.lookat[2] = 0.3;
    camera.distance = 3.3;
    camera.elevation = -10.0;
    camera.azimuth = 90.0;
    SetCamera(camera);
  }

  void Reset(mjData* d, double*, Rng& rng, double* obs, double*) const override {
    ResetWithNoise(d, rng, VelocityNoise::kUniform);
    Observe(d, nullptr, obs);
  }

  bool Step(mjData* d, double*, const float* action, const StepOutput& out) const override {
    const bool stable = Advance(d, action);
    Observe(d, nullptr, out.obs);
    // Gymnasium tests its float64 observation, i.e. qpos and qvel.
    const bool terminated = !StateIsFinite(d) || std::fabs(d->qpos[1]) > kMaxAngle;
    const double survive = terminated ? 0.0 : 1.0;
    out.reward[0] = survive;
    out.terminated[0] = terminated;
    out.info[reward_survive_] = survive;
    return stable;
  }

  void Observe(const mjData* d, const double*, double* obs) const override {
    const mjModel* m = model();
    obs = Put(obs, d->qpos, m->nq);
    Put(obs, d->qvel, m->nv);
  }

 private:
  int reward_survive_;  // info offset
};

std::vector<ParamSpec> Spec() {
  auto spec = ModelParams("inverted_pendulum.xml", 2);
  spec.push_back(FloatParam("reset_noise_scale", 0.01, "scale of the reset noise"));
  return spec;
}

const TaskRegistration kRegistration(RunsOnJolt(SingleAgentTask<InvertedPendulum>(
    "inverted_pendulum", "InvertedPendulum", Spec(), kDoc, /*max_episode_steps=*/1000,
    /*reward_threshold=*/950.0)));

}  // namespace
}  // namespace joltgym
