// A MaMuJoCo world: one single-agent robot task (a Gymnasium -v5 twin) plus
// the observation plan of a factorization. The robot steps exactly as alone;
// after every reset and step the plan writes the agents' float64
// observations and the float64 global state into extra slots of the info
// record, after the robot's own info fields, so that the WorldPool carries
// them (batched, asynchronously, across autoresets) without knowing of them.
#pragma once

#include <memory>

#include "../task.h"
#include "observation_plan.h"

namespace joltgym::mamujoco {

class MaMuJoCoTask final : public Task {
 public:
  MaMuJoCoTask(std::shared_ptr<const Task> robot, ObservationPlan plan);

  const Task& robot() const { return *robot_; }
  // Where the plan's values start in the info record, and how many there are.
  int plan_offset() const { return plan_offset_; }
  int plan_size() const { return plan_.size(); }
  const ObservationPlan& plan() const { return plan_; }

  void Reset(mjData* data, double* scratch, Rng& rng, float* obs, double* info) const override;
  bool Step(mjData* data, double* scratch, const float* actions,
            const StepOutput& out) const override;
  void Observe(const mjData* data, const double* scratch, float* obs) const override;
  void InitScratch(double* scratch) const override { robot_->InitScratch(scratch); }

 private:
  std::shared_ptr<const Task> robot_;
  ObservationPlan plan_;
  int plan_offset_;
};

}  // namespace joltgym::mamujoco
