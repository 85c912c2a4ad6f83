// The gym-compete form of the competition games (see gym_compete.h). Each
// piece follows gym-compete's source (gym_compete/new_envs): the names in the
// comments are its methods.
#include "gym_compete.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>

#include "../compose.h"
#include "../errors.h"
#include "../outcome.h"

namespace joltgym {
namespace {

constexpr int kFrameSkip = 5;              // MultiAgentScene: MujocoEnv(xml_path, 5)
constexpr double kGoalReward = 1000.0;     // GOAL_REWARD
constexpr double kQposNoise = 0.1;         // MultiAgentScene.reset_model: U(-.1, .1) on qpos,
constexpr double kQvelNoise = 0.1;         // .1 N(0, 1) on qvel, every coordinate of the world
constexpr int kDefaultEpisodeSteps = 500;  // max_episode_steps of the registered games
constexpr double kGoalX = 4.0;             // the goal lines at x = +-4 (rightgoal, leftgoal)
constexpr double kTargetY = 3.0;           // HumanoidKicker.TARGET_Y, KickAndDefend.GOAL_Y

enum Slot {
  kSteps = 0,    // _elapsed_steps
  kRadius = 1,   // sumo: this episode's RADIUS
  kTouched = 2,  // sumo: agent_contacts; kick-and-defend: keeper_touched_ball
  kScratch = 3,
};

bool IsHumanoid(GymCompeteRole role) {
  return role != GymCompeteRole::kAnt && role != GymCompeteRole::kAntFighter;
}
bool IsFighter(GymCompeteRole role) {
  return role == GymCompeteRole::kAntFighter || role == GymCompeteRole::kHumanoidFighter;
}
bool IsFootballer(GymCompeteRole role) {
  return role == GymCompeteRole::kKicker || role == GymCompeteRole::kKeeper;
}

double* Copy(double* obs, const mjtNum* v, int n) {
  for (int i = 0; i < n; ++i) *obs++ = v[i];
  return obs;
}

double* CopyClipped(double* obs, const mjtNum* v, int n) {
  for (int i = 0; i < n; ++i) *obs++ = std::clamp(v[i], -1.0, 1.0);
  return obs;
}

class GymCompeteGame final : public Task {
 public:
  explicit GymCompeteGame(GymCompeteForm form) : form_(std::move(form)) {
    const std::string path = ResolveAssetPath(form_.scene);
    ModelPtr model = LoadModel(path);
    const mjModel* m = model.get();
    const int n = static_cast<int>(form_.roles.size());
    for (int k = 0; k < n; ++k) {
      const std::string prefix = form_.agent_prefix + "_" + std::to_string(k) + "/";
      const int torso = RequireId(m, mjOBJ_BODY, prefix + "torso");
      Agent a;
      a.index.body_base = torso;
      a.nbody = 0;
      for (int b = torso; b < m->nbody && m->body_rootid[b] == torso; ++b) ++a.nbody;
      a.index.qpos_base = m->jnt_qposadr[m->body_jntadr[torso]];
      a.index.qvel_base = m->jnt_dofadr[m->body_jntadr[torso]];
      a.index.geom_begin = m->body_geomadr[torso];
      a.index.geom_end = a.index.geom_begin;
      a.index.actuator_base = -1;
      int last_joint = -1;
      for (int j = 0; j < m->njnt; ++j) {
        if (m->jnt_bodyid[j] >= torso && m->jnt_bodyid[j] < torso + a.nbody) last_joint = j;
      }
      const int end_q =
          m->jnt_qposadr[last_joint] + (m->jnt_type[last_joint] == mjJNT_FREE ? 7 : 1);
      const int end_v = m->jnt_dofadr[last_joint] + (m->jnt_type[last_joint] == mjJNT_FREE ? 6 : 1);
      a.nq = end_q - a.index.qpos_base;
      a.nv = end_v - a.index.qvel_base;
      for (int g = 0; g < m->ngeom; ++g) {
        if (m->geom_bodyid[g] >= torso && m->geom_bodyid[g] < torso + a.nbody)
          a.index.geom_end = g + 1;
      }
      a.nu = 0;
      for (int u = 0; u < m->nu; ++u) {
        const int body = m->jnt_bodyid[m->actuator_trnid[2 * u]];
        if (body >= torso && body < torso + a.nbody) {
          if (a.index.actuator_base < 0) a.index.actuator_base = u;
          ++a.nu;
        }
      }
      a.role = form_.roles[k];
      // Agents with initial x < 0 have their goal on the right (MultiAgentEnv).
      a.goal = m->qpos0[a.index.qpos_base] < 0 ? kGoalX : -kGoalX;
      agents_.push_back(a);
      indices_.push_back(a.index);
    }
    if (form_.rules == GymCompeteRules::kKickAndDefend) {
      const int ball = RequireId(m, mjOBJ_JOINT, "ball");
      ball_qpos_ = m->jnt_qposadr[ball];
      ball_qvel_ = m->jnt_dofadr[ball];
      ball_geom_ = RequireId(m, mjOBJ_GEOM, "ball");
    }
    if (form_.rules == GymCompeteRules::kSumo) {
      for (int i = 0;; ++i) {
        const int body = mj_name2id(m, mjOBJ_BODY, ("platform_" + std::to_string(i)).c_str());
        if (body < 0) break;
        const int geom = m->body_geomadr[body];
        platforms_.push_back({m->body_mocapid[body], m->geom_size[3 * geom]});
        arena_height_ = 2.0 * m->geom_size[3 * geom + 1];
      }
      if (platforms_.empty())
        throw BadValue(path + ": a sumo scene needs platform_0, platform_1, ...");
    }
    const Agent& a = agents_[0];
    int dim = 0;
    const int other_qpos = static_cast<int>(m->nq) - a.nq;
    if (IsFootballer(a.role)) {
      // _get_obs_relative, then the ball block.
      dim = (a.nq - 2) + a.nv + 16 * a.nbody + a.nv + 6 * a.nbody + agents_[1].nq + 3 + 3;
    } else if (IsHumanoid(a.role)) {
      dim = a.nq + a.nv + 16 * a.nbody + a.nv + 6 * a.nbody + other_qpos;
    } else {
      dim = a.nq + a.nv + 6 * a.nbody + other_qpos;
    }
    if (IsFighter(a.role)) dim += 2 + 9 + 4;  // relative x, y, torso xmat; SumoEnv's 4 extras
    SetModel(model);
    SetDims(n, dim, a.nu);
    SetFrameSkip(kFrameSkip);
    SetActionBoundsFromCtrlRange(a.index.actuator_base);
    SetScratchSize(kScratch);
    SetAgentPrefix(form_.agent_prefix);
    if (!form_.agent_names.empty()) SetAgentNames(form_.agent_names);
    InfoLayout& info = mutable_info();
    outcome_ = info.AddLabel("outcome", OutcomeLabels(), /*at_reset=*/true);
    if (form_.rules == GymCompeteRules::kSumo) ring_radius_ = info.AddAtReset("ring_radius");
    reward_outcome_ = info.Add("reward_outcome");
    reward_move_ = info.Add("reward_move");
    reward_forward_ = info.Add("reward_forward");
    reward_ctrl_ = info.Add("reward_ctrl");
    reward_contact_ = info.Add("reward_contact");
    reward_survive_ = info.Add("reward_survive");
    if (form_.rules == GymCompeteRules::kSumo || form_.rules == GymCompeteRules::kKickAndDefend)
      touched_ = info.Add("touched");
    RenderCamera camera;
    camera.target = CameraTarget::kFixed;
    camera.distance = form_.rules == GymCompeteRules::kSumo ? 3.2 * form_.max_radius : 10.0;
    camera.elevation = -30.0;
    SetCamera(camera);
  }

