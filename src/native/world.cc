#include "world.h"

#include <new>

#include "errors.h"

namespace joltgym {

World::World(std::shared_ptr<const Task> task, int max_episode_steps)
    : task_(std::move(task)), max_episode_steps_(max_episode_steps) {
  data_ = mj_makeData(task_->model());
  if (data_ == nullptr) throw std::bad_alloc();
  scratch_.assign(task_->scratch_size(), 0.0);
  task_->InitScratch(scratch_.data());
}

World::~World() { mj_deleteData(data_); }

void World::Reset(float* obs, double* info) {
  task_->Reset(data_, scratch_.data(), rng_, obs, info);
  elapsed_steps_ = 0;
  has_episode_ = true;
  last_step_unstable_ = false;
}

bool World::Step(const float* actions, float* obs, float* reward, bool* terminated,
                 bool* truncated, double* info) {
  const StepOutput out{obs, reward, terminated, info};
  const bool stable = task_->Step(data_, scratch_.data(), actions, out);
  ++elapsed_steps_;
  last_step_unstable_ = !stable;
  const bool out_of_time = max_episode_steps_ > 0 && elapsed_steps_ >= max_episode_steps_;
  const bool trunc = out_of_time || !stable;
  bool done = trunc;
  const int n = task_->num_agents();
  for (int a = 0; a < n; ++a) {
    truncated[a] = trunc;
    done = done || terminated[a];
  }
  return done;
}

void World::SetState(const double* qpos, const double* qvel, float* obs) {
  const mjModel* m = task_->model();
  mju_copy(data_->qpos, qpos, m->nq);
  mju_copy(data_->qvel, qvel, m->nv);
  mj_forward(m, data_);
  task_->Observe(data_, scratch_.data(), obs);
  has_episode_ = true;
}

}  // namespace joltgym
