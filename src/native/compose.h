// Shared worlds: one arena MJCF plus N copies of a robot MJCF compiled into a
// single mjModel with MuJoCo's model-editing API (mjSpec + mjs_attach).
//
// Each copy is attached under a frame at its placement with the name prefix
// "<agent_prefix><k>/". The robot's inertial properties are first taken from
// a standalone compile of the robot file and written into the spec as
// explicit inertials, so every copy is physically the robot of the single-
// agent task (e.g. HalfCheetah's settotalmass scaling survives the attach).
// Contact bits are assigned per agent so that different agents' geoms collide
// with each other while each robot keeps its own self-collision rules.
#pragma once

#include <string>
#include <vector>

#include "model.h"
#include "rng.h"

namespace joltgym {

struct Placement {
  double pos[3] = {0, 0, 0};
  double quat[4] = {1, 0, 0, 0};
};

// Where one agent's robot lives in the composed model. All its elements are
// contiguous, so a robot-level index i maps to base + i.
struct AgentIndex {
  int body_base = 0;      // id of the robot's root body
  int qpos_base = 0;      // qpos address of the robot's first joint
  int qvel_base = 0;      // dof address of the robot's first joint
  int actuator_base = 0;  // id of the robot's first actuator
  int geom_begin = 0;     // [geom_begin, geom_end): the robot's geoms
  int geom_end = 0;

  bool OwnsGeom(int geom) const { return geom >= geom_begin && geom < geom_end; }
};

// True if a geom of agent `a` touches a geom of agent `b` in `d`'s contacts
// (penetrating ones, dist < 0, as gym-compete counts a touch).
inline bool AgentsTouch(const mjData* d, const AgentIndex& a, const AgentIndex& b) {
  for (int i = 0; i < d->ncon; ++i) {
    const mjContact& c = d->contact[i];
    if (c.dist >= 0) continue;
    if ((a.OwnsGeom(c.geom[0]) && b.OwnsGeom(c.geom[1])) ||
        (a.OwnsGeom(c.geom[1]) && b.OwnsGeom(c.geom[0]))) {
      return true;
    }
  }
  return false;
}

struct ComposedModel {
  ModelPtr model;
  ModelPtr robot;  // the robot compiled alone, for its sizes
  std::vector<AgentIndex> agents;
};

// `root_body` names the robot's root body in `robot_path`. With
// `agents_collide`, geoms of different agents touch; otherwise agents only
// touch the arena. Throws FileNotFound / std::invalid_argument with MuJoCo's
// message on bad files, and std::invalid_argument naming the robot file when
// it is not a robot: `root_body` must be its first body with every other body
// under it, carry its first joint, and its actuators (at least one) must
// drive joints. Every size (nq, nv, nu, bodies) comes from the compiled
// robot; ComposedModel::robot holds it.
ComposedModel ComposeWorld(const std::string& arena_path, const std::string& robot_path,
                           const std::string& root_body, const std::string& agent_prefix,
                           const std::vector<Placement>& placements, bool agents_collide);

// Throws std::invalid_argument naming `robot_path` and `game` unless the
// robot's root joint is of an allowed kind: a free joint, or a slide joint
// along x (HalfCheetah's rootx, whose qpos is the x position).
void RequireRootJoint(const ComposedModel& world, const std::string& robot_path, bool allow_free,
                      bool allow_slide_x, const std::string& game);

// Adds a robot's reset noise after mj_resetData, as its single-agent task
// does (HalfCheetah-v5 / Ant-v5): qpos0 + U(-scale, scale) on its nq
// coordinates, then scale * N(0, 1) on its nv velocities.
void AddRobotResetNoise(const mjModel* model, mjData* data, const AgentIndex& agent, int nq, int nv,
                        double scale, Rng& rng);

// Writes every agent's `nu` controls from actions [num_agents, nu].
void SetAgentControls(mjData* data, const std::vector<AgentIndex>& agents, int nu,
                      const float* actions);

}  // namespace joltgym
