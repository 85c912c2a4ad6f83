#include "world_pool.h"

#include <algorithm>
#include <cstring>

namespace joltgym {

WorldPool::WorldPool(std::shared_ptr<const Task> task, int num_envs, int num_threads,
                     int max_episode_steps, AutoresetMode mode)
    : task_(std::move(task)),
      needs_reset_(num_envs, 0),
      seeded_(num_envs, 0),
      threads_(std::max(1, std::min(num_threads, num_envs)), &World::PrepareThread),
      mode_(mode) {
  const int agents = task_->num_agents();
  obs_stride_ = agents * task_->obs_dim();
  agent_stride_ = agents;
  info_stride_ = agents * task_->info_layout().width();
  act_stride_ = agents * task_->act_dim();
  worlds_.reserve(num_envs);
  for (int i = 0; i < num_envs; ++i) worlds_.push_back(std::make_unique<World>(task_, max_episode_steps));
  in_flight_.assign(num_envs, 0);
  lost_.assign(num_envs, 0);
  scratch_ids_.assign(num_envs, 0);
  threads_.SetAsyncJob(
      num_envs,
      [](void* context, int i) {
        auto* self = static_cast<WorldPool*>(context);
        self->StepWorld(i, self->async_actions_);
      },
      this);
}

void WorldPool::Bind(const PoolBuffers& buffers) {
  buffers_ = buffers;
  if (buffers.float64()) {
    obs64_ = buffers.obs64;
    reward64_ = buffers.reward64;
    final_obs64_ = buffers.final_obs64;
    return;
  }
  const std::size_t n = worlds_.size();
  stage_obs_.assign(n * obs_stride_, 0.0);
  stage_reward_.assign(n * agent_stride_, 0.0);
  stage_final_obs_.assign(n * obs_stride_, 0.0);
  obs64_ = stage_obs_.data();
  reward64_ = stage_reward_.data();
  final_obs64_ = stage_final_obs_.data();
}

void WorldPool::Publish(int i) {
  if (buffers_.float64()) return;
  const double* obs = ObsRow(i);
  float* out = buffers_.obs + static_cast<std::size_t>(i) * obs_stride_;
  for (int k = 0; k < obs_stride_; ++k) out[k] = static_cast<float>(obs[k]);
  const double* reward = RewardRow(i);
  float* r = buffers_.reward + static_cast<std::size_t>(i) * agent_stride_;
  for (int k = 0; k < agent_stride_; ++k) r[k] = static_cast<float>(reward[k]);
}

void WorldPool::PublishFinal(int i) {
  if (buffers_.float64()) return;
  const double* obs = FinalObsRow(i);
  float* out = buffers_.final_obs + static_cast<std::size_t>(i) * obs_stride_;
  for (int k = 0; k < obs_stride_; ++k) out[k] = static_cast<float>(obs[k]);
}

void WorldPool::Send(const float* actions, const int* ids, int count) {
  async_actions_ = actions;
  for (int k = 0; k < count; ++k) in_flight_[ids[k]] = 1;
  in_flight_count_ += count;
  threads_.Submit(ids, count);
}

void WorldPool::SendReset() {
  Drain();  // (another Python thread may have sent since the reset)
  for (int i = 0; i < num_envs(); ++i) {
    scratch_ids_[i] = i;
    in_flight_[i] = 1;
  }
  in_flight_count_ = num_envs();
  threads_.SubmitDone(scratch_ids_.data(), num_envs());
}

bool WorldPool::Recv(int* ids, int count, const PoolBuffers& batch) {
  if (!threads_.CollectOrInterrupt(ids, count)) return false;
  in_flight_count_ -= count;
  const int a = agent_stride_, o = obs_stride_, f = info_stride_;
  const bool f64 = buffers_.float64();
  for (int k = 0; k < count; ++k) {
    const int i = ids[k];
    in_flight_[i] = 0;
    if (f64) {
      std::memcpy(batch.obs64 + k * o, buffers_.obs64 + i * o, sizeof(double) * o);
      std::memcpy(batch.reward64 + k * a, buffers_.reward64 + i * a, sizeof(double) * a);
    } else {
      std::memcpy(batch.obs + k * o, buffers_.obs + i * o, sizeof(float) * o);
      std::memcpy(batch.reward + k * a, buffers_.reward + i * a, sizeof(float) * a);
    }
    std::memcpy(batch.terminated + k * a, buffers_.terminated + i * a, sizeof(bool) * a);
    std::memcpy(batch.truncated + k * a, buffers_.truncated + i * a, sizeof(bool) * a);
    std::memcpy(batch.info + k * f, buffers_.info + i * f, sizeof(double) * f);
    if (buffers_.reset_kind[i] == kAutoReset) {
      if (f64) {
        std::memcpy(batch.final_obs64 + k * o, buffers_.final_obs64 + i * o, sizeof(double) * o);
      } else {
        std::memcpy(batch.final_obs + k * o, buffers_.final_obs + i * o, sizeof(float) * o);
      }
      std::memcpy(batch.final_info + k * f, buffers_.final_info + i * f, sizeof(double) * f);
    }
    batch.reset_kind[k] = buffers_.reset_kind[i];
    batch.unstable[k] = buffers_.unstable[i];
    batch.elapsed[k] = buffers_.elapsed[i];
  }
  return true;
}

void WorldPool::Drain() {
  if (in_flight_count_ == 0) return;
  const int count = in_flight_count_;
  threads_.Collect(scratch_ids_.data(), count);
  for (int k = 0; k < count; ++k) in_flight_[scratch_ids_[k]] = 0;
  in_flight_count_ = 0;
}

void WorldPool::AbandonInFlight() {
  for (int i = 0; i < num_envs(); ++i) {
    if (in_flight_[i]) lost_[i] = 1;
    in_flight_[i] = 0;
  }
  in_flight_count_ = 0;
}

void WorldPool::TakeReportsOf(const int* ids, int count,
                              std::vector<std::pair<int, MujocoReport>>& out) {
  for (int k = 0; k < count; ++k) {
    MujocoReport& report = worlds_[ids[k]]->report();
    if (report.empty()) continue;
    out.emplace_back(ids[k], std::move(report));
    report.Clear();
  }
}

bool WorldPool::any_unseeded() const {
  return std::find(seeded_.begin(), seeded_.end(), 0) != seeded_.end();
}

bool WorldPool::all_started() const {
  for (const auto& w : worlds_) {
    if (!w->has_episode()) return false;
  }
  return true;
}

int WorldPool::FirstNotSteppable() const {
  for (int i = 0; i < num_envs(); ++i) {
    if (!worlds_[i]->has_episode() || worlds_[i]->failed() || lost_[i]) return i;
  }
  return -1;
}

void WorldPool::TakeReports(std::vector<std::pair<int, MujocoReport>>& out) {
  if (!reported_.exchange(false, std::memory_order_acq_rel)) return;
  for (int i = 0; i < num_envs(); ++i) {
    MujocoReport& report = worlds_[i]->report();
    if (report.empty()) continue;
    out.emplace_back(i, std::move(report));
    report.Clear();
  }
}

void WorldPool::ResetWorld(int i) {
  World& w = *worlds_[i];
  w.Reset(ObsRow(i), buffers_.info + i * info_stride_);
  NoteReport(w);
  std::fill_n(RewardRow(i), agent_stride_, 0.0);
  Publish(i);
  std::fill_n(buffers_.terminated + i * agent_stride_, agent_stride_, false);
  std::fill_n(buffers_.truncated + i * agent_stride_, agent_stride_, false);
  buffers_.reset_kind[i] = kReset;
  buffers_.unstable[i] = false;
  buffers_.elapsed[i] = 0;
  needs_reset_[i] = 0;
  lost_[i] = 0;
}

bool WorldPool::ResetAll(bool reseed, const SeedWords& seed) {
  Drain();
  // The seeds are made here, not on the workers, which never allocate (see
  // thread_pool.h).
  world_seeds_.resize(num_envs());
  for (int i = 0; i < num_envs(); ++i) {
    if (reseed || !seeded_[i]) world_seeds_[i] = SeedPlus(seed, static_cast<std::uint64_t>(i));
  }
  auto body = [this, reseed](int i) {
    if (reseed || !seeded_[i]) worlds_[i]->Seed(world_seeds_[i]);
    seeded_[i] = 1;
    ResetWorld(i);
  };
  return threads_.ParallelFor(num_envs(), body);
}

void WorldPool::ResetOne(int index, bool reseed, const SeedWords& seed) {
  if (reseed || !seeded_[index]) worlds_[index]->Seed(seed);
  seeded_[index] = 1;
  ResetWorld(index);
}

void WorldPool::StepWorld(int i, const float* actions) {
  if (needs_reset_[i]) {  // NEXT_STEP: this call only resets the ended world
    ResetWorld(i);
    return;
  }
  World& w = *worlds_[i];
  double* obs = ObsRow(i);
  double* info = buffers_.info + i * info_stride_;
  const bool done = w.Step(actions + i * act_stride_, obs, RewardRow(i),
                           buffers_.terminated + i * agent_stride_,
                           buffers_.truncated + i * agent_stride_, info);
  NoteReport(w);
  buffers_.unstable[i] = w.last_step_unstable();
  buffers_.elapsed[i] = w.elapsed_steps();
  buffers_.reset_kind[i] = kStepped;
  if (!done || w.failed() || mode_ == AutoresetMode::kNextStep) {
    if (done && !w.failed()) needs_reset_[i] = 1;  // NEXT_STEP; a failed world waits for an explicit reset
    Publish(i);
    return;
  }
  std::memcpy(FinalObsRow(i), obs, sizeof(double) * obs_stride_);
  PublishFinal(i);
  std::memcpy(buffers_.final_info + i * info_stride_, info, sizeof(double) * info_stride_);
  w.Reset(obs, info);
  Publish(i);
  NoteReport(w);
  buffers_.reset_kind[i] = kAutoReset;
  buffers_.elapsed[i] = 0;
}

bool WorldPool::StepAll(const float* actions) {
  auto body = [this, actions](int i) { StepWorld(i, actions); };
  return threads_.ParallelFor(num_envs(), body);
}

}  // namespace joltgym
