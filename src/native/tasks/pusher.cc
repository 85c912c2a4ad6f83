// Pusher: Gymnasium's Pusher-v5, natively.
//
// The arm is every joint before the object's and the goal's two slides each
// (7 in pusher_v5.xml); the observation's blocks follow the model's arm size.
// Each body's slides come y first, then x, so reset writes the object's
// sampled (y, x) pair in that order, as Gymnasium does. Reset keeps
// Gymnasium's draw order (the object's rejection sampling, then qvel noise);
// its bounds are fixed, as Pusher-v5 has no reset_noise_scale.
#include <cmath>

#include "locomotion.h"

namespace joltgym {
namespace {

constexpr const char* kDoc = R"(Pusher, natively: Gymnasium's ``Pusher-v5`` step for step.

================  ==========================================================
Action (7)        torques on the shoulder pan/lift, upper-arm roll, elbow flex,
                  forearm roll, wrist flex/roll joints, in [-2, 2]
Observation (23)  qpos[:7], qvel[:7] (arm joints), then the world positions of
                  the bodies tips_arm, object and goal (3 each)
Reward            ``reward_dist`` = -reward_dist_weight * |object - goal|,
                  ``reward_ctrl`` = -reward_control_weight * sum(action**2),
                  ``reward_near`` = -reward_near_weight * |object - tips_arm|
Info              reward_dist, reward_ctrl, reward_near (nothing on reset)
Termination       never; truncated after 100 steps
Reset noise       arm at qpos0; object (slide y, slide x) ~ (U(-0.3, 0),
                  U(-0.2, 0.2)), redrawn until its norm > 0.17; goal at 0; arm
                  qvel + U(-0.005, 0.005), object and goal qvel 0 (fixed bounds:
                  no reset_noise_scale)
================  ==========================================================
)";

class Pusher final : public LocomotionTask {
 public:
  explicit Pusher(const Params& p) : LocomotionTask(p) {
    RequireRoot(mjJNT_HINGE, "Pusher");
    const mjModel* m = model();
    tips_ = RequireId(m, mjOBJ_BODY, "tips_arm");
    object_ = RequireId(m, mjOBJ_BODY, "object");
    goal_ = RequireId(m, mjOBJ_BODY, "goal");
    RequireLayout(m);
    arm_ = m->njnt - 4;
    near_weight_ = p.Float("reward_near_weight");
    dist_weight_ = p.Float("reward_dist_weight");
    ctrl_weight_ = p.Float("reward_control_weight");
    SetDims(1, 2 * arm_ + 9, m->nu);
    SetActionBoundsFromCtrlRange(0);
    InfoLayout& info = mutable_info();
    reward_dist_ = info.Add("reward_dist");
    reward_ctrl_ = info.Add("reward_ctrl");
    info.SetScalar(reward_ctrl_, InfoScalar::kFloat32);  // a cost of the float32 action
    reward_near_ = info.Add("reward_near");
    // Gymnasium's fixed view (azimuth 90), closer, steeper (the object shows
    // in front of the arm) and centred between the arm's base (y = -0.6) and
    // the table: the table, the object, the goal and the arm over its whole
    // pan range stay in the frame.
    RenderCamera camera;
    camera.target = CameraTarget::kFixed;
    camera.distance = 3.0;
    camera.elevation = -55.0;
    camera.azimuth = 90.0;
    camera.lookat[0] = 0.15;
    camera.lookat[1] = -0.45;
    camera.lookat[2] = -0.3;
    SetCamera(camera);
  }

