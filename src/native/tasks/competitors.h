// What the competition games of Bansal et al. 2018 ("Emergent Complexity via
// Multi-Agent Competition", openai/multiagent-competition's gym-compete) share:
// the two robots they are played with (Ant, Humanoid), each robot's dense
// shaping constants, its reset noise, and the observation of one agent (own
// qpos, qvel, for humanoids cinert, cvel and qfrc_actuator of its bodies, its
// external contact forces clipped to [-1, 1], the opponent's torso position).
#pragma once

#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "../compose.h"
#include "../errors.h"
#include "../params.h"
#include "../rng.h"
#include "../task.h"

namespace joltgym {

// A robot of the competition games and the reference's constants for it.
struct CompetitorRules {
  std::string name;             // "ant" or "humanoid"
  std::string xml_file;         // default robot MJCF
  bool humanoid = false;        // adds cinert, cvel, qfrc_actuator to the observation
  double forward_weight = 1.0;  // x velocity of the centre of mass toward the goal
  double ctrl_weight = 0.5;     // x sum(action**2)
  double contact_weight = 0.5e-3;
  bool contact_clipped = true;    // Ant: cfrc_ext clipped to [-1, 1] before squaring
  double contact_cap = INFINITY;  // Humanoid: the contact cost is capped at 10
  double alive_bonus = 1.0;       // +bonus while standing, -bonus otherwise
  double standing_height = 0.28;  // torso z at or above which the robot stands
  double fall_height = 0.28;      // torso z below which the robot has fallen
  double reset_noise = 0.1;       // Ant-v5: U(-c, c) on qpos, c N(0, 1) on qvel;
                                  // Humanoid-v5: U(-c, c) on both
};

inline CompetitorRules AntRules() {
  CompetitorRules r;
  r.name = "ant";
  r.xml_file = "ant.xml";
  return r;
}

inline CompetitorRules HumanoidRules() {
  CompetitorRules r;
  r.name = "humanoid";
  r.xml_file = "humanoid.xml";
  r.humanoid = true;
  r.forward_weight = 0.25;
  r.ctrl_weight = 0.1;
  r.contact_weight = 0.5e-6;
  r.contact_clipped = false;
  r.contact_cap = 10.0;
  r.alive_bonus = 5.0;
  r.standing_height = 1.0;
  r.fall_height = 0.8;
  r.reset_noise = 0.01;
  return r;
}

// The rules of `robot` ("ant" / "humanoid"), or BadValue naming it.
inline CompetitorRules RulesFor(const std::string& robot, const std::string& game) {
  if (robot == "ant") return AntRules();
  if (robot == "humanoid") return HumanoidRules();
  throw BadValue(game + ": robot should be 'ant' or 'humanoid', got '" + robot + "'");
}

// The info columns of the weighted shaping terms.
struct ShapingColumns {
  int forward = -1, ctrl = -1, contact = -1, survive = -1;

  // Adds "reward_forward", "reward_ctrl", "reward_contact", "reward_survive".
  static ShapingColumns Add(InfoLayout& info) {
    ShapingColumns c;
    c.forward = info.Add("reward_forward");
    c.ctrl = info.Add("reward_ctrl");
    c.contact = info.Add("reward_contact");
    c.survive = info.Add("reward_survive");
    return c;
  }
};

// The shaping terms of one agent's step (unweighted; costs as positive numbers).
struct Shaping {
  double forward = 0.0, ctrl = 0.0, contact = 0.0, survive = 0.0;

