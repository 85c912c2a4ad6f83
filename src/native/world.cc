#include "world.h"

#include "errors.h"
#include "simulation_poll.h"

namespace joltgym {

void World::PrepareThread() noexcept {
  MujocoReport report;
  GuardMujoco([] {}, &report);
  EngineScope engine(nullptr);
  SimulationPoll poll(nullptr, nullptr);
}

World::World(std::shared_ptr<const Task> task, int max_episode_steps)
    : task_(std::move(task)), max_episode_steps_(max_episode_steps) {
  const mjModel* m = task_->model();
  mjData* data = nullptr;
  const bool ok = GuardMujoco([&] { data = mj_makeData(m); }, &report_);
  if (!ok || data == nullptr) {
    if (data != nullptr) mj_deleteData(data);
    throw MujocoError(
        "MuJoCo could not make a world (mj_makeData): " +
            (report_.error_message.empty() ? std::string("no memory") : report_.error_message),
        !ok ? report_.error == MujocoReport::Error::kOutOfMemory : true);
  }
  data_ = data;
  if (task_->engine_model()) engine_ = task_->engine_model()->MakeEngine();
  scratch_.assign(task_->scratch_size(), 0.0);
  task_->InitScratch(scratch_.data());
}

World::~World() {
  if (owns_data_) mj_deleteData(data_);
}

void World::AdoptData(mjData* data) {
  mj_copyData(data, task_->model(), data_);
  if (owns_data_) mj_deleteData(data_);
  data_ = data;
  owns_data_ = false;
}

void World::Reset(double* obs, double* info) {
  const Task& task = *task_;
  mjData* d = data_;
  double* scratch = scratch_.data();
  Rng& rng = rng_;
  Engine* engine = engine_.get();
  const EngineScope scope(engine);
  const bool ok = GuardMujoco(
      [&] {
        task.Reset(d, scratch, rng, obs, info);
        if (engine != nullptr) engine->WriteState(task.model(), d);
      },
      &report_);
  elapsed_steps_ = 0;
  last_step_unstable_ = false;
  failed_ = !ok;
  interrupted_ = false;
  has_episode_ = ok;
}

bool World::Step(const float* actions, double* obs, double* reward, bool* terminated, bool* truncated,
                 double* info) {
  const StepOutput out{obs, reward, terminated, info};
  const Task& task = *task_;
  mjData* d = data_;
  double* scratch = scratch_.data();
  bool stable = true;
  const EngineScope scope(engine_.get());
  const bool ok = GuardMujoco([&] { stable = task.Step(d, scratch, actions, out); }, &report_);
  const int n = task.num_agents();
  interrupted_ = TakeSimulationInterrupted();
  if (!ok || interrupted_) {
    failed_ = true;
    has_episode_ = false;
    last_step_unstable_ = false;
    for (int a = 0; a < n; ++a) {
      terminated[a] = false;
      truncated[a] = true;
    }
    return true;
  }
  ++elapsed_steps_;
  last_step_unstable_ = !stable;
  const bool out_of_time = max_episode_steps_ > 0 && elapsed_steps_ >= max_episode_steps_;
  const bool trunc = out_of_time || !stable;
  bool done = trunc;
  for (int a = 0; a < n; ++a) {
    truncated[a] = trunc;
    done = done || terminated[a];
  }
  return done;
}

bool World::Simulate(int frame_skip) {
  const mjModel* m = task_->model();
  mjData* d = data_;
  bool stable = true;
  const EngineScope scope(engine_.get());
  const bool ok = GuardMujoco([&] { stable = joltgym::Simulate(m, d, frame_skip); }, &report_);
  interrupted_ = TakeSimulationInterrupted();
  if (!ok || interrupted_) {
    failed_ = true;
    has_episode_ = false;
    return false;
  }
  return stable;
}

void World::SetState(const double* qpos, const double* qvel, double* obs) {
  const Task& task = *task_;
  const mjModel* m = task.model();
  mjData* d = data_;
  const double* scratch = scratch_.data();
  Engine* engine = engine_.get();
  const bool ok = GuardMujoco(
      [&] {
        mju_copy(d->qpos, qpos, m->nq);
        mju_copy(d->qvel, qvel, m->nv);
        mj_forward(m, d);
        if (engine != nullptr) engine->WriteState(m, d);
        task.Observe(d, scratch, obs);
      },
      &report_);
  failed_ = !ok;
  has_episode_ = ok;
}

}  // namespace joltgym
