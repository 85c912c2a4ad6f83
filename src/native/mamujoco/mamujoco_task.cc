#include "mamujoco_task.h"

#include <algorithm>

#include "../errors.h"

namespace joltgym::mamujoco {

MaMuJoCoTask::MaMuJoCoTask(std::shared_ptr<const Task> robot, ObservationPlan plan)
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
  plan_.Apply(model(), d, out.obs);
  return stable;
}

void MaMuJoCoTask::Observe(const mjData* d, const double* /*scratch*/, double* obs) const {
  plan_.Apply(model(), d, obs);
}

}  // namespace joltgym::mamujoco