  void Reset(mjData* d, double* scratch, Rng& rng, double* obs, double* info) const override {
    const mjModel* m = model();
    mj_resetData(m, d);
    scratch[kSteps] = 0.0;
    scratch[kTouched] = 0.0;
    scratch[kRadius] = 0.0;
    if (form_.rules == GymCompeteRules::kSumo) {
      // _reset_radius, _set_geom_radius: the platform nearest the drawn radius.
      scratch[kRadius] = rng.Uniform(form_.min_radius, form_.max_radius);
      std::size_t best = 0;
      for (std::size_t i = 1; i < platforms_.size(); ++i) {
        if (std::fabs(platforms_[i].radius - scratch[kRadius]) <
            std::fabs(platforms_[best].radius - scratch[kRadius]))
          best = i;
      }
      mjtNum* pos = d->mocap_pos + 3 * platforms_[best].mocap;
      pos[0] = 0.0;
      pos[1] = 0.0;
      pos[2] = 0.5 * arena_height_;
    }
    // MultiAgentScene.reset_model: every coordinate, quaternions (left
    // unnormalised) and the ball included.
    for (int i = 0; i < m->nq; ++i) d->qpos[i] = m->qpos0[i] + rng.Uniform(-kQposNoise, kQposNoise);
    for (int i = 0; i < m->nv; ++i) d->qvel[i] = kQvelNoise * rng.StandardNormal();
    if (form_.rules == GymCompeteRules::kSumo) {
      // SumoEnv._reset_agents: x, y drawn in the agent's half of the ring.
      const double r = scratch[kRadius];
      const double min_gap = 0.3 + form_.min_radius / 2.0;
      for (int k = 0; k < num_agents(); ++k) {
        const double x =
            k % 2 == 0 ? rng.Uniform(-r + min_gap, -0.3) : rng.Uniform(0.3, r - min_gap);
        const double y_lim = std::sqrt(std::fmax(r * r - x * x, 0.0));
        const double y = rng.Uniform(-y_lim + min_gap, y_lim - min_gap);
        d->qpos[agents_[k].index.qpos_base] = x;
        d->qpos[agents_[k].index.qpos_base + 1] = y;
      }
    }
    if (form_.rules == GymCompeteRules::kKickAndDefend) {
      // KickAndDefend._reset: the agents in their areas, then the ball.
      static constexpr double kRangeX[2][2] = {{-3.5, -0.5}, {1.6, 3.5}};
      for (int k = 0; k < 2; ++k) {
        const double x = rng.Uniform(kRangeX[k][0], kRangeX[k][1]);
        const double y = rng.Uniform(-2.0, 2.0);
        d->qpos[agents_[k].index.qpos_base] = x;
        d->qpos[agents_[k].index.qpos_base + 1] = y;
      }
      d->qpos[ball_qpos_] = rng.Uniform(-2.0, 1.0);
      d->qpos[ball_qpos_ + 1] = rng.Uniform(-4.0, 4.0);
      d->qpos[ball_qpos_ + 2] = 0.35;
      if (d->qvel[ball_qvel_] < 0) {
        for (int i = 0; i < 3; ++i) d->qvel[ball_qvel_ + i] = 0.1;
      }
    }
    mj_forward(m, d);
    mj_rnePostConstraint(m, d);
    Observe(d, scratch, obs);
    const int width = info_layout().width();
    for (int k = 0; k < num_agents(); ++k) {
      info[k * width + outcome_] = OutcomeCode(Outcome::kOngoing);
      if (ring_radius_ >= 0) info[k * width + ring_radius_] = scratch[kRadius];
    }
  }

