// Sumo: two Ants or two Humanoids in one shared world on a round ring (see
// kDoc).
//
// The reported reward terms include the shaping weight; several outcomes in
// one step are settled as documented. robot="ant" keeps the game as it was
// before robots were selectable; robot="humanoid" follows gym-compete's
// humanoid sumo (contact needed to win, fighters' shaping and observation).
#include <cmath>

#include "../compose.h"
#include "../outcome.h"
#include "competitors.h"
#include "gym_compete.h"
#include "locomotion.h"

namespace joltgym {
namespace {

constexpr double kPi = 3.14159265358979323846;

constexpr const char* kDoc =
    R"(Sumo: two Ants (or two Humanoids) push each other out of a ring, in one shared MuJoCo world.

=================  ============================================================
Agents             ``ant_0``, ``ant_1`` (``robot="humanoid"``: ``humanoid_0``,
                   ``humanoid_1``; its rules are in the second table)
Ring               radius ``ring_radius`` (3 m); None: drawn each episode from
                   U(``min_ring_radius``, min(``max_ring_radius``, the episode option
                   ``ring_radius_limit``)), the robot's range by default (Ant 2.5 to
                   4.5 m, Humanoid 1.5 to 3.5 m); raising ring_radius_limit with
                   ``reset(options=...)`` / ``WorldPool.set_option`` grows the ring as
                   a curriculum. The drawn ring is at ``max_ring_radius`` (or ring_radius)
Start              torsos ``spawn_distance`` (1 m) from the centre on opposite
                   sides, facing each other, at a random phase; Ant-v5 reset noise
Action (8)         Ant-v5 hip and ankle torques in [-1, 1] (the robot's actuators)
Observation (45)   float32, in the agent's own torso frame where noted (sizes for
                   ant.xml; another ``xml_file`` with a free root joint on its
                   ``torso`` gives nq - 2 + nv + 18):
                   [0:13] own qpos[2:] (torso z, quaternion, 8 joint angles);
                   [13:27] own qvel; [27:30] opponent position (own frame);
                   [30:33] opponent forward axis, [33:36] its up axis (own frame);
                   [36:39] opponent linear and [39:42] angular velocity (own frame);
                   [42] own and [43] opponent distance to the ring's edge;
                   [44] fraction of the episode left
Outcome            an Ant loses when its torso leaves the ring (``ring_radius``,
                   3 m, horizontally) or falls (torso below ``fall_height``,
                   0.3 m); the other wins; both at once, or no result after
                   ``max_cycles`` (500) steps: a draw
Reward             ``reward_outcome``: +``win_reward`` (1000) win, -win_reward loss,
                   -``draw_penalty`` (100) draw; plus ``shaping_weight`` (1) x
                   (``reward_approach``: own velocity toward the opponent,
                   ``reward_push``: rate the opponent's distance from the centre grows,
                   ``reward_ctrl``: -``ctrl_cost_weight`` (0.1) x sum(action**2))
Info               ``outcome`` (``Outcome`` code: 0 ongoing, 1 win, 2 loss, 3 draw), the reward
                   terms, ``distance_to_edge``, ``opponent_distance_to_edge`` (all
                   also on reset, the reward terms 0)
Episode end        for both agents together: terminated on a result, truncated
                   at ``max_cycles``
Annealing          ``reset(options={"shaping_weight": w})`` (or the keyword
                   argument) sets the shaping weight for the following episodes
=================  ============================================================

``robot="humanoid"`` (humanoid.xml, Humanoid-v5 physics and reset noise 0.01,
the humanoid arena), as gym-compete's humanoid sumo:

=================  ============================================================
Action (17)        Humanoid-v5 torques in [-0.4, 0.4]
Observation (374)  float32, world frame: [0:24] own qpos, [24:47] own qvel,
                   [47:177] cinert and [177:255] cvel of its 13 bodies,
                   [255:278] qfrc_actuator, [278:356] cfrc_ext clipped to [-1, 1],
                   [356:359] the opponent's torso position, [359:361] the
                   opponent's x, y relative to own, [361:370] own torso rotation
                   matrix, [370] ring radius, [371] own and [372] opponent distance
                   to the edge, [373] fraction of the episode left
Outcome            a Humanoid loses when its torso leaves the ring or it falls
                   (torso z < ``fall_height``, 0.5 m); the other wins only if the
                   two have touched during the bout (else its outcome is "draw",
                   reward 0); both at once: both lose; ``max_cycles`` (500) steps:
                   a draw for both (-``draw_penalty``)
Reward             ``reward_outcome`` plus ``shaping_weight`` x (``reward_center``:
                   -distance of the torso from the ring's centre, ``reward_ctrl``:
                   -0.1 x sum(action**2), ``reward_contact``: -min(0.5e-6 x
                   sum(cfrc_ext**2), 10), ``reward_survive``: +5 while the torso is at
                   z >= 1, else -5)
Info               ``outcome``, ``distance_to_edge``, ``opponent_distance_to_edge``,
                   ``ring_radius``, ``touched``, the reward terms (all also on
                   reset, the step-only ones 0)
=================  ============================================================
)";