  void Reset(mjData* d, double*, Rng& rng, double* obs, double*) const override {
    const mjModel* m = model();
    mj_resetData(m, d);  // qpos <- qpos0: the arm's start, unperturbed
    double c0, c1;
    bool far = false;
    do {
      c0 = rng.Uniform(-0.3, 0.0);
      c1 = rng.Uniform(-0.2, 0.2);
      const double offset[2] = {c0, c1};  // np.linalg.norm(cylinder_pos - goal_pos), goal at 0
      far = NumpyNorm(offset, 2) > 0.17;
    } while (!far);
    mjtNum* slides = d->qpos + m->nq - 4;  // obj_slidey, obj_slidex, goal_slidey, goal_slidex
    slides[0] = c0;
    slides[1] = c1;
    slides[2] = 0.0;
    slides[3] = 0.0;
    for (int i = 0; i < m->nv; ++i) d->qvel[i] = rng.Uniform(-0.005, 0.005);
    for (int i = m->nv - 4; i < m->nv; ++i) d->qvel[i] = 0.0;
    mj_forward(m, d);
    Observe(d, nullptr, obs);
  }

  bool Step(mjData* d, double*, const float* action, const StepOutput& out) const override {
    const bool stable = Advance(d, action);
    Observe(d, nullptr, out.obs);
    const mjtNum* object = d->xpos + 3 * object_;
    const double near = -Distance(object, d->xpos + 3 * tips_) * near_weight_;
    const double dist = -Distance(object, d->xpos + 3 * goal_) * dist_weight_;
    const double ctrl = -Float32ControlCost(ctrl_weight_, action, act_dim());
    out.reward[0] = dist + ctrl + near;
    out.terminated[0] = false;
    double* info = out.info;
    info[reward_dist_] = dist;
    info[reward_ctrl_] = ctrl;
    info[reward_near_] = near;
    return stable;
  }

  void Observe(const mjData* d, const double*, double* obs) const override {
    obs = Put(obs, d->qpos, arm_);
    obs = Put(obs, d->qvel, arm_);
    obs = Put(obs, d->xpos + 3 * tips_, 3);
    obs = Put(obs, d->xpos + 3 * object_, 3);
    Put(obs, d->xpos + 3 * goal_, 3);
  }

 private:
  // The arm's 1-dof joints first, then two slides of body 'object' and two of
  // body 'goal', last: reset writes the last four qpos/qvel, and 1-dof joints
  // keep qpos and qvel aligned for the arm's block of the observation.
  void RequireLayout(const mjModel* m) const {
    const int n = m->njnt;
    bool ok = n >= 5;
    for (int j = 0; ok && j < n; ++j) {
      const int type = m->jnt_type[j];
      const int body = m->jnt_bodyid[j];
      if (j < n - 4) {
        ok = (type == mjJNT_HINGE || type == mjJNT_SLIDE) && body != object_ && body != goal_;
      } else {
        ok = type == mjJNT_SLIDE && body == (j < n - 2 ? object_ : goal_);
      }
    }
    if (!ok) {
      throw BadValue(
          "Pusher model should have 1-dof arm joints followed by exactly two slide joints of body "
          "'object' and two of body 'goal', last; got " +
          std::to_string(n) + " joint(s), nq=" + std::to_string(m->nq) +
          ", nv=" + std::to_string(m->nv));
    }
  }

  int tips_, object_, goal_;
  int arm_;
  double near_weight_, dist_weight_, ctrl_weight_;
  int reward_dist_, reward_ctrl_, reward_near_;  // info offsets
};

std::vector<ParamSpec> Spec() {
  auto spec = ModelParams("pusher_v5.xml", 5);
  spec.push_back(FloatParam("reward_near_weight", 0.5, "weight of the tips_arm-object distance"));
  spec.push_back(FloatParam("reward_dist_weight", 1.0, "weight of the object-goal distance"));
  spec.push_back(FloatParam("reward_control_weight", 0.1, "weight of the control cost"));
  return spec;
}

const TaskRegistration kRegistration(SingleAgentTask<Pusher>("pusher", "Pusher", Spec(), kDoc,
                                                             /*max_episode_steps=*/100,
                                                             /*reward_threshold=*/0.0));

}  // namespace
}  // namespace joltgym