  // Writes the terms scaled by `weight` (costs negative) to their info
  // columns; returns `base` plus them, added in that order.
  double Apply(double base, double weight, const ShapingColumns& c, double* info) const {
    info[c.forward] = weight * forward;
    info[c.ctrl] = -weight * ctrl;
    info[c.contact] = -weight * contact;
    info[c.survive] = weight * survive;
    return base + info[c.forward] + info[c.ctrl] + info[c.contact] + info[c.survive];
  }
};

// The game's `ctrl_cost_weight` keyword argument (an OptionalFloatParam: None keeps
// the robot's reference weight), checked and applied to `rules`.
inline void ApplyCtrlCostWeight(const Params& p, CompetitorRules* rules) {
  const double weight = p.Float("ctrl_cost_weight");
  if (std::isnan(weight)) return;
  if (!(weight >= 0.0))
    throw BadValue("ctrl_cost_weight should be >= 0 or None, got " + std::to_string(weight));
  rules->ctrl_weight = weight;
}

// The keyword argument read by ApplyCtrlCostWeight.
inline ParamSpec CtrlCostWeightParam() {
  return OptionalFloatParam("ctrl_cost_weight", NAN,
                            "weight of the control cost (shaping); None: the robot's (Ant 0.5, "
                            "Humanoid 0.1)");
}

// Two (or more) robots of one kind in a composed world: sizes, index maps,
// observation and shaping.
class Competitors {
 public:
  Competitors() = default;
  Competitors(const ComposedModel& world, CompetitorRules rules)
      : rules_(std::move(rules)), agents_(world.agents) {
    const mjModel* r = world.robot.get();
    nq_ = static_cast<int>(r->nq);
    nv_ = static_cast<int>(r->nv);
    nu_ = static_cast<int>(r->nu);
    nbody_ = static_cast<int>(r->nbody) - 1;
  }

  const CompetitorRules& rules() const { return rules_; }
  const std::vector<AgentIndex>& agents() const { return agents_; }
  int nq() const { return nq_; }
  int nv() const { return nv_; }
  int nu() const { return nu_; }
  int nbody() const { return nbody_; }

  // Entries of Put(): own qpos, qvel, [cinert, cvel, qfrc_actuator], cfrc_ext,
  // opponent torso position.
  int obs_dim() const {
    return nq_ + nv_ + (rules_.humanoid ? 16 * nbody_ + nv_ : 0) + 6 * nbody_ + 3;
  }

  const mjtNum* Root(const mjData* d, int k) const { return d->qpos + agents_[k].qpos_base; }
  // The robot's centre of mass (MuJoCo's subtree_com of its root body).
  const mjtNum* Com(const mjData* d, int k) const {
    return d->subtree_com + 3 * agents_[k].body_base;
  }
  bool Standing(const mjData* d, int k, double floor = 0.0) const {
    return Root(d, k)[2] - floor >= rules_.standing_height;
  }
  bool Fallen(const mjData* d, int k, double floor = 0.0) const {
    const double z = Root(d, k)[2] - floor;
    return z < rules_.fall_height || !std::isfinite(z);
  }

  // mj_resetData, then every agent's reset noise (no mj_forward: a game may
  // place more before it).
  void ResetWithNoise(const mjModel* m, mjData* d, Rng& rng) const {
    mj_resetData(m, d);
    for (int k = 0; k < static_cast<int>(agents_.size()); ++k) AddResetNoise(m, d, k, rng);
  }

  // Sets every agent's controls from `actions` (nu() per agent) and steps
  // `frame_skip` times; false if the simulation became unstable.
  bool Act(const mjModel* m, mjData* d, const float* actions, int frame_skip) const {
    SetAgentControls(d, agents_, nu_, actions);
    return Simulate(m, d, frame_skip);
  }

  // The robot's reset noise on agent k's coordinates (after mj_resetData).
  void AddResetNoise(const mjModel* m, mjData* d, int k, Rng& rng) const {
    const double c = rules_.reset_noise;
    if (!rules_.humanoid) {
      AddRobotResetNoise(m, d, agents_[k], nq_, nv_, c, rng);
      return;
    }
    const AgentIndex& a = agents_[k];
    for (int i = 0; i < nq_; ++i)
      d->qpos[a.qpos_base + i] = m->qpos0[a.qpos_base + i] + rng.Uniform(-c, c);
    for (int i = 0; i < nv_; ++i) d->qvel[a.qvel_base + i] = rng.Uniform(-c, c);
  }

  // Agent k's observation (obs_dim() floats) against opponent `o`; returns
  // the end of what it wrote.
  double* Put(const mjData* d, int k, int o, double* obs) const {
    const AgentIndex& a = agents_[k];
    obs = Copy(obs, d->qpos + a.qpos_base, nq_);
    obs = Copy(obs, d->qvel + a.qvel_base, nv_);
    if (rules_.humanoid) {
      obs = Copy(obs, d->cinert + 10 * a.body_base, 10 * nbody_);
      obs = Copy(obs, d->cvel + 6 * a.body_base, 6 * nbody_);
      obs = Copy(obs, d->qfrc_actuator + a.qvel_base, nv_);
    }
    const mjtNum* f = d->cfrc_ext + 6 * a.body_base;
    for (int i = 0; i < 6 * nbody_; ++i) *obs++ = std::clamp(f[i], -1.0, 1.0);
    return Copy(obs, Root(d, o), 3);
  }

