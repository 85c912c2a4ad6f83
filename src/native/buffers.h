// The arrays a WorldPool reads actions from and writes results into. They
// are allocated once by the owner (the Python binding allocates them as NumPy
// arrays) and stay put for the pool's lifetime; the pool only keeps pointers.
#pragma once

#include <cstdint>

namespace joltgym {

// What happened to a world in the last pool call (PoolBuffers::reset_kind;
// exported to Python as _core.ResetKind).
enum ResetKind : std::uint8_t {
  kStepped = 0,    // stepped
  kReset = 1,      // reset by this call (its info row holds reset info)
  kAutoReset = 2,  // an episode ended and the world was reset in the same call
                   // (final_obs / final_info hold the ended episode)
};

// Observations and rewards come in one of two layouts: float32 (obs, reward,
// final_obs; the games' and the C API's default) or float64 (obs64, reward64,
// final_obs64: Gymnasium v5's dtypes, bit-equal to its envs). Setting obs64
// chooses float64; the other three float32 pointers are then unused.
struct PoolBuffers {
  float* obs = nullptr;          // [num_envs, num_agents, obs_dim]
  float* reward = nullptr;       // [num_envs, num_agents]
  bool* terminated = nullptr;    // [num_envs, num_agents]
  bool* truncated = nullptr;     // [num_envs, num_agents]
  double* info = nullptr;        // [num_envs, num_agents, info_width]
  float* final_obs = nullptr;    // [num_envs, num_agents, obs_dim]   (same-step autoreset)
  double* final_info = nullptr;  // [num_envs, num_agents, info_width] (same-step autoreset)
  std::uint8_t* reset_kind = nullptr;  // [num_envs]: a ResetKind per world
  bool* unstable = nullptr;            // [num_envs]: physics blow-up ended the episode
  std::int32_t* elapsed = nullptr;     // [num_envs]: steps in the current episode
  double* obs64 = nullptr;        // float64 layout: [num_envs, num_agents, obs_dim]
  double* reward64 = nullptr;     // float64 layout: [num_envs, num_agents]
  double* final_obs64 = nullptr;  // float64 layout: [num_envs, num_agents, obs_dim]

  bool float64() const { return obs64 != nullptr; }
};

}  // namespace joltgym