enum Slot {
  kShapingWeight = 0,
  kSteps = 1,
  kFinished = 2,
  kRadius = 3,       // this episode's ring radius
  kRadiusLimit = 4,  // episode option: upper end of the radius draw
  kTouched = 5,      // 1 once the two robots have touched in this episode
  kScratch = 6,
};

// Humanoid observation entries after Competitors::Put: the opponent's
// relative x, y (2), own torso rotation matrix (9), ring radius, the two edge
// distances, the fraction of the episode left (4).
constexpr int kHumanoidExtras = 2 + 9 + 4;

// Observation entries after the agent's own qpos[2:] and qvel: opponent
// position, forward and up axes, linear and angular velocity (5 x 3), the two
// edge distances and the fraction of the episode left.
constexpr int kOpponentFeatures = 5 * 3 + 3;

class Sumo final : public Task {
 public:
  explicit Sumo(const Params& p) {
    const CompetitorRules rules = RulesFor(p.String("robot"), "sumo");
    humanoid_ = rules.humanoid;
    const CompetitorRules defaults = humanoid_ ? HumanoidRules() : AntRules();
    const double default_min = humanoid_ ? 1.5 : 2.5, default_max = humanoid_ ? 3.5 : 4.5;
    min_radius_ = OrDefault(p, "min_ring_radius", default_min);
    max_radius_ = OrDefault(p, "max_ring_radius", default_max);
    if (!(min_radius_ > 0.0))
      throw BadValue("min_ring_radius should be > 0, got " + FloatText(min_radius_));
    if (!(max_radius_ >= min_radius_)) {
      throw BadValue("max_ring_radius should be >= min_ring_radius (" +
                     FloatText(min_radius_) + "), got " + FloatText(max_radius_));
    }
    ring_radius_ = p.Float("ring_radius");  // NaN: drawn per episode
    drawn_radius_ = std::isnan(ring_radius_);
    if (!drawn_radius_) ring_radius_ = Positive(p, "ring_radius");
    const double smallest = drawn_radius_ ? min_radius_ : ring_radius_;
    spawn_distance_ = Positive(p, "spawn_distance");
    if (spawn_distance_ >= smallest) {
      throw BadValue(std::string("spawn_distance should be < ") +
                     (drawn_radius_ ? "min_ring_radius (" : "ring_radius (") +
                     FloatText(smallest) + "), got " + FloatText(spawn_distance_));
    }
    fall_height_ = OrDefault(p, "fall_height", humanoid_ ? 0.5 : 0.3);
    win_reward_ = p.Float("win_reward");
    draw_penalty_ = p.Float("draw_penalty");
    shaping_weight_ = p.Float("shaping_weight");
    ctrl_weight_ = p.Float("ctrl_cost_weight");
    noise_scale_ = OrDefault(p, "reset_noise_scale", defaults.reset_noise);
    if (!(noise_scale_ >= 0.0)) throw BadValue("reset_noise_scale should be >= 0");
    frame_skip_ = p.Int("frame_skip");

    std::vector<Placement> placements(2);
    const std::string xml = p.String("xml_file").empty() ? rules.xml_file : p.String("xml_file");
    const std::string arena = p.String("arena_file").empty()
                                  ? (humanoid_ ? "humanoid_arena.xml" : "sumo_arena.xml")
                                  : p.String("arena_file");
    const std::string robot_path = ResolveAssetPath(xml);
    ComposedModel world = ComposeWorld(ResolveAssetPath(arena), robot_path, "torso",
                                       rules.name + "_", placements, /*agents_collide=*/true);
    // Positions, orientations and velocities are read from the free joint.
    RequireRootJoint(world, robot_path, /*allow_free=*/true, /*allow_slide_x=*/false, "sumo");
    CompetitorRules own = rules;
    own.reset_noise = noise_scale_;
    own.ctrl_weight = ctrl_weight_;
    bots_ = Competitors(world, own);
    agents_ = world.agents;
    robot_nq_ = static_cast<int>(world.robot->nq);
    robot_nv_ = static_cast<int>(world.robot->nv);
    robot_nu_ = static_cast<int>(world.robot->nu);
    // Draw the ring at its radius (a visual geom: no physics changes); hide
    // the goal lines of a shared arena.
    mjModel* m = const_cast<mjModel*>(world.model.get());
    const int ring = mj_name2id(m, mjOBJ_GEOM, "ring");
    if (ring >= 0) m->geom_size[3 * ring] = drawn_radius_ ? max_radius_ : ring_radius_;
    for (const char* line : {"rightgoal", "leftgoal"}) {
      const int g = mj_name2id(m, mjOBJ_GEOM, line);
      if (g >= 0) m->geom_rgba[4 * g + 3] = 0.0f;
    }
    SetModel(world.model);
    SetAgentPrefix(rules.name);
    SetFrameSkip(frame_skip_);
    if (humanoid_) {
      SetDims(2, bots_.obs_dim() + kHumanoidExtras, robot_nu_);
    } else {
      // Own qpos[2:] and qvel, then 6 opponent vectors (18), 3 scalars.
      SetDims(2, robot_nq_ - 2 + robot_nv_ + kOpponentFeatures, robot_nu_);
    }
    SetActionBoundsFromCtrlRange(agents_[0].actuator_base);
    SetScratchSize(kScratch);
    AddEpisodeOption("shaping_weight", kShapingWeight);
    // A limit below min_ring_radius would be clamped up to it: refused instead.
    if (drawn_radius_) AddEpisodeOption("ring_radius_limit", kRadiusLimit, min_radius_);
    InfoLayout& info = mutable_info();
    outcome_ = info.AddLabel("outcome", OutcomeLabels(), /*at_reset=*/true);
    distance_to_edge_ = info.AddAtReset("distance_to_edge");
    opponent_distance_to_edge_ = info.AddAtReset("opponent_distance_to_edge");
    if (humanoid_ || drawn_radius_) ring_radius_info_ = info.AddAtReset("ring_radius");
    reward_outcome_ = info.Add("reward_outcome");
    if (humanoid_) {
      touched_ = info.Add("touched");
      reward_center_ = info.Add("reward_center");
      reward_ctrl_ = info.Add("reward_ctrl");
      reward_contact_ = info.Add("reward_contact");
      reward_survive_ = info.Add("reward_survive");
    } else {
      reward_approach_ = info.Add("reward_approach");
      reward_push_ = info.Add("reward_push");
      reward_ctrl_ = info.Add("reward_ctrl");
    }
    RenderCamera camera;  // the whole ring from above at an angle
    camera.target = CameraTarget::kFixed;
    camera.distance = 3.2 * (drawn_radius_ ? max_radius_ : ring_radius_);
    camera.elevation = -45.0;
    SetCamera(camera);
  }

