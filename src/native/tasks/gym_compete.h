// The gym-compete form of the competition games (form="gym_compete"): each
// game played as openai/multiagent-competition's gym-compete plays it, so that
// the policies trained there (Bansal et al. 2018's agent zoo) can be fed our
// observations unchanged.
//
// A game's form is data beside the game (GymCompeteForm: its scene under
// assets/gym_compete/, its rules, the role each agent plays); the world, the
// observation layouts, resets and rules are computed here, once for every
// game. The scenes are written by tools/make_gym_compete_scenes.py.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "../task.h"

namespace joltgym {

// What an agent is in gym-compete (its class in gym_compete/new_envs/agents):
// what it observes and how it is shaped.
enum class GymCompeteRole {
  kAnt,              // Ant: run-to-goal
  kAntFighter,       // AntFighter: sumo
  kWalker,           // Humanoid: run-to-goal, you-shall-not-pass's walker
  kBlocker,          // HumanoidBlocker
  kHumanoidFighter,  // HumanoidFighter: sumo
  kKicker,           // HumanoidKicker
  kKeeper,           // HumanoidGoalKeeper
};

// Which game's goal_rewards decide the outcome.
enum class GymCompeteRules { kRunToGoal, kSumo, kYouShallNotPass, kKickAndDefend };

struct GymCompeteForm {
  std::string scene;  // MJCF under the asset folder
  GymCompeteRules rules = GymCompeteRules::kRunToGoal;
  std::string agent_prefix;              // agent k's bodies are "<prefix>_<k>/..."
  std::vector<std::string> agent_names;  // empty: "<prefix>_<k>"
  std::vector<GymCompeteRole> roles;     // one per agent, in agent order
  double min_radius = 0.0;               // sumo: the platform radius is drawn
  double max_radius = 0.0;               // from U(min_radius, max_radius)
};

// Adds the `form` keyword ("default" or "gym_compete") to a game: with
// form="gym_compete" the factory builds the game's gym-compete form from
// `form_of(params)`; the game's own keywords other than those in `shared`
// must then keep their defaults (they do not apply to the form), and only
// engine="mujoco" runs it. Apply before RunsOnJolt.
TaskInfo WithGymCompeteForm(TaskInfo info, std::function<GymCompeteForm(const Params&)> form_of,
                            std::vector<std::string> shared = {});

}  // namespace joltgym