  bool Step(mjData* d, double* scratch, const float* actions,
            const StepOutput& out) const override {
    const mjModel* m = model();
    const int n = num_agents();
    double com_before[2];
    for (int k = 0; k < n; ++k) com_before[k] = d->subtree_com[3 * agents_[k].index.body_base];
    SetAgentControls(d, indices_, act_dim(), actions);
    const bool stable = Simulate(m, d, frame_skip());
    scratch[kSteps] += 1.0;
    Observe(d, scratch, out.obs);

    // Each agent's after_step: its move reward and whether it is done.
    Move move[2];
    for (int k = 0; k < n; ++k) move[k] = AfterStep(d, k, actions + k * act_dim(), com_before[k]);

    Outcome outcome[2] = {Outcome::kOngoing, Outcome::kOngoing};
    double goal[2] = {0.0, 0.0};
    bool ended = false;  // by the game's rules (the time limit is the owner's truncation)
    const bool timeout = scratch[kSteps] >= Limit();
    switch (form_.rules) {
      case GymCompeteRules::kRunToGoal:
        ended = RunToGoal(d, move, outcome, goal, timeout);
        break;
      case GymCompeteRules::kSumo:
        ended = Sumo(d, scratch, outcome, goal, timeout);
        break;
      case GymCompeteRules::kYouShallNotPass:
        ended = YouShallNotPass(d, outcome, goal, timeout);
        break;
      case GymCompeteRules::kKickAndDefend:
        ended = KickAndDefend(d, scratch, move, outcome, goal, timeout);
        break;
    }
    // Without the owner's truncation (max_cycles=None) the game's own 500 steps end it.
    if (timeout && episode_limit() == 0) ended = true;
    const int width = info_layout().width();
    for (int k = 0; k < n; ++k) {
      out.reward[k] = goal[k] + move[k].reward;
      // A result the time limit settles is in the info; the owner truncates.
      out.terminated[k] = ended;
      double* info = out.info + k * width;
      info[outcome_] = OutcomeCode(outcome[k]);
      info[reward_outcome_] = goal[k];
      info[reward_move_] = move[k].reward;
      info[reward_forward_] = move[k].forward;
      info[reward_ctrl_] = move[k].ctrl;
      info[reward_contact_] = move[k].contact;
      info[reward_survive_] = move[k].survive;
      if (ring_radius_ >= 0) info[ring_radius_] = scratch[kRadius];
      if (touched_ >= 0) info[touched_] = scratch[kTouched];
    }
    return stable;
  }