  void InitScratch(double* scratch) const override {
    scratch[kShapingWeight] = shaping_weight_;
    scratch[kRadiusLimit] = max_radius_;
    scratch[kRadius] = drawn_radius_ ? max_radius_ : ring_radius_;
  }

  void Reset(mjData* d, double* scratch, Rng& rng, double* obs, double* info) const override {
    const mjModel* m = model();
    mj_resetData(m, d);
    if (drawn_radius_) {
      const double upper = std::fmax(min_radius_, std::fmin(max_radius_, scratch[kRadiusLimit]));
      scratch[kRadius] = rng.Uniform(min_radius_, upper);
    }
    const double phase = rng.Uniform(0.0, 2.0 * kPi);
    for (int k = 0; k < 2; ++k) {
      const AgentIndex& a = agents_[k];
      bots_.AddResetNoise(m, d, k, rng);
      // Place the torso on its side of the ring, facing the centre; the noisy
      // orientation is turned by the yaw.
      const double angle = phase + k * kPi;
      mjtNum* q = d->qpos + a.qpos_base;
      q[0] += spawn_distance_ * std::cos(angle);
      q[1] += spawn_distance_ * std::sin(angle);
      mjtNum noisy[4] = {q[3], q[4], q[5], q[6]};
      mju_normalize4(noisy);
      const mjtNum yaw[4] = {std::cos(0.5 * (angle + kPi)), 0, 0, std::sin(0.5 * (angle + kPi))};
      mju_mulQuat(q + 3, yaw, noisy);
    }
    mj_forward(m, d);
    scratch[kSteps] = 0.0;
    scratch[kFinished] = 0.0;
    scratch[kTouched] = 0.0;
    Observe(d, scratch, obs);
    const int width = info_layout().width();
    for (int k = 0; k < 2; ++k) {
      info[k * width + outcome_] = OutcomeCode(Outcome::kOngoing);
      info[k * width + distance_to_edge_] = EdgeDistance(d, scratch, k);
      info[k * width + opponent_distance_to_edge_] = EdgeDistance(d, scratch, 1 - k);
      if (ring_radius_info_ >= 0) info[k * width + ring_radius_info_] = scratch[kRadius];
    }
  }

