#include "coupled_half_cheetah.h"

#include "../tasks/locomotion.h"

namespace joltgym::mamujoco {
namespace {

// Observation (40): qpos[1:9], qpos[10:18] (each cheetah without its root x),
// qvel (18), the tendon Jacobian's entries of both roots' x and z dofs (dense
// columns 0, 1, 9, 10 of the sparse ten_J row), ten_length, ten_velocity.
// Reward: forward_weight * (x_velocity1 + x_velocity2) / 2 - (ctrl1 + ctrl2) / 2,
// ctrl_k = ctrl_weight * sum(action_k**2) of each cheetah's six actions. Never
// terminates; truncated by the owner (1000 steps).
class CoupledHalfCheetah final : public LocomotionTask {
 public:
  explicit CoupledHalfCheetah(const Params& p) : LocomotionTask(p) {
    const mjModel* m = model();
    if (m->nq != 18 || m->nv != 18 || m->nu != 12 || m->ntendon != 1) {
      throw BadValue("CoupledHalfCheetah model should have 18 qpos, 18 qvel, 12 actuators and 1 tendon; got " +
                     std::to_string(m->nq) + ", " + std::to_string(m->nv) + ", " + std::to_string(m->nu) +
                     " and " + std::to_string(m->ntendon));
    }
    forward_weight_ = p.Float("forward_reward_weight");
    ctrl_weight_ = p.Float("ctrl_cost_weight");
    SetDims(1, 40, m->nu);
    SetActionBoundsFromCtrlRange(0);
    InfoLayout& info = mutable_info();
    x_position1_ = info.Add("x_position1");
    x_position2_ = info.Add("x_position2");
    x_velocity1_ = info.Add("x_velocity1");
    x_velocity2_ = info.Add("x_velocity2");
    reward_run_ = info.Add("reward_run");
    reward_ctrl1_ = info.Add("reward_ctrl1");
    reward_ctrl2_ = info.Add("reward_ctrl2");
  }

  void Reset(mjData* d, double*, Rng& rng, float* obs, double*) const override {
    ResetWithNoise(d, rng, VelocityNoise::kNormal);
    Observe(d, nullptr, obs);
  }

  bool Step(mjData* d, double*, const float* action, const StepOutput& out) const override {
    const int half = model()->nq / 2;
    const double x1 = d->qpos[0], x2 = d->qpos[half];
    const bool stable = Advance(d, action);
    const double v1 = (d->qpos[0] - x1) / dt(), v2 = (d->qpos[half] - x2) / dt();
    double sq1 = 0.0, sq2 = 0.0;
    for (int i = 0; i < 6; ++i) {
      sq1 += static_cast<double>(action[i]) * action[i];
      sq2 += static_cast<double>(action[6 + i]) * action[6 + i];
    }
    const double c1 = ctrl_weight_ * sq1, c2 = ctrl_weight_ * sq2;
    const double forward = forward_weight_ * (v1 + v2) / 2.0;
    out.reward[0] = static_cast<float>(forward - (c1 + c2) / 2.0);
    out.terminated[0] = false;
    double* info = out.info;
    info[x_position1_] = d->qpos[0];
    info[x_position2_] = d->qpos[half];
    info[x_velocity1_] = v1;
    info[x_velocity2_] = v2;
    info[reward_run_] = forward;
    info[reward_ctrl1_] = c1;
    info[reward_ctrl2_] = c2;
    Observe(d, nullptr, out.obs);
    return stable;
  }

  void Observe(const mjData* d, const double*, float* obs) const override {
    const mjModel* m = model();
    obs = Put(obs, d->qpos + 1, 8);
    obs = Put(obs, d->qpos + 10, 8);
    obs = Put(obs, d->qvel, m->nv);
    for (int dof : {0, 1, 9, 10}) {
      double value = 0.0;
      for (int k = m->ten_J_rowadr[0]; k < m->ten_J_rowadr[0] + m->ten_J_rownnz[0]; ++k) {
        if (m->ten_J_colind[k] == dof) value = d->ten_J[k];
      }
      *obs++ = static_cast<float>(value);
    }
    *obs++ = static_cast<float>(d->ten_length[0]);
    *obs++ = static_cast<float>(d->ten_velocity[0]);
  }

 private:
  double forward_weight_, ctrl_weight_;
  int x_position1_, x_position2_, x_velocity1_, x_velocity2_, reward_run_, reward_ctrl1_, reward_ctrl2_;
};

}  // namespace

std::vector<ParamSpec> CoupledHalfCheetahParams() {
  auto spec = LocomotionParams("coupled_half_cheetah.xml", 0.1);
  spec.push_back(FloatParam("forward_reward_weight", 1.0, "weight of the mean forward velocity"));
  spec.push_back(FloatParam("ctrl_cost_weight", 0.1, "weight of each cheetah's control cost"));
  return spec;
}

std::shared_ptr<const Task> MakeCoupledHalfCheetah(const Params& params) {
  return std::make_shared<CoupledHalfCheetah>(params);
}

}  // namespace joltgym::mamujoco