  void Observe(const mjData* d, const double* scratch, double* obs) const override {
    const mjModel* m = model();
    const int n = num_agents();
    for (int k = 0; k < n; ++k) {
      const Agent& a = agents_[k];
      const Agent& o = agents_[1 - k];
      const mjtNum* q = d->qpos + a.index.qpos_base;
      const int b = a.index.body_base;
      if (IsFootballer(a.role)) {
        // HumanoidKicker._get_obs: _get_obs_relative, the ball relative to
        // the torso, TARGET - ball x, TARGET_Y - ball y, -TARGET_Y - ball y.
        obs = Copy(obs, q + 2, a.nq - 2);
        obs = Copy(obs, d->qvel + a.index.qvel_base, a.nv);
        obs = Copy(obs, d->cinert + 10 * b, 10 * a.nbody);
        obs = Copy(obs, d->cvel + 6 * b, 6 * a.nbody);
        obs = Copy(obs, d->qfrc_actuator + a.index.qvel_base, a.nv);
        obs = CopyClipped(obs, d->cfrc_ext + 6 * b, 6 * a.nbody);
        const mjtNum* qo = d->qpos + o.index.qpos_base;
        *obs++ = qo[0] - q[0];
        *obs++ = qo[1] - q[1];
        obs = Copy(obs, qo + 2, o.nq - 2);
        const mjtNum* ball = d->qpos + ball_qpos_;
        *obs++ = ball[0] - q[0];
        *obs++ = ball[1] - q[1];
        *obs++ = ball[2];
        *obs++ = kGoalX - ball[0];  // TARGET: +4 for both (the keeper's reset_agent turns it)
        *obs++ = kTargetY - ball[1];
        *obs++ = -kTargetY - ball[1];
        continue;
      }
      obs = Copy(obs, q, a.nq);
      obs = Copy(obs, d->qvel + a.index.qvel_base, a.nv);
      if (IsHumanoid(a.role)) {
        obs = Copy(obs, d->cinert + 10 * b, 10 * a.nbody);
        obs = Copy(obs, d->cvel + 6 * b, 6 * a.nbody);
        obs = Copy(obs, d->qfrc_actuator + a.index.qvel_base, a.nv);
      }
      obs = CopyClipped(obs, d->cfrc_ext + 6 * b, 6 * a.nbody);
      // get_other_qpos: the world's qpos without the agent's own.
      const double* other = obs;
      obs = Copy(obs, d->qpos, a.index.qpos_base);
      obs = Copy(obs, d->qpos + a.index.qpos_base + a.nq,
                 static_cast<int>(m->nq) - a.index.qpos_base - a.nq);
      if (IsFighter(a.role)) {
        *obs++ = other[0] - q[0];
        *obs++ = other[1] - q[1];
        obs = Copy(obs, d->xmat + 9 * b, 9);
        // SumoEnv._get_obs: RADIUS, own and other distance to the edge, steps left.
        *obs++ = scratch[kRadius];
        *obs++ = EdgeDistance(d, scratch, k);
        *obs++ = EdgeDistance(d, scratch, 1 - k);
        *obs++ = Limit() - scratch[kSteps];
      }
    }
  }