  bool Step(mjData* d, double* scratch, const float* actions, const StepOutput& out) const override {
    if (humanoid_) return StepHumanoids(d, scratch, actions, out);
    double before_xy[2][2], before_r[2];
    for (int k = 0; k < 2; ++k) {
      const mjtNum* q = d->qpos + agents_[k].qpos_base;
      before_xy[k][0] = q[0];
      before_xy[k][1] = q[1];
      before_r[k] = std::hypot(q[0], q[1]);
    }
    SetAgentControls(d, agents_, robot_nu_, actions);
    const bool stable = Simulate(model(), d, frame_skip_);
    scratch[kSteps] += 1.0;
    Observe(d, scratch, out.obs);

    // The outcome.
    bool lost[2];
    for (int k = 0; k < 2; ++k) {
      const mjtNum* q = d->qpos + agents_[k].qpos_base;
      lost[k] =
          std::hypot(q[0], q[1]) > scratch[kRadius] || q[2] < fall_height_ || !std::isfinite(q[2]);
    }
    const bool timeout = episode_limit() > 0 && scratch[kSteps] >= episode_limit();
    Outcome outcome[2] = {Outcome::kOngoing, Outcome::kOngoing};
    if (lost[0] && lost[1]) {
      outcome[0] = outcome[1] = Outcome::kDraw;
    } else if (lost[0] || lost[1]) {
      outcome[0] = lost[0] ? Outcome::kLoss : Outcome::kWin;
      outcome[1] = lost[1] ? Outcome::kLoss : Outcome::kWin;
    } else if (timeout) {
      outcome[0] = outcome[1] = Outcome::kDraw;
    }
    const bool decided = (lost[0] || lost[1]) && scratch[kFinished] == 0.0;
    if (decided) scratch[kFinished] = 1.0;

    const double weight = scratch[kShapingWeight];
    const int width = info_layout().width();
    for (int k = 0; k < 2; ++k) {
      const int o = 1 - k;
      const mjtNum* q = d->qpos + agents_[k].qpos_base;
      const mjtNum* qo = d->qpos + agents_[o].qpos_base;
      // Own horizontal velocity toward the opponent (from the step's motion).
      double to_opp[2] = {qo[0] - q[0], qo[1] - q[1]};
      const double norm = std::hypot(to_opp[0], to_opp[1]);
      const double vx = (q[0] - before_xy[k][0]) / dt(), vy = (q[1] - before_xy[k][1]) / dt();
      const double approach = norm > 0 ? (vx * to_opp[0] + vy * to_opp[1]) / norm : 0.0;
      const double push = (std::hypot(qo[0], qo[1]) - before_r[o]) / dt();
      const double sq = SumSquares(actions + k * robot_nu_, robot_nu_);
      const double ctrl = -ctrl_weight_ * sq;
      double result = 0.0;
      if (outcome[k] == Outcome::kWin) result = win_reward_;
      if (outcome[k] == Outcome::kLoss) result = -win_reward_;
      if (outcome[k] == Outcome::kDraw) result = -draw_penalty_;
      const double shaped_approach = weight * approach, shaped_push = weight * push,
                   shaped_ctrl = weight * ctrl;
      out.reward[k] = result + shaped_approach + shaped_push + shaped_ctrl;
      out.terminated[k] = lost[0] || lost[1];
      double* info = out.info + k * width;
      info[outcome_] = OutcomeCode(outcome[k]);
      info[distance_to_edge_] = EdgeDistance(d, scratch, k);
      info[opponent_distance_to_edge_] = EdgeDistance(d, scratch, o);
      info[reward_outcome_] = result;
      info[reward_approach_] = shaped_approach;
      info[reward_push_] = shaped_push;
      info[reward_ctrl_] = shaped_ctrl;
      if (ring_radius_info_ >= 0) info[ring_radius_info_] = scratch[kRadius];
    }
    return stable;
  }

