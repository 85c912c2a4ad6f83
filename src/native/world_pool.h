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
  // the pool. Their layout (float32 or float64) is the buffers' own.
  void Bind(const PoolBuffers& buffers);
  bool float64() const { return buffers_.float64(); }

  // Resets every world. With `reseed`, first seeds world i with seed + i, as
  // Gymnasium's SyncVectorEnv seeds its envs; otherwise each world's random
  // stream continues, and a world never seeded yet is seeded seed + i (the
  // front ends pass fresh entropy then: see any_unseeded()).
  //
  // ResetAll and StepAll return false if the interrupt poll (see
  // SetInterruptPoll) stopped them: each world was then either reset (or
  // stepped) whole or left as it was, its rows of the buffers with it, but
  // for a world whose step was under way, which stops half-way and waits for
  // its reset (World::interrupted).
  bool ResetAll(bool reseed, const SeedWords& seed);
  // Resets world `index`; seeds it with `seed` first if `reseed` or if it was
  // never seeded.
  void ResetOne(int index, bool reseed, const SeedWords& seed);
  // True if some world was never seeded (a reset without a seed then needs
  // fresh entropy, as SeedSequence(None) draws).
  bool any_unseeded() const;
  bool seeded(int index) const { return seeded_[index] != 0; }
  // One step of every world, actions [num_envs, num_agents, act_dim].
  // Nothing may be in flight.
  bool StepAll(const float* actions);
  // The thread pool's interrupt poll (ThreadPool::SetInterruptPoll), for
  // ResetAll and StepAll.
  void SetInterruptPoll(ThreadPool::Poll poll, void* context) { threads_.SetInterruptPoll(poll, context); }

  // Asynchronous stepping. Send() queues one step of each of `count` worlds
  // (steppable, none in flight), reading world i's action from row i of
  // `actions` [num_envs, num_agents, act_dim] (the caller leaves those rows
  // alone until it receives the worlds), and returns at once; the worker
  // threads step them meanwhile. Recv() waits for the first `count` worlds to
  // finish (stepping queued ones on the calling thread while it waits),
  // writes their ids to `ids` and gathers their rows of the result buffers
  // into the first `count` rows of `batch`. A world is in flight from Send()
  // (or SendReset()) until a Recv() returns it. Each world's results depend
  // only on its own actions and seed, never on batching or timing.
  void Send(const float* actions, const int* ids, int count);
  // Marks every world in flight and done as it is (after ResetAll): the next
  // Recv() calls return worlds 0, 1, ... with their reset observations.
  void SendReset();
  // Same layout as Bind's. Returns false, having changed nothing, if the
  // interrupt poll stopped the wait (ThreadPool::CollectOrInterrupt).
  bool Recv(int* ids, int count, const PoolBuffers& batch);
  // Waits for every world in flight and drops its results (not its reports).
  void Drain();
  int in_flight() const { return in_flight_count_; }
  bool in_flight(int index) const { return in_flight_[index] != 0; }
  // In a forked child: the worlds in flight at the fork are lost (a worker
  // may have been half-way through one); they wait for a reset.
  void AbandonInFlight();
  bool lost(int index) const { return lost_[index] != 0; }
  // NEXT_STEP: world `index`'s episode ended and its next step only resets it.
  bool awaiting_autoreset(int index) const { return needs_reset_[index] != 0; }

  int num_envs() const { return static_cast<int>(worlds_.size()); }
  int num_threads() const { return threads_.num_threads(); }
  AutoresetMode autoreset_mode() const { return mode_; }
  const Task& task() const { return *task_; }
  bool all_started() const;
  // The first world that cannot be stepped (no episode yet, or failed on a
  // MuJoCo error and not reset since), or -1.
  int FirstNotSteppable() const;
  World& world(int index) { return *worlds_[index]; }
  // For a world's SetState: where its observation goes (then Publish(index)).
  double* obs_row(int index) { return ObsRow(index); }
  void Publish(int index);
  const World& world(int index) const { return *worlds_[index]; }

  // Moves the MuJoCo reports (warnings, errors) of the worlds that have one
  // into `out` as (world index, report), in index order. Called by the owner
  // on its thread after each call; costs one atomic load when there are none.
  void TakeReports(std::vector<std::pair<int, MujocoReport>>& out);
  // The same for the listed worlds only (the others may be in flight).
  void TakeReportsOf(const int* ids, int count, std::vector<std::pair<int, MujocoReport>>& out);

 private:
  void StepWorld(int index, const float* actions);
  // Where world i's task writes its obs, reward and final obs: the caller's
  // float64 arrays, or (float32 layout) the pool's own doubles, which
  // Publish() rounds into the caller's float32 arrays.
  double* ObsRow(int i) { return obs64_ + static_cast<std::size_t>(i) * obs_stride_; }
  double* RewardRow(int i) { return reward64_ + static_cast<std::size_t>(i) * agent_stride_; }
  double* FinalObsRow(int i) { return final_obs64_ + static_cast<std::size_t>(i) * obs_stride_; }
  void PublishFinal(int i);
  void ResetWorld(int index);
  void NoteReport(World& world) {
    if (!world.report().empty()) reported_.store(true, std::memory_order_relaxed);
  }

  std::shared_ptr<const Task> task_;
  std::vector<std::unique_ptr<World>> worlds_;
  std::vector<std::uint8_t> needs_reset_;
  std::vector<std::uint8_t> in_flight_;  // sent, not yet received (owner thread only)
  std::vector<SeedWords> world_seeds_;  // ResetAll's, made on the caller
  std::vector<std::uint8_t> lost_;       // in flight at a fork, not reset since
  std::vector<int> scratch_ids_;         // for Drain()
  int in_flight_count_ = 0;
  const float* async_actions_ = nullptr;  // published to the workers by Submit
  std::vector<std::uint8_t> seeded_;  // per world: seeded once (by a seed or fresh entropy)
  // Where the worlds write observations and rewards (see ObsRow). Declared
  // before threads_, so that they outlive the worker threads, which a
  // destroyed pool joins first (a world in flight may still be writing).
  double* obs64_ = nullptr;
  double* reward64_ = nullptr;
  double* final_obs64_ = nullptr;
  std::vector<double> stage_obs_, stage_reward_, stage_final_obs_;  // float32 layout only
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