 private:
  struct Agent {
    AgentIndex index;
    int nq = 0, nv = 0, nu = 0, nbody = 0;
    GymCompeteRole role = GymCompeteRole::kAnt;
    double goal = kGoalX;  // the goal line it runs to (x); its sign is the direction
  };
  struct Platform {
    int mocap;
    double radius;
  };
  struct Move {
    double reward = 0.0, forward = 0.0, ctrl = 0.0, contact = 0.0, survive = 0.0;
    bool done = false;
  };

  double Limit() const { return episode_limit() > 0 ? episode_limit() : kDefaultEpisodeSteps; }

  double EdgeDistance(const mjData* d, const double* scratch, int k) const {
    const mjtNum* q = d->qpos + agents_[k].index.qpos_base;
    return scratch[kRadius] - std::sqrt(q[0] * q[0] + q[1] * q[1]);
  }

  // The agent class's after_step.
  Move AfterStep(const mjData* d, int k, const float* action, double com_before) const {
    const mjModel* m = model();
    const Agent& a = agents_[k];
    const mjtNum* q = d->qpos + a.index.qpos_base;
    Move mv;
    const bool clip = a.role == GymCompeteRole::kHumanoidFighter || IsFootballer(a.role);
    double sq = 0.0;
    for (int i = 0; i < a.nu; ++i) {
      double u = action[i];
      if (clip) u = std::clamp(u, action_low()[i], action_high()[i]);
      sq += u * u;
    }
    const mjtNum* f = d->cfrc_ext + 6 * a.index.body_base;
    double fsq = 0.0;
    for (int i = 0; i < 6 * a.nbody; ++i) {
      const double v = a.role == GymCompeteRole::kAnt ? std::clamp(f[i], -1.0, 1.0) : f[i];
      fsq += v * v;
    }
    const double com_after = d->subtree_com[3 * a.index.body_base];
    const double sign = a.goal < 0 ? -1.0 : 1.0;  // move_left
    const double floor = IsFighter(a.role) ? arena_height_ : 0.0;
    const double z = q[2] - floor;
    double extra = 0.0;
    switch (a.role) {
      case GymCompeteRole::kAnt:
        mv.forward = sign * (com_after - com_before) / dt();
        mv.ctrl = 0.5 * sq;
        mv.contact = 0.5e-3 * fsq;
        mv.survive = z >= 0.28 ? 1.0 : -1.0;
        mv.done = !(z >= 0.28);
        break;
      case GymCompeteRole::kAntFighter:
        mv.ctrl = 0.1 * sq;
        mv.contact = std::fmin(0.5e-6 * fsq, 10.0);
        mv.survive = z >= 0.28 ? 5.0 : -5.0;
        extra = -std::sqrt(q[0] * q[0] + q[1] * q[1]);
        mv.done = z <= 0.28;
        break;
      case GymCompeteRole::kHumanoidFighter:
        mv.ctrl = 0.1 * sq;
        mv.contact = std::fmin(0.5e-6 * fsq, 10.0);
        mv.survive = z >= 1.0 ? 5.0 : -5.0;
        extra = -std::sqrt(q[0] * q[0] + q[1] * q[1]);
        mv.done = z <= 0.5;
        break;
      case GymCompeteRole::kWalker:
      case GymCompeteRole::kKicker:
        // Humanoid.after_step: the forward term over one timestep (not dt).
        mv.forward = sign * 0.25 * (com_after - com_before) / m->opt.timestep;
        mv.ctrl = 0.1 * sq;
        mv.contact = std::fmin(0.5e-6 * fsq, 10.0);
        mv.survive = z >= 1.0 ? 5.0 : -5.0;
        mv.done = z < 0.8;
        if (a.role == GymCompeteRole::kWalker) {
          extra = -std::fabs(q[0] - a.goal);
        } else {
          const mjtNum* ball = d->qpos + ball_qpos_;
          extra = -std::hypot(q[0] - ball[0], q[1] - ball[1]);
        }
        break;
      case GymCompeteRole::kBlocker:
        mv.ctrl = 0.1 * sq;
        mv.contact = std::fmin(0.5e-6 * fsq, 10.0);
        mv.survive = z >= 1.0 ? 5.0 : -5.0;
        mv.done = z <= 0.5;
        break;
      case GymCompeteRole::kKeeper: {
        mv.ctrl = 0.1 * sq;
        mv.contact = std::fmin(0.5e-6 * fsq, 10.0);
        const bool at_goal = q[0] <= kGoalX + 0.05 && std::fabs(q[1]) <= kTargetY;
        mv.survive = z >= 1.0 && at_goal ? 5.0 : -5.0;
        mv.done = z <= 0.5;
        break;
      }
    }
    mv.reward = mv.forward - mv.ctrl - mv.contact + mv.survive + extra;
    return mv;
  }