  // gym-compete's humanoid sumo: a fall or leaving the ring loses; the other
  // wins only if the two have touched; the fighters' shaping.
  bool StepHumanoids(mjData* d, double* scratch, const float* actions,
                     const StepOutput& out) const {
    SetAgentControls(d, agents_, robot_nu_, actions);
    const bool stable = Simulate(model(), d, frame_skip_);
    scratch[kSteps] += 1.0;
    if (bots_.Touching(d, 0, 1)) scratch[kTouched] = 1.0;
    Observe(d, scratch, out.obs);
    bool lost[2];
    for (int k = 0; k < 2; ++k) {
      const mjtNum* q = bots_.Root(d, k);
      lost[k] =
          std::hypot(q[0], q[1]) > scratch[kRadius] || q[2] < fall_height_ || !std::isfinite(q[2]);
    }
    const bool timeout = episode_limit() > 0 && scratch[kSteps] >= episode_limit();
    const bool touched = scratch[kTouched] != 0.0;
    Outcome outcome[2] = {Outcome::kOngoing, Outcome::kOngoing};
    double result[2] = {0.0, 0.0};
    if (lost[0] || lost[1]) {
      for (int k = 0; k < 2; ++k) {
        if (lost[k]) {
          outcome[k] = Outcome::kLoss;
          result[k] = -win_reward_;
        } else {
          outcome[k] = touched ? Outcome::kWin : Outcome::kDraw;
          result[k] = touched ? win_reward_ : 0.0;
        }
      }
    } else if (timeout) {
      outcome[0] = outcome[1] = Outcome::kDraw;
      result[0] = result[1] = -draw_penalty_;
    }
    const double weight = scratch[kShapingWeight];
    const int width = info_layout().width();
    for (int k = 0; k < 2; ++k) {
      const Shaping s = bots_.Shape(d, k, actions + k * robot_nu_, 0.0, dt());
      const mjtNum* q = bots_.Root(d, k);
      const double center = -weight * std::hypot(q[0], q[1]), ctrl = -weight * s.ctrl,
                   contact = -weight * s.contact, survive = weight * s.survive;
      out.reward[k] = result[k] + center + ctrl + contact + survive;
      out.terminated[k] = lost[0] || lost[1];
      double* info = out.info + k * width;
      info[outcome_] = OutcomeCode(outcome[k]);
      info[distance_to_edge_] = EdgeDistance(d, scratch, k);
      info[opponent_distance_to_edge_] = EdgeDistance(d, scratch, 1 - k);
      info[ring_radius_info_] = scratch[kRadius];
      info[reward_outcome_] = result[k];
      info[touched_] = touched ? 1.0 : 0.0;
      info[reward_center_] = center;
      info[reward_ctrl_] = ctrl;
      info[reward_contact_] = contact;
      info[reward_survive_] = survive;
    }
    return stable;
  }