  // Turns an observation written by Put() 180 degrees about the world z axis
  // (x, y -> -x, -y), as if the arena had been turned under the robot: world
  // positions, linear velocities and the x, y parts of the world-aligned
  // spatial quantities flip sign; the root quaternion q becomes
  // (0, 0, 0, 1) * q with its sign flipped, (qz, qy, -qx, -qw), so a robot
  // turned 180 degrees reads as unturned; body-frame angular velocity and
  // joint coordinates are unchanged. For a free-root robot only.
  void HalfTurn(double* obs) const {
    double* p = obs;
    p[0] = -p[0];
    p[1] = -p[1];
    const double w = p[3], x = p[4], y = p[5], z = p[6];
    p[3] = z;
    p[4] = y;
    p[5] = -x;
    p[6] = -w;
    p += nq_;
    p[0] = -p[0];  // free joint: world linear velocity, then local angular
    p[1] = -p[1];
    p += nv_;
    if (rules_.humanoid) {
      // cinert: Ixx Iyy Izz Ixy Ixz Iyz, mass x offset (3), mass.
      for (int b = 0; b < nbody_; ++b, p += 10) {
        p[4] = -p[4];
        p[5] = -p[5];
        p[6] = -p[6];
        p[7] = -p[7];
      }
      for (int b = 0; b < nbody_; ++b, p += 6) FlipXY6(p);  // cvel: angular, linear
      p[0] = -p[0];  // qfrc_actuator: free joint world force, local torque
      p[1] = -p[1];
      p += nv_;
    }
    for (int b = 0; b < nbody_; ++b, p += 6) FlipXY6(p);  // cfrc_ext: torque, force
    p[0] = -p[0];  // opponent root position
    p[1] = -p[1];
  }

  // The reference's shaping of agent k for one step: `progress` is the
  // centre of mass's motion toward the goal over `dt` (0 for fighters, who
  // use the closeness to the centre instead).
  Shaping Shape(const mjData* d, int k, const float* action, double progress, double dt) const {
    Shaping s;
    s.forward = rules_.forward_weight * progress / dt;
    s.ctrl = rules_.ctrl_weight * SumSquares(action, nu_);
    const mjtNum* f = d->cfrc_ext + 6 * agents_[k].body_base;
    double sq = 0.0;
    for (int i = 0; i < 6 * nbody_; ++i) {
      const double v = rules_.contact_clipped ? std::clamp(f[i], -1.0, 1.0) : f[i];
      sq += v * v;
    }
    s.contact = std::fmin(rules_.contact_weight * sq, rules_.contact_cap);
    s.survive = Standing(d, k) ? rules_.alive_bonus : -rules_.alive_bonus;
    return s;
  }

  // True if a geom of agent k touches a geom of agent j (penetrating
  // contacts, as the reference counts them).
  bool Touching(const mjData* d, int k, int j) const {
    return AgentsTouch(d, agents_[k], agents_[j]);
  }

 private:
  static void FlipXY6(double* v) {
    v[0] = -v[0];
    v[1] = -v[1];
    v[3] = -v[3];
    v[4] = -v[4];
  }
  static double* Copy(double* obs, const mjtNum* v, int n) {
    for (int i = 0; i < n; ++i) *obs++ = v[i];
    return obs;
  }

  CompetitorRules rules_;
  std::vector<AgentIndex> agents_;
  int nq_ = 0, nv_ = 0, nu_ = 0, nbody_ = 0;
};

// The yaw quaternion turning +x toward `angle` (radians) about z.
inline Placement FacingPlacement(double x, double y, double angle) {
  Placement p;
  p.pos[0] = x;
  p.pos[1] = y;
  p.quat[0] = std::cos(0.5 * angle);
  p.quat[3] = std::sin(0.5 * angle);
  return p;
}

}  // namespace joltgym