  // True if a geom of agent k touches a geom of agent j (penetrating).
  bool Touching(const mjData* d, int k, int j) const {
    return AgentsTouch(d, agents_[k].index, agents_[j].index);
  }

  // MultiAgentEnv.goal_rewards and _get_done: one agent past its goal line
  // wins; both, a draw; the episode also ends when both have fallen.
  bool RunToGoal(const mjData* d, const Move* move, Outcome* outcome, double* goal,
                 bool timeout) const {
    bool reached[2];
    for (int k = 0; k < 2; ++k) {
      const double x = d->subtree_com[3 * agents_[k].index.body_base];
      reached[k] = agents_[k].goal > 0 ? x > agents_[k].goal : x < agents_[k].goal;
    }
    if (reached[0] != reached[1]) {
      for (int k = 0; k < 2; ++k) {
        outcome[k] = reached[k] ? Outcome::kWin : Outcome::kLoss;
        goal[k] = reached[k] ? kGoalReward : -kGoalReward;
      }
      return true;
    }
    if ((reached[0] && reached[1]) || (move[0].done && move[1].done)) {
      outcome[0] = outcome[1] = Outcome::kDraw;
      return true;
    }
    if (timeout) outcome[0] = outcome[1] = Outcome::kDraw;
    return false;
  }