  void Observe(const mjData* d, const double* scratch, double* obs) const override {
    const double left =
        episode_limit() > 0 ? std::fmax(0.0, 1.0 - scratch[kSteps] / episode_limit()) : 1.0;
    if (humanoid_) {
      for (int k = 0; k < 2; ++k) {
        const int o = 1 - k;
        obs = bots_.Put(d, k, o, obs);
        const mjtNum* q = bots_.Root(d, k);
        const mjtNum* qo = bots_.Root(d, o);
        *obs++ = qo[0] - q[0];
        *obs++ = qo[1] - q[1];
        const mjtNum* xmat = d->xmat + 9 * agents_[k].body_base;
        for (int i = 0; i < 9; ++i) *obs++ = xmat[i];
        *obs++ = scratch[kRadius];
        *obs++ = EdgeDistance(d, scratch, k);
        *obs++ = EdgeDistance(d, scratch, o);
        *obs++ = left;
      }
      return;
    }
    for (int k = 0; k < 2; ++k) {
      const int o = 1 - k;
      const mjtNum* q = d->qpos + agents_[k].qpos_base;
      const mjtNum* v = d->qvel + agents_[k].qvel_base;
      const mjtNum* qo = d->qpos + agents_[o].qpos_base;
      const mjtNum* vo = d->qvel + agents_[o].qvel_base;
      for (int i = 2; i < robot_nq_; ++i) *obs++ = q[i];
      for (int i = 0; i < robot_nv_; ++i) *obs++ = v[i];
      // Into own frame: rotate world vectors by the conjugate of own quat.
      mjtNum inverse[4];
      mju_negQuat(inverse, q + 3);
      mjtNum world[3], local[3];
      mju_sub3(world, qo, q);
      mju_rotVecQuat(local, world, inverse);
      obs = Put3(obs, local);
      mjtNum opp_rot[9];
      mju_quat2Mat(opp_rot, qo + 3);
      const mjtNum forward[3] = {opp_rot[0], opp_rot[3], opp_rot[6]};
      const mjtNum up[3] = {opp_rot[2], opp_rot[5], opp_rot[8]};
      mju_rotVecQuat(local, forward, inverse);
      obs = Put3(obs, local);
      mju_rotVecQuat(local, up, inverse);
      obs = Put3(obs, local);
      mju_rotVecQuat(local, vo, inverse);  // free-joint linear velocity is in world frame
      obs = Put3(obs, local);
      mju_mulMatVec3(world, opp_rot, vo + 3);  // angular velocity: opponent local -> world
      mju_rotVecQuat(local, world, inverse);
      obs = Put3(obs, local);
      *obs++ = EdgeDistance(d, scratch, k);
      *obs++ = EdgeDistance(d, scratch, o);
      *obs++ = left;
    }
  }

 private:
  static double Positive(const Params& p, const char* name) {
    const double value = p.Float(name);
    if (!(value > 0.0)) throw BadValue(std::string(name) + " should be > 0, got " + FloatText(value));
    return value;
  }

  static double* Put3(double* obs, const mjtNum* v) {
    for (int i = 0; i < 3; ++i) *obs++ = v[i];
    return obs;
  }

  // A float parameter that may be None (NaN): its value, or `fallback`.
  static double OrDefault(const Params& p, const char* name, double fallback) {
    const double value = p.Float(name);
    return std::isnan(value) ? fallback : value;
  }

