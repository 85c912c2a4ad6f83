// The planar walkers, Hopper and Walker2d: Gymnasium's Hopper-v5 and
// Walker2d-v5 share their step, observation, info and camera, and differ only
// in their model, their defaults and Hopper's extra health check on the whole
// state (healthy_state_range), which Hopper adds by overriding IsHealthy().
//
// Quirks kept from Gymnasium: health is judged on the unclipped state (only
// the observed qvel is clipped), the health ranges are open intervals and a
// NaN counts as unhealthy; the survive reward is `is_healthy * healthy_reward`,
// so 0 * inf is NaN as there. The model must start with the planar root
// rootx (slide), rootz (slide), rooty (hinge) on its first body.
#pragma once

#include <string>
#include <utility>

#include "locomotion.h"

namespace joltgym {

class PlanarWalker : public LocomotionTask {
 public:
  void Reset(mjData* d, double*, Rng& rng, double* obs, double* info) const override {
    ResetWithNoise(d, rng, VelocityNoise::kUniform);
    Observe(d, nullptr, obs);
    WritePositionInfo(d, info);
  }

  bool Step(mjData* d, double*, const float* action, const StepOutput& out) const override {
    const double x_before = d->qpos[0];
    const bool stable = Advance(d, action);
    const double x_velocity = (d->qpos[0] - x_before) / dt();
    Observe(d, nullptr, out.obs);

    const bool healthy = IsHealthy(d);
    const double forward = forward_weight_ * x_velocity;
    const double survive = (healthy ? 1.0 : 0.0) * healthy_reward_;
    const double ctrl_cost = Float32ControlCost(ctrl_weight_, action, act_dim());
    out.reward[0] = (forward + survive) - ctrl_cost;
    out.terminated[0] = !healthy && terminate_when_unhealthy_;
    double* info = out.info;
    WritePositionInfo(d, info);
    info[x_velocity_] = x_velocity;
    info[reward_forward_] = forward;
    info[reward_ctrl_] = -ctrl_cost;
    info[reward_survive_] = survive;
    return stable;
  }

  // qpos[1:] (qpos[0:] with positions), then qvel clipped to [-10, 10].
  void Observe(const mjData* d, const double*, double* obs) const override {
    const mjModel* m = model();
    obs = Put(obs, d->qpos + skip_, m->nq - skip_);
    for (int i = 0; i < m->nv; ++i) *obs++ = NpClip(d->qvel[i], 10.0);
  }

 protected:
  // Loads the model, checks its planar root and reads the keyword arguments
  // both walkers share; `robot` names the task in the errors.
  PlanarWalker(const Params& p, const char* robot) : LocomotionTask(p) {
    RequireRoot(mjJNT_SLIDE, robot);
    RequirePlanarRoot(robot);
    const mjModel* m = model();
    forward_weight_ = p.Float("forward_reward_weight");
    ctrl_weight_ = p.Float("ctrl_cost_weight");
    healthy_reward_ = p.Float("healthy_reward");
    terminate_when_unhealthy_ = p.Bool("terminate_when_unhealthy");
    healthy_z_ = p.Range("healthy_z_range");
    healthy_angle_ = p.Range("healthy_angle_range");
    skip_ = exclude_positions_ ? 1 : 0;
    SetDims(1, m->nq - skip_ + m->nv, m->nu);
    SetActionBoundsFromCtrlRange(0);
    InfoLayout& info = mutable_info();
    x_position_ = info.AddAtReset("x_position");
    z_distance_from_origin_ = info.AddAtReset("z_distance_from_origin");
    x_velocity_ = info.Add("x_velocity");
    reward_forward_ = info.Add("reward_forward");
    reward_ctrl_ = info.Add("reward_ctrl");
    info.SetScalar(reward_ctrl_, InfoScalar::kFloat32);  // a cost of the float32 action
    reward_survive_ = info.Add("reward_survive");
    RenderCamera camera;  // side view following the torso (+x to the right), feet in view
    camera.distance = 3.5;
    camera.elevation = -20.0;
    camera.azimuth = 90.0;
    SetCamera(camera);
  }

  // Torso height (rootz, qpos[1]) inside healthy_z_range and pitch (rooty,
  // qpos[2]) inside healthy_angle_range, on the unclipped state.
  virtual bool IsHealthy(const mjData* d) const {
    return Inside(d->qpos[1], healthy_z_) && Inside(d->qpos[2], healthy_angle_);
  }

  // `v` in the open interval `range` (false for a NaN).
  static bool Inside(double v, const std::pair<double, double>& range) {
    return range.first < v && v < range.second;
  }

 protected:
  // The info offset of reward_survive (its Python type differs: Hopper-v5's
  // is a float, Walker2d-v5's a numpy.float64).
  int reward_survive_offset() const { return reward_survive_; }

 private:
  // The task reads qpos[0] (x), qpos[1] (height) and qpos[2] (pitch).
  void RequirePlanarRoot(const char* robot) const {
    const mjModel* m = model();
    const mjtJoint kRoot[3] = {mjJNT_SLIDE, mjJNT_SLIDE, mjJNT_HINGE};
    bool ok = m->njnt >= 3;
    for (int j = 0; ok && j < 3; ++j) ok = m->jnt_type[j] == kRoot[j] && m->jnt_bodyid[j] == 1;
    if (ok) return;
    static const char* const kNames[] = {"free", "ball", "slide", "hinge"};
    std::string found;
    for (int j = 0; j < 3 && j < m->njnt; ++j) {
      const int type = m->jnt_type[j];
      found += std::string(j ? ", " : "") + (type >= 0 && type < 4 ? kNames[type] : "unknown") +
               " (body " + std::to_string(m->jnt_bodyid[j]) + ")";
    }
    throw BadValue(std::string(robot) +
                   " model should start with a planar root on its first body: joints slide (x), "
                   "slide (z), hinge (pitch); got " +
                   (found.empty() ? std::string("no joints") : found));
  }

  void WritePositionInfo(const mjData* d, double* info) const {
    info[x_position_] = d->qpos[0];
    info[z_distance_from_origin_] = d->qpos[1] - model()->qpos0[1];
  }

  double forward_weight_, ctrl_weight_, healthy_reward_;
  bool terminate_when_unhealthy_;
  std::pair<double, double> healthy_z_, healthy_angle_;
  int skip_;
  int x_position_, z_distance_from_origin_, x_velocity_, reward_forward_, reward_ctrl_,
      reward_survive_;  // info offsets
};

}  // namespace joltgym
