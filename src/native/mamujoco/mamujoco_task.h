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

#include "../task.h"
#include "observation_plan.h"

namespace joltgym::mamujoco {

class MaMuJoCoTask final : public Task {
 public:
  MaMuJoCoTask(std::shared_ptr<const Task> robot, ObservationPlan plan);

  const Task& robot() const { return *robot_; }
  int plan_size() const { return plan_.size(); }
  const ObservationPlan& plan() const { return plan_; }

  void Reset(mjData* data, double* scratch, Rng& rng, double* obs, double* info) const override;
  bool Step(mjData* data, double* scratch, const float* actions,
            const StepOutput& out) const override;
  void Observe(const mjData* data, const double* scratch, double* obs) const override;
  void InitScratch(double* scratch) const override { robot_->InitScratch(scratch); }

 private:
  // Where the robot writes its own observation: after its scratch.
  double* RobotObs(double* scratch) const { return scratch + robot_scratch_; }

  std::shared_ptr<const Task> robot_;
  ObservationPlan plan_;
  int robot_scratch_;
};

}  // namespace joltgym::mamujoco
