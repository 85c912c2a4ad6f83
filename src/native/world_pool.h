// N worlds of one task stepped in parallel on a persistent thread pool,
// reading actions from and writing results into caller-owned buffers.
//
// The pool does not know which task it runs. It owns the episode lifecycle:
// truncation at max_episode_steps, auto-reset (Gymnasium's NEXT_STEP or
// SAME_STEP convention) and seeding (world i gets seed + i).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "buffers.h"
#include "rng.h"
#include "task.h"
#include "thread_pool.h"
#include "world.h"

namespace joltgym {

enum class AutoresetMode {
  kNextStep,  // the call after an episode ends resets that world (Gymnasium default)
  kSameStep,  // an ended world is reset in the same call; final obs/info kept
};

class WorldPool {
 public:
  WorldPool(std::shared_ptr<const Task> task, int num_envs, int num_threads,
            int max_episode_steps, AutoresetMode mode);

  // Must be called once before any reset or step; the arrays must outlive
  // the pool.
  void Bind(const PoolBuffers& buffers) { buffers_ = buffers; }

  // Resets every world. With `reseed`, first seeds world i with seed + i, as
  // Gymnasium's SyncVectorEnv seeds its envs; otherwise each world's random
  // stream continues, and a world never seeded yet is seeded seed + i (the
  // front ends pass fresh entropy then: see any_unseeded()).
  void ResetAll(bool reseed, const SeedWords& seed);
  // Resets world `index`; seeds it with `seed` first if `reseed` or if it was
  // never seeded.
  void ResetOne(int index, bool reseed, const SeedWords& seed);
  // True if some world was never seeded (a reset without a seed then needs
  // fresh entropy, as SeedSequence(None) draws).
  bool any_unseeded() const;
  bool seeded(int index) const { return seeded_[index] != 0; }
  // One step of every world, actions [num_envs, num_agents, act_dim].
  void StepAll(const float* actions);

  int num_envs() const { return static_cast<int>(worlds_.size()); }
  int num_threads() const { return threads_.num_threads(); }
  AutoresetMode autoreset_mode() const { return mode_; }
  const Task& task() const { return *task_; }
  bool all_started() const;
  // The first world that cannot be stepped (no episode yet, or failed on a
  // MuJoCo error and not reset since), or -1.
  int FirstNotSteppable() const;
  World& world(int index) { return *worlds_[index]; }
  const World& world(int index) const { return *worlds_[index]; }

  // Moves the MuJoCo reports (warnings, errors) of the worlds that have one
  // into `out` as (world index, report), in index order. Called by the owner
  // on its thread after each call; costs one atomic load when there are none.
  void TakeReports(std::vector<std::pair<int, MujocoReport>>& out);

 private:
  void StepWorld(int index, const float* actions);
  void ResetWorld(int index);
  void NoteReport(World& world) {
    if (!world.report().empty()) reported_.store(true, std::memory_order_relaxed);
  }

  std::shared_ptr<const Task> task_;
  std::vector<std::unique_ptr<World>> worlds_;
  std::vector<std::uint8_t> needs_reset_;
  std::vector<std::uint8_t> seeded_;  // per world: seeded once (by a seed or fresh entropy)
  ThreadPool threads_;
  AutoresetMode mode_;
  PoolBuffers buffers_;
  std::atomic<bool> reported_{true};  // some world may have a report (set by the workers)
  // Strides, per world.
  int obs_stride_;
  int agent_stride_;
  int info_stride_;
  int act_stride_;
};

}  // namespace joltgym