  double EdgeDistance(const mjData* d, const double* scratch, int k) const {
    const mjtNum* q = d->qpos + agents_[k].qpos_base;
    return scratch[kRadius] - std::hypot(q[0], q[1]);
  }

  Competitors bots_;
  bool humanoid_ = false, drawn_radius_ = false;
  double min_radius_ = 0.0, max_radius_ = 0.0;
  int ring_radius_info_ = -1, touched_ = -1, reward_center_ = -1, reward_contact_ = -1,
      reward_survive_ = -1;
  std::vector<AgentIndex> agents_;
  int robot_nq_ = 0, robot_nv_ = 0, robot_nu_ = 0;
  int frame_skip_ = 5;
  double ring_radius_, spawn_distance_, fall_height_, win_reward_, draw_penalty_;
  double shaping_weight_, ctrl_weight_, noise_scale_;
  int outcome_, distance_to_edge_, opponent_distance_to_edge_;  // info offsets
  int reward_outcome_, reward_approach_ = -1, reward_push_ = -1, reward_ctrl_;
};

std::vector<ParamSpec> Spec() {
  return {
      StringParam("robot", "ant", "'ant' or 'humanoid'"),
      OptionalFloatParam("ring_radius", 3.0,
                         "radius of the ring in metres; None: drawn each episode"),
      OptionalFloatParam("min_ring_radius", NAN,
                         "low end of the radius draw; None: the robot's (2.5 / 1.5)"),
      OptionalFloatParam("max_ring_radius", NAN,
                         "high end of the radius draw; None: the robot's (4.5 / 3.5)"),
      FloatParam("spawn_distance", 1.0, "start distance of each torso from the centre"),
      OptionalFloatParam(
          "fall_height", NAN,
          "torso height below which a robot has fallen; None: the robot's (0.3 / 0.5)"),
      FloatParam("win_reward", 1000.0, "reward for a win (a loss gets minus this)"),
      FloatParam("draw_penalty", 100.0, "penalty for each agent on a draw (timeout)"),
      FloatParam("shaping_weight", 1.0, "scale of the dense shaping terms"),
      FloatParam("ctrl_cost_weight", 0.1, "weight of the control cost (shaping)"),
      OptionalFloatParam("reset_noise_scale", NAN,
                         "scale of the reset noise; None: the robot's (0.1 / 0.01)"),
      IntParam("frame_skip", 5, "mj_step calls per env step", 1, kMaxFrameSkip),
      StringParam("xml_file", "", "robot MJCF; '': the robot's (ant.xml / humanoid.xml)"),
      StringParam("arena_file", "",
                  "arena MJCF; '': the robot's (sumo_arena.xml / humanoid_arena.xml)"),
  };
}

// gym-compete's sumo-ants-v0 / sumo-humans-v0.
GymCompeteForm GymCompeteSumo(const Params& p) {
  GymCompeteForm form;
  form.rules = GymCompeteRules::kSumo;
  if (RulesFor(p.String("robot"), "sumo").humanoid) {
    form.scene = "gym_compete/sumo_humans.xml";
    form.agent_prefix = "humanoid";
    form.roles = {GymCompeteRole::kHumanoidFighter, GymCompeteRole::kHumanoidFighter};
    form.min_radius = 1.5;
    form.max_radius = 3.5;
  } else {
    form.scene = "gym_compete/sumo_ants.xml";
    form.agent_prefix = "ant";
    form.roles = {GymCompeteRole::kAntFighter, GymCompeteRole::kAntFighter};
    form.min_radius = 2.5;
    form.max_radius = 4.5;
  }
  return form;
}

const TaskRegistration kRegistration(
    RunsOnJolt(WithGymCompeteForm(Game<Sumo>("sumo", "Sumo", "ant", Spec(), kDoc, /*max_cycles=*/500),
                                  GymCompeteSumo, {"robot"}),
               kAntJoltOptions));

}  // namespace
}  // namespace joltgym