  // SumoEnv.goal_rewards: a fall, else leaving the ring, loses; the other
  // wins only if the two have touched in the bout; the time limit: a draw
  // (-GOAL_REWARD for both).
  bool Sumo(const mjData* d, double* scratch, Outcome* outcome, double* goal, bool timeout) const {
    if (Touching(d, 0, 1)) scratch[kTouched] = 1.0;
    const bool touched = scratch[kTouched] != 0.0;
    bool fallen[2], past[2];
    for (int k = 0; k < 2; ++k) {
      const mjtNum* q = d->qpos + agents_[k].index.qpos_base;
      const double limit =
          (agents_[k].role == GymCompeteRole::kAntFighter ? 0.3 : 0.5) + arena_height_;
      fallen[k] = !(q[2] > limit);
      past[k] = std::sqrt(q[0] * q[0] + q[1] * q[1]) > scratch[kRadius];
    }
    const bool* lost = nullptr;
    if (fallen[0] || fallen[1]) {
      lost = fallen;
    } else if (past[0] || past[1]) {
      lost = past;
    }
    if (lost != nullptr) {
      for (int k = 0; k < 2; ++k) {
        if (lost[k]) {
          outcome[k] = Outcome::kLoss;
          goal[k] = -kGoalReward;
        } else {
          outcome[k] = touched ? Outcome::kWin : Outcome::kDraw;
          goal[k] = touched ? kGoalReward : 0.0;
        }
      }
      return true;
    }
    if (timeout) {
      for (int k = 0; k < 2; ++k) {
        outcome[k] = Outcome::kDraw;
        goal[k] = -kGoalReward;
      }
    }
    return false;
  }

  // HumansBlockingEnv.goal_rewards: the walker past its goal line wins; the
  // walker fallen (torso z <= 0.3) or the time up: the blocker wins (+1000
  // only for a fall, and only if the blocker stands).
  bool YouShallNotPass(const mjData* d, Outcome* outcome, double* goal, bool timeout) const {
    int walker = 0, blocker = 1;
    if (agents_[0].role != GymCompeteRole::kWalker) std::swap(walker, blocker);
    const double x = d->subtree_com[3 * agents_[walker].index.body_base];
    const double g = agents_[walker].goal;
    const bool touchdown = g > 0 ? x > g : x < g;
    const double walker_z = d->qpos[agents_[walker].index.qpos_base + 2];
    const double blocker_z = d->qpos[agents_[blocker].index.qpos_base + 2];
    if (touchdown) {
      outcome[walker] = Outcome::kWin;
      outcome[blocker] = Outcome::kLoss;
      goal[walker] = kGoalReward;
      goal[blocker] = -kGoalReward;
      return true;
    }
    const bool walker_fallen = !(walker_z > 0.3);
    if (walker_fallen) {
      outcome[walker] = Outcome::kLoss;
      outcome[blocker] = Outcome::kWin;
      if (blocker_z > 0.3) goal[blocker] = kGoalReward;
      return true;
    }
    if (timeout) {
      outcome[walker] = Outcome::kLoss;
      outcome[blocker] = Outcome::kWin;
      goal[walker] = -kGoalReward;
    }
    return false;
  }

  // KickAndDefend.goal_rewards: a goal (ball x > 4, |y| <= 3) wins for the
  // kicker; the ball past the line, turned back (x velocity < 0, speed > 1),
  // both players down or the time up: the keeper wins (+500 each for having
  // touched the ball and for standing); the keeper more than 2.5 m from its
  // line: a foul, neither wins (-1000 for the keeper).
  bool KickAndDefend(const mjData* d, double* scratch, const Move* move, Outcome* outcome,
                     double* goal, bool timeout) const {
    int kicker = 0, keeper = 1;
    if (agents_[0].role != GymCompeteRole::kKicker) std::swap(kicker, keeper);
    const mjtNum* ball = d->qpos + ball_qpos_;
    const mjtNum* ball_v = d->qvel + ball_qvel_;
    bool ball_out = ball[0] > kGoalX;  // past the goal line, or turned back
    if (ball_v[0] < 0 &&
        std::sqrt(ball_v[0] * ball_v[0] + ball_v[1] * ball_v[1] + ball_v[2] * ball_v[2]) > 1)
      ball_out = true;
    const AgentIndex& kp = agents_[keeper].index;
    for (int i = 0; i < d->ncon; ++i) {
      const mjContact& c = d->contact[i];
      if (c.geom[0] == ball_geom_ && kp.OwnsGeom(c.geom[1]) &&
          c.dist < 0)
        scratch[kTouched] = 1.0;
    }
    if (ball[0] > kGoalX && std::fabs(ball[1]) <= kTargetY) {
      outcome[kicker] = Outcome::kWin;
      outcome[keeper] = Outcome::kLoss;
      goal[kicker] = kGoalReward;
      goal[keeper] = -kGoalReward;
      return true;
    }
    const bool both_down = move[kicker].done && move[keeper].done;
    if (ball_out || both_down || timeout) {
      outcome[kicker] = Outcome::kLoss;
      outcome[keeper] = Outcome::kWin;
      goal[kicker] = -kGoalReward;
      goal[keeper] = kGoalReward;
      if (scratch[kTouched] != 0.0) goal[keeper] += 0.5 * kGoalReward;
      if (d->qpos[kp.qpos_base + 2] > 0.8) goal[keeper] += 0.5 * kGoalReward;
      return ball_out || both_down;
    }
    if (std::fabs(kGoalX - d->qpos[kp.qpos_base]) > 2.5) {
      outcome[kicker] = outcome[keeper] = Outcome::kDraw;
      goal[keeper] = -kGoalReward;
      return true;
    }
    return false;
  }

