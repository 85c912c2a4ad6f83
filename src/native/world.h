// One simulated world: an mjData, the task's per-world scratch, an RNG and
// the episode clock. A world is used by one thread at a time.
#pragma once

#include <mujoco/mujoco.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "engine.h"
#include "mujoco_errors.h"
#include "rng.h"
#include "task.h"

namespace joltgym {

class World {
 public:
  // `max_episode_steps` <= 0 disables truncation by time. Throws MujocoError
  // if MuJoCo cannot allocate the world's data.
  World(std::shared_ptr<const Task> task, int max_episode_steps);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // Makes the calling thread's state for stepping worlds: the thread-locals
  // of MuJoCo's error guard, the engine seam and the simulation poll, whose
  // first touch allocates. The world pool's thread-start hook, so that its
  // workers never allocate once started (see thread_pool.h).
  static void PrepareThread() noexcept;

  // Seeds the world's reset noise as Gymnasium seeds an env's np_random.
  void Seed(const SeedWords& seed) { rng_.Seed(seed); }
  void Seed(std::uint64_t seed) { rng_.Seed(seed); }
  Rng& rng() { return rng_; }

  // Steps `data` from now on instead of the world's own mjData, after copying
  // the world's state into it (mj_copyData). `data` must be made for a model
  // of the same sizes as the task's and outlive the world (the single-agent
  // core hands over the mjData of a Python mujoco.MjData this way).
  void AdoptData(mjData* data);

  // Starts an episode: writes [num_agents, obs_dim] obs and the reset info.
  // Every call into MuJoCo here, in Step and in SetState is guarded (see
  // mujoco_errors.h): MuJoCo's messages go to report(), and an error marks the
  // world failed() instead of ending the process.
  void Reset(double* obs, double* info);

  // One env step; the world must have an episode and not be failed().
  // `truncated` is written for every agent. Returns true when the episode
  // ended (any agent terminated, or truncated, or MuJoCo failed).
  bool Step(const float* actions, double* obs, double* reward, bool* terminated, bool* truncated,
            double* info);

  // Advances the physics alone by `frame_skip` timesteps with the controls
  // already in data()->ctrl, on the world's engine (Gymnasium's
  // do_simulation): no reward, no episode clock. Guarded as Step; returns
  // false if the physics became unstable or MuJoCo failed (see failed()).
  bool Simulate(int frame_skip);

  // True if the last Step() ended on MuJoCo's instability warning.
  bool last_step_unstable() const { return last_step_unstable_; }
  bool has_episode() const { return has_episode_; }
  // True after a MuJoCo error cut a call short: the mjData may be half
  // updated (its stack unbalanced), so only Reset() may follow, which clears
  // this if it succeeds.
  bool failed() const { return failed_; }
  // True if the last Step() was interrupted half-way (a SimulationPoll
  // stopped it, see simulation_poll.h); failed() is then true as well.
  bool interrupted() const { return interrupted_; }
  // MuJoCo's warnings and error from this world's calls, until the owner
  // takes them (MujocoReport::Clear).
  MujocoReport& report() { return report_; }
  int elapsed_steps() const { return elapsed_steps_; }

  // Full physics state access for tests and oracles.
  const mjData* data() const { return data_; }
  // The engine other than MuJoCo this world runs on, or nullptr.
  const Engine* engine() const { return engine_.get(); }
  void SetState(const double* qpos, const double* qvel, double* obs);

  const Task& task() const { return *task_; }
  // The task's per-world scratch (episode options live there).
  double* scratch() { return scratch_.data(); }

 private:
  std::shared_ptr<const Task> task_;
  mjData* data_ = nullptr;
  bool owns_data_ = true;
  std::unique_ptr<Engine> engine_;  // nullptr: MuJoCo steps data_ itself
  std::vector<double> scratch_;
  Rng rng_;
  int max_episode_steps_;
  int elapsed_steps_ = 0;
  bool has_episode_ = false;
  bool failed_ = false;
  bool interrupted_ = false;
  bool last_step_unstable_ = false;
  MujocoReport report_;
};

}  // namespace joltgym
