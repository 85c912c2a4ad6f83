// Reacher: Gymnasium's Reacher-v5, natively.
//
// The arm is every joint before the target's two slides (2 in reacher.xml);
// the observation's blocks follow the model's arm size. Reset keeps
// Gymnasium's draw order (qpos noise, then the target's rejection sampling,
// then qvel noise), so one seed gives the same law; its bounds are fixed, as
// Reacher-v5 has no reset_noise_scale.
#include <cmath>

#include "locomotion.h"

namespace joltgym {
namespace {

constexpr const char* kDoc = R"(Reacher, natively: Gymnasium's ``Reacher-v5`` step for step.

================  ==========================================================
Action (2)        torques on joint0 (shoulder) and joint1 (elbow), in [-1, 1]
Observation (10)  cos(qpos[:2]), sin(qpos[:2]) (arm angles), qpos[2:] (target
                  x, y), qvel[:2] (arm), (fingertip - target)[:2]
Reward            ``reward_dist`` = -reward_dist_weight * |fingertip - target|
                  (3D), ``reward_ctrl`` = -reward_control_weight * sum(action**2)
Info              reward_dist, reward_ctrl (nothing on reset)
Termination       never; truncated after 50 steps
Reset noise       qpos + U(-0.1, 0.1); then target (x, y) ~ U(-0.2, 0.2)**2,
                  redrawn until |target| < 0.2; arm qvel + U(-0.005, 0.005),
                  target qvel 0 (fixed bounds: no reset_noise_scale)
================  ==========================================================
)";

class Reacher final : public LocomotionTask {
 public:
  explicit Reacher(const Params& p) : LocomotionTask(p) {
    RequireRoot(mjJNT_HINGE, "Reacher");
    const mjModel* m = model();
    fingertip_ = RequireId(m, mjOBJ_BODY, "fingertip");
    target_ = RequireId(m, mjOBJ_BODY, "target");
    RequireLayout(m);
    arm_ = m->njnt - 2;
    dist_weight_ = p.Float("reward_dist_weight");
    ctrl_weight_ = p.Float("reward_control_weight");
    SetDims(1, 2 * arm_ + (m->nq - arm_) + arm_ + 2, m->nu);
    SetActionBoundsFromCtrlRange(0);
    InfoLayout& info = mutable_info();
    reward_dist_ = info.Add("reward_dist");
    reward_ctrl_ = info.Add("reward_ctrl");
    info.SetScalar(reward_ctrl_, InfoScalar::kFloat32);  // a cost of the float32 action
    // Gymnasium's fixed view of the arena's centre, closer and steeper: the
    // whole 0.6 x 0.6 arena, the arm and the target in the frame.
    RenderCamera camera;
    camera.target = CameraTarget::kFixed;
    camera.distance = 1.0;
    camera.elevation = -65.0;
    camera.azimuth = 90.0;
    SetCamera(camera);
  }

  void Reset(mjData* d, double*, Rng& rng, double* obs, double*) const override {
    const mjModel* m = model();
    mj_resetData(m, d);
    for (int i = 0; i < m->nq; ++i) d->qpos[i] = rng.Uniform(-0.1, 0.1) + m->qpos0[i];
    double gx, gy;
    bool near = false;
    do {
      gx = rng.Uniform(-0.2, 0.2);
      gy = rng.Uniform(-0.2, 0.2);
      const double goal[2] = {gx, gy};
      near = NumpyNorm(goal, 2) < 0.2;  // np.linalg.norm(goal)
    } while (!near);
    d->qpos[m->nq - 2] = gx;
    d->qpos[m->nq - 1] = gy;
    for (int i = 0; i < m->nv; ++i) d->qvel[i] = rng.Uniform(-0.005, 0.005);
    d->qvel[m->nv - 2] = 0.0;
    d->qvel[m->nv - 1] = 0.0;
    mj_forward(m, d);
    Observe(d, nullptr, obs);
  }

  bool Step(mjData* d, double*, const float* action, const StepOutput& out) const override {
    const bool stable = Advance(d, action);
    Observe(d, nullptr, out.obs);
    const double dist = -Distance(d->xpos + 3 * fingertip_, d->xpos + 3 * target_) * dist_weight_;
    const double ctrl = -Float32ControlCost(ctrl_weight_, action, act_dim());
    out.reward[0] = dist + ctrl;
    out.terminated[0] = false;
    double* info = out.info;
    info[reward_dist_] = dist;
    info[reward_ctrl_] = ctrl;
    return stable;
  }

  void Observe(const mjData* d, const double*, double* obs) const override {
    const mjModel* m = model();
    for (int i = 0; i < arm_; ++i) {
      obs[i] = std::cos(d->qpos[i]);
      obs[arm_ + i] = std::sin(d->qpos[i]);
    }
    obs = Put(obs + 2 * arm_, d->qpos + arm_, m->nq - arm_);
    obs = Put(obs, d->qvel, arm_);
    const mjtNum* tip = d->xpos + 3 * fingertip_;
    const mjtNum* target = d->xpos + 3 * target_;
    obs[0] = tip[0] - target[0];
    obs[1] = tip[1] - target[1];
  }

 private:
  // The arm's hinges first, then exactly two slides moving the target body:
  // reset writes the last two qpos/qvel, the observation takes cos/sin of the
  // arm's angles, and every joint being 1-dof keeps qpos and qvel aligned.
  void RequireLayout(const mjModel* m) const {
    const int n = m->njnt;
    bool ok = n >= 3;
    for (int j = 0; ok && j < n; ++j) {
      const bool target_slide = j >= n - 2;
      ok = m->jnt_type[j] == (target_slide ? mjJNT_SLIDE : mjJNT_HINGE) &&
           (m->jnt_bodyid[j] == target_) == target_slide;
    }
    if (!ok) {
      throw BadValue(
          "Reacher model should have only hinge joints (the arm) followed by exactly two slide "
          "joints of body 'target' (its x, y); got " +
          std::to_string(n) + " joint(s), nq=" + std::to_string(m->nq) +
          ", nv=" + std::to_string(m->nv));
    }
  }

  int fingertip_, target_;
  int arm_;
  double dist_weight_, ctrl_weight_;
  int reward_dist_, reward_ctrl_;  // info offsets
};

std::vector<ParamSpec> Spec() {
  auto spec = ModelParams("reacher.xml", 2);
  spec.push_back(FloatParam("reward_dist_weight", 1.0, "weight of the fingertip-target distance"));
  // Gymnasium's docs say 0.1; its constructor's default is 1.
  spec.push_back(FloatParam("reward_control_weight", 1.0, "weight of the control cost"));
  return spec;
}

const TaskRegistration kRegistration(SingleAgentTask<Reacher>("reacher", "Reacher", Spec(), kDoc,
                                                              /*max_episode_steps=*/50,
                                                              /*reward_threshold=*/-3.75));

}  // namespace
}  // namespace joltgym
