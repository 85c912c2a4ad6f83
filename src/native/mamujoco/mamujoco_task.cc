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
  SetModel(r.shared_model());
  SetDims(1, r.obs_dim(), r.act_dim());
  SetScratchSize(r.scratch_size());
  SetDt(r.dt());
  SetEpisodeLimit(r.episode_limit());
  SetCamera(r.camera());
  SetActionBoundsFromCtrlRange(0);
  InfoLayout& info = mutable_info();
  for (const InfoField& f : r.info_layout().fields()) {
    switch (f.kind) {
      case InfoKind::kReal:
        info.Add(f.name, f.size, f.at_reset);
        break;
      case InfoKind::kInteger:
        info.AddInteger(f.name, f.at_reset);
        break;
      case InfoKind::kLabel:
        info.AddLabel(f.name, f.labels, f.at_reset);
        break;
    }
  }
  plan_offset_ = info.Add("mamujoco_observations", std::max(plan_.size(), 1), true);
  for (const auto& [name, slot] : r.episode_options()) AddEpisodeOption(name, slot);
}

void MaMuJoCoTask::Reset(mjData* d, double* scratch, Rng& rng, float* obs, double* info) const {
  robot_->Reset(d, scratch, rng, obs, info);
  plan_.Apply(model(), d, info + plan_offset_);
}

bool MaMuJoCoTask::Step(mjData* d, double* scratch, const float* actions,
                        const StepOutput& out) const {
  const bool stable = robot_->Step(d, scratch, actions, out);
  plan_.Apply(model(), d, out.info + plan_offset_);
  return stable;
}

void MaMuJoCoTask::Observe(const mjData* d, const double* scratch, float* obs) const {
  robot_->Observe(d, scratch, obs);
}

}  // namespace joltgym::mamujoco
