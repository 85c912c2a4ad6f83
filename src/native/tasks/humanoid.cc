// Humanoid: Gymnasium's Humanoid-v5, natively.
//
// obs (348): qpos[2:] (22), qvel (23), cinert[1:] (13 x 10), cvel[1:] (13 x 6),
//            qfrc_actuator[6:] (17), cfrc_ext[1:] (13 x 6); each block can be
//            dropped with its include_*_in_observation flag
// act  (17): abdomen, hips, knees, shoulders, elbows, in [-0.4, 0.4]
// reward   : forward_reward_weight * x_velocity(center of mass) + healthy_reward
//            - ctrl_cost_weight * |ctrl|^2
//            - clip(contact_cost_weight * |cfrc_ext|^2, contact_cost_range)
// info     : x_position, y_position, tendon_length (2), tendon_velocity (2),
//            distance_from_origin (these also on reset), x_velocity, y_velocity,
//            reward_survive, reward_forward, reward_ctrl, reward_contact
// episode  : terminates when torso z leaves healthy_z_range (exclusive);
//            truncated at 1000 steps
#include <cmath>

#include "locomotion.h"

namespace joltgym {
namespace {

class Humanoid final : public LocomotionTask {
 public:
  explicit Humanoid(const Params& p) : LocomotionTask(p) {
    RequireRoot(mjJNT_FREE, "Humanoid");
    const mjModel* m = model();
    forward_weight_ = p.Float("forward_reward_weight");
    ctrl_weight_ = p.Float("ctrl_cost_weight");
    contact_weight_ = p.Float("contact_cost_weight");
    contact_range_ = p.Range("contact_cost_range");
    healthy_reward_ = p.Float("healthy_reward");
    terminate_when_unhealthy_ = p.Bool("terminate_when_unhealthy");
    healthy_z_ = p.Range("healthy_z_range");
    cinert_ = p.Bool("include_cinert_in_observation");
    cvel_ = p.Bool("include_cvel_in_observation");
    qfrc_ = p.Bool("include_qfrc_actuator_in_observation");
    cfrc_ = p.Bool("include_cfrc_ext_in_observation");
    skip_ = exclude_positions_ ? 2 : 0;
    const int bodies = m->nbody - 1;
    const int dim = m->nq - skip_ + m->nv + (cinert_ ? 10 * bodies : 0) +
                    (cvel_ ? 6 * bodies : 0) + (qfrc_ ? m->nv - 6 : 0) +
                    (cfrc_ ? 6 * bodies : 0);
    SetDims(1, dim, m->nu);
    SetActionBoundsFromCtrlRange(0);
    for (int b = 0; b < m->nbody; ++b) total_mass_ += m->body_mass[b];
    mutable_info()
        .Add("x_position", 1, true)
        .Add("y_position", 1, true)
        .Add("tendon_length", m->ntendon, true)
        .Add("tendon_velocity", m->ntendon, true)
        .Add("distance_from_origin", 1, true)
        .Add("x_velocity")
        .Add("y_velocity")
        .Add("reward_survive")
        .Add("reward_forward")
        .Add("reward_ctrl")
        .Add("reward_contact");
  }

  void Reset(mjData* d, double*, Rng& rng, float* obs, double* info) const override {
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
    double ctrl_sq = 0.0;
    for (int i = 0; i < m->nu; ++i) ctrl_sq += d->ctrl[i] * d->ctrl[i];
    const double ctrl_cost = ctrl_weight_ * ctrl_sq;
    double contact_sq = 0.0;
    for (int i = 0; i < 6 * m->nbody; ++i) contact_sq += d->cfrc_ext[i] * d->cfrc_ext[i];
    const double contact_cost =
        std::fmin(std::fmax(contact_weight_ * contact_sq, contact_range_.first), contact_range_.second);
    out.reward[0] = static_cast<float>((forward + survive) - (ctrl_cost + contact_cost));
    out.terminated[0] = !healthy && terminate_when_unhealthy_;
    double* info = WritePositionInfo(d, out.info);
    info[0] = x_velocity;
    info[1] = y_velocity;
    info[2] = survive;
    info[3] = forward;
    info[4] = -ctrl_cost;
    info[5] = -contact_cost;
    return stable;
  }

  void Observe(const mjData* d, const double*, float* obs) const override {
    const mjModel* m = model();
    obs = Put(obs, d->qpos + skip_, m->nq - skip_);
    obs = Put(obs, d->qvel, m->nv);
    if (cinert_) obs = Put(obs, d->cinert + 10, 10 * (m->nbody - 1));
    if (cvel_) obs = Put(obs, d->cvel + 6, 6 * (m->nbody - 1));
    if (qfrc_) obs = Put(obs, d->qfrc_actuator + 6, m->nv - 6);
    if (cfrc_) Put(obs, d->cfrc_ext + 6, 6 * (m->nbody - 1));
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

  // Writes the reset-time fields; returns where the step-only fields start.
  double* WritePositionInfo(const mjData* d, double* info) const {
    const int nt = model()->ntendon;
    *info++ = d->qpos[0];
    *info++ = d->qpos[1];
    for (int i = 0; i < nt; ++i) *info++ = d->ten_length[i];
    for (int i = 0; i < nt; ++i) *info++ = d->ten_velocity[i];
    *info++ = std::sqrt(d->qpos[0] * d->qpos[0] + d->qpos[1] * d->qpos[1]);
    return info;
  }

  double forward_weight_, ctrl_weight_, contact_weight_, healthy_reward_;
  std::pair<double, double> contact_range_, healthy_z_;
  bool terminate_when_unhealthy_, cinert_, cvel_, qfrc_, cfrc_;
  int skip_;
  double total_mass_ = 0.0;
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
  spec.push_back(BoolParam("include_cinert_in_observation", true, "append cinert[1:]"));
  spec.push_back(BoolParam("include_cvel_in_observation", true, "append cvel[1:]"));
  spec.push_back(BoolParam("include_qfrc_actuator_in_observation", true, "append qfrc_actuator[6:]"));
  spec.push_back(BoolParam("include_cfrc_ext_in_observation", true, "append cfrc_ext[1:]"));
  return spec;
}

const TaskRegistration kRegistration({"humanoid", "HumanoidCore", Spec(),
                                      [](const Params& p) { return std::make_shared<Humanoid>(p); }});

}  // namespace
}  // namespace joltgym
