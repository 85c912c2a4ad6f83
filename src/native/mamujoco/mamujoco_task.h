// A MaMuJoCo world: one single-agent robot task (a Gymnasium -v5 twin) plus
// the observation plan of a factorization. The robot steps exactly as alone
// (its own observation goes to the tail of the world's scratch, unread); its
// info fields are this task's. This task's observation is the plan's output:
// after every reset, step and set_state the plan writes the agents' float64
// observations and the float64 global state, so that a float64 WorldPool
// carries them (batched, asynchronously, across autoresets) without knowing
// of them.
#pragma once

#include <memory>
#include <string>

#include "../task.h"
#include "observation_plan.h"

namespace joltgym::mamujoco {

// MaMuJoCo's reward: the robot's -v5 reward, its control cost that of the
// global action as -v5 computes it for the action MaMuJoCo hands it (float64
// from a factorization's agents; the float32 action itself for
// agent_conf=None, except the Humanoids', which read data.ctrl), operation
// for operation, so that rewards equal Farama's bit for bit.
struct RewardRecipe {
  std::string robot;       // whose -v5 reward formula; "" keeps the robot task's own reward
  double weight = 0.0;     // its control-cost weight (ctrl_cost_weight, reward_control_weight)
  bool float32_action = false;
};

class MaMuJoCoTask final : public Task {
 public:
  // Throws BadValue for a recipe of an unknown robot, or one whose terms
  // the robot's info does not have.
  MaMuJoCoTask(std::shared_ptr<const Task> robot, ObservationPlan plan, const RewardRecipe& reward = {});

  const Task& robot() const { return *robot_; }
  int plan_size() const { return plan_.size(); }
  const ObservationPlan& plan() const { return plan_; }

  void Reset(mjData* data, double* scratch, Rng& rng, double* obs, double* info) const override;
  bool Step(mjData* data, double* scratch, const float* actions,
            const StepOutput& out) const override;
  void Observe(const mjData* data, const double* scratch, double* obs) const override;
  void InitScratch(double* scratch) const override { robot_->InitScratch(scratch); }

 private:
  enum class Formula { kOwn, kForward, kHealthyForward, kContactForward, kStandup, kReacher, kPusher,
                       kCoupled, kPendulum, kDoublePendulum };
  // Where the robot writes its own observation: after its scratch.
  double* RobotObs(double* scratch) const { return scratch + robot_scratch_; }
  // weight * np.sum(np.square(a)) of `count` actions, in the recipe's precision.
  double ControlCost(const float* a, int count) const;
  // The reward of the step just taken; writes the control cost(s) into `info`.
  double Reward(const float* actions, double* info) const;

  std::shared_ptr<const Task> robot_;
  ObservationPlan plan_;
  int robot_scratch_;
  Formula formula_ = Formula::kOwn;
  double weight_ = 0.0;
  bool float32_action_ = false;
  // Offsets in the info record of the terms the formula reads and of the
  // control cost(s) it writes (-1: unused).
  int term_[3] = {-1, -1, -1};
  int ctrl_[2] = {-1, -1};
};

}  // namespace joltgym::mamujoco
