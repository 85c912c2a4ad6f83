#include "mamujoco_task.h"

#include <algorithm>

#include "../errors.h"

namespace joltgym::mamujoco {

namespace {

int FieldOffset(const Task& robot, const std::string& name, const std::string& recipe) {
  for (const InfoField& f : robot.info_layout().fields()) {
    if (f.name == name && f.size == 1) return f.offset;
  }
  throw BadValue("MaMuJoCo's reward of '" + recipe + "' needs the info term '" + name +
                 "', which this robot's info does not have");
}

}  // namespace

MaMuJoCoTask::MaMuJoCoTask(std::shared_ptr<const Task> robot, ObservationPlan plan,
                           const RewardRecipe& reward)
    : robot_(std::move(robot)), plan_(std::move(plan)) {
  const Task& r = *robot_;
  if (r.num_agents() != 1) {
    throw BadValue("MaMuJoCo factorizes a single-agent robot; this task has " +
                   std::to_string(r.num_agents()) + " agents");
  }
  if (plan_.size() == 0) throw BadValue("the observation plan should have at least one entry, got none");
  SetModel(r.shared_model());
  SetDims(1, plan_.size(), r.act_dim());
  robot_scratch_ = r.scratch_size();
  SetScratchSize(robot_scratch_ + r.obs_dim());
  SetFrameSkip(r.frame_skip());
  SetEpisodeLimit(r.episode_limit());
  SetCamera(r.camera());
  SetActionBoundsFromCtrlRange(0);
  InfoLayout& info = mutable_info();
  for (const InfoField& f : r.info_layout().fields()) {
    switch (f.kind) {
      case InfoKind::kReal:
        info.SetScalar(info.Add(f.name, f.size, f.at_reset), f.scalar);
        break;
      case InfoKind::kInteger:
        info.AddInteger(f.name, f.at_reset);
        break;
      case InfoKind::kLabel:
        info.AddLabel(f.name, f.labels, f.at_reset);
        break;
    }
  }
  // The reward's formula (Gymnasium -v5's order of operations) and its terms.
  struct Spec {
    const char* robot;
    Formula formula;
    const char* terms[3];
    const char* ctrl[2];
  };
  static const Spec kSpecs[] = {
      {"half_cheetah", Formula::kForward, {"reward_forward"}, {"reward_ctrl"}},
      {"swimmer", Formula::kForward, {"reward_forward"}, {"reward_ctrl"}},
      {"hopper", Formula::kHealthyForward, {"reward_forward", "reward_survive"}, {"reward_ctrl"}},
      {"walker2d", Formula::kHealthyForward, {"reward_forward", "reward_survive"}, {"reward_ctrl"}},
      {"ant", Formula::kContactForward, {"reward_forward", "reward_survive", "reward_contact"}, {"reward_ctrl"}},
      {"humanoid", Formula::kContactForward, {"reward_forward", "reward_survive", "reward_contact"},
       {"reward_ctrl"}},
      {"humanoid_standup", Formula::kStandup, {"reward_linup", "reward_impact"}, {"reward_quadctrl"}},
      {"reacher", Formula::kReacher, {"reward_dist"}, {"reward_ctrl"}},
      {"pusher", Formula::kPusher, {"reward_dist", "reward_near"}, {"reward_ctrl"}},
      {"coupled_half_cheetah", Formula::kCoupled, {"reward_run"}, {"reward_ctrl1", "reward_ctrl2"}},
      {"inverted_pendulum", Formula::kPendulum, {"reward_survive"}, {}},
      {"inverted_double_pendulum", Formula::kDoublePendulum,
       {"reward_survive", "distance_penalty", "velocity_penalty"}, {}},
  };
  if (!reward.robot.empty()) {
    const Spec* spec = nullptr;
    for (const Spec& s : kSpecs) {
      if (reward.robot == s.robot) spec = &s;
    }
    if (spec == nullptr) throw BadValue("MaMuJoCo has no reward formula for robot '" + reward.robot + "'");
    formula_ = spec->formula;
    weight_ = reward.weight;
    float32_action_ = reward.float32_action;
    for (int k = 0; k < 3; ++k) {
      if (spec->terms[k] != nullptr) term_[k] = FieldOffset(r, spec->terms[k], reward.robot);
    }
    for (int k = 0; k < 2; ++k) {
      if (spec->ctrl[k] != nullptr) ctrl_[k] = FieldOffset(r, spec->ctrl[k], reward.robot);
    }
  }
  for (const auto& [name, slot] : r.episode_options()) {
    const auto [min, max] = r.OptionRange(slot);
    AddEpisodeOption(name, slot, min, max);
  }
}

void MaMuJoCoTask::Reset(mjData* d, double* scratch, Rng& rng, double* obs, double* info) const {
  robot_->Reset(d, scratch, rng, RobotObs(scratch), info);
  plan_.Apply(model(), d, obs);
}

bool MaMuJoCoTask::Step(mjData* d, double* scratch, const float* actions,
                        const StepOutput& out) const {
  StepOutput robot_out = out;
  robot_out.obs = RobotObs(scratch);
  const bool stable = robot_->Step(d, scratch, actions, robot_out);
  if (formula_ != Formula::kOwn) out.reward[0] = Reward(actions, out.info);
  plan_.Apply(model(), d, out.obs);
  return stable;
}

double MaMuJoCoTask::ControlCost(const float* a, int count) const {
  if (float32_action_) return Float32ControlCost(weight_, a, count);  // a float32 product, exactly
  return weight_ * NumpySumSquaresAsFloat64(a, count);
}

double MaMuJoCoTask::Reward(const float* actions, double* info) const {
  auto term = [&](int k) { return info[term_[k]]; };
  const int n = act_dim();
  double ctrl = 0.0;  // -v5's reward_ctrl: minus the cost
  if (formula_ != Formula::kCoupled && ctrl_[0] >= 0) {
    ctrl = -ControlCost(actions, n);
    info[ctrl_[0]] = ctrl;
  }
  switch (formula_) {
    case Formula::kOwn:
      break;
    case Formula::kForward:
      return term(0) - (-ctrl);
    case Formula::kHealthyForward:
      return (term(0) + term(1)) - (-ctrl);
    case Formula::kContactForward:
      return (term(0) + term(1)) - ((-ctrl) + (-term(2)));
    case Formula::kStandup:
      return ((term(0) - (-ctrl)) - (-term(1))) + 1;
    case Formula::kReacher:
      return term(0) + ctrl;
    case Formula::kPusher:
      return (term(0) + ctrl) + term(1);
    case Formula::kCoupled: {
      // Each cheetah's cost (positive, as Farama's info), then their mean: in
      // float32 for a float32 action, as NumPy computes it there.
      const int half = n / 2;
      const double c1 = ControlCost(actions, half), c2 = ControlCost(actions + half, n - half);
      info[ctrl_[0]] = c1;
      info[ctrl_[1]] = c2;
      const double mean = float32_action_
                              ? static_cast<double>((static_cast<float>(c1) + static_cast<float>(c2)) / 2.0f)
                              : (c1 + c2) / 2.0;
      return term(0) - mean;
    }
    case Formula::kPendulum:
      return term(0);
    case Formula::kDoublePendulum:
      return (term(0) - (-term(1))) - (-term(2));
  }
  return 0.0;
}

void MaMuJoCoTask::Observe(const mjData* d, const double* /*scratch*/, double* obs) const {
  plan_.Apply(model(), d, obs);
}

}  // namespace joltgym::mamujoco