  GymCompeteForm form_;
  std::vector<Agent> agents_;
  std::vector<AgentIndex> indices_;
  std::vector<Platform> platforms_;
  double arena_height_ = 0.0;
  int ball_qpos_ = -1, ball_qvel_ = -1, ball_geom_ = -1;
  int outcome_ = -1, ring_radius_ = -1, reward_outcome_ = -1, reward_move_ = -1,
      reward_forward_ = -1, reward_ctrl_ = -1, reward_contact_ = -1, reward_survive_ = -1,
      touched_ = -1;
};

bool SameValue(const ParamValue& a, const ParamValue& b) {
  if (a.is_text != b.is_text || a.text != b.text || a.numbers.size() != b.numbers.size())
    return false;
  for (std::size_t i = 0; i < a.numbers.size(); ++i) {
    const double x = a.numbers[i], y = b.numbers[i];
    if (!(x == y || (std::isnan(x) && std::isnan(y)))) return false;
  }
  return true;
}

}  // namespace

TaskInfo WithGymCompeteForm(TaskInfo info, std::function<GymCompeteForm(const Params&)> form_of,
                            std::vector<std::string> shared) {
  const std::vector<ParamSpec> own = info.params;
  info.params.push_back(StringParam("form", "default",
                                    "'default' (this project's game) or 'gym_compete' "
                                    "(gym-compete's scene, rules and observations, "
                                    "for Bansal et al.'s agent zoo; docs/guides/gym_compete.md)"));
  info.doc += R"(
``form="gym_compete"``: the game as openai/multiagent-competition's gym-compete plays it (its
scene with MuJoCo 1.31's masses, physics options, resets, per-agent observation vectors and
rules), so that the agent zoo's policies read our observations unchanged. MuJoCo only; the
game's other keywords keep their defaults. See docs/guides/gym_compete.md.
)";
  TaskFactory inner = std::move(info.factory);
  info.factory = [inner, form_of, own, shared](const Params& p) -> std::shared_ptr<const Task> {
    const std::string& form = p.String("form");
    if (form == "default") return inner(p);
    if (form != "gym_compete")
      throw BadValue("form should be 'default' or 'gym_compete', got '" + form + "'");
    if (p.Has("engine") && p.String("engine") != "mujoco") {
      throw BadValue(
          "form='gym_compete' runs on engine='mujoco' only (gym-compete's PGS solver, RK4 and "
          "sumo's per-episode platform are MuJoCo's), got engine='" +
          p.String("engine") + "'");
    }
    for (const ParamSpec& spec : own) {
      if (std::find(shared.begin(), shared.end(), spec.name) != shared.end()) continue;
      if (!SameValue(p.Get(spec.name), spec.default_value)) {
        throw BadValue(spec.name +
                       " does not apply to form='gym_compete' (the form is gym-compete's "
                       "game as it was); leave it at its default, or use form='default'");
      }
    }
    return std::make_shared<GymCompeteGame>(form_of(p));
  };
  return info;
}

}  // namespace joltgym
