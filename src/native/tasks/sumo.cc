// Sumo: two Ants in one shared world on a round ring (see kDoc).
//
// The reported reward_approach / reward_push / reward_ctrl include the
// shaping weight; several outcomes in one step are settled as documented.
#include <cmath>

#include "../compose.h"
#include "../outcome.h"
#include "locomotion.h"

namespace joltgym {
namespace {

constexpr double kPi = 3.14159265358979323846;

constexpr const char* kDoc =
    R"(Sumo: two Ants push each other out of a ring, in one shared MuJoCo world.

=================  ============================================================
Agents             ``ant_0``, ``ant_1``
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
Info               ``outcome`` ("ongoing", "win", "loss", "draw"), the reward
                   terms, ``distance_to_edge``, ``opponent_distance_to_edge``
Episode end        for both agents together: terminated on a result, truncated
                   at ``max_cycles``
Annealing          ``reset(options={"shaping_weight": w})`` (or the keyword
                   argument) sets the shaping weight for the following episodes
=================  ============================================================
)";

enum Slot { kShapingWeight = 0, kSteps = 1, kFinished = 2, kScratch = 3 };

// Observation entries after the agent's own qpos[2:] and qvel: opponent
// position, forward and up axes, linear and angular velocity (5 x 3), the two
// edge distances and the fraction of the episode left.
constexpr int kOpponentFeatures = 5 * 3 + 3;

class Sumo final : public Task {
 public:
  explicit Sumo(const Params& p) {
    ring_radius_ = Positive(p, "ring_radius");
    spawn_distance_ = Positive(p, "spawn_distance");
    if (spawn_distance_ >= ring_radius_) {
      throw BadValue("spawn_distance should be < ring_radius (" + std::to_string(ring_radius_) +
                     "), got " + std::to_string(spawn_distance_));
    }
    fall_height_ = p.Float("fall_height");
    win_reward_ = p.Float("win_reward");
    draw_penalty_ = p.Float("draw_penalty");
    shaping_weight_ = p.Float("shaping_weight");
    ctrl_weight_ = p.Float("ctrl_cost_weight");
    noise_scale_ = p.Float("reset_noise_scale");
    if (!(noise_scale_ >= 0.0)) throw BadValue("reset_noise_scale should be >= 0");
    frame_skip_ = p.Int("frame_skip");

    std::vector<Placement> placements(2);
    const std::string robot_path = ResolveAssetPath(p.String("xml_file"));
    ComposedModel world = ComposeWorld(ResolveAssetPath(p.String("arena_file")), robot_path,
                                       "torso", "ant_", placements, /*agents_collide=*/true);
    // Positions, orientations and velocities are read from the free joint.
    RequireRootJoint(world, robot_path, /*allow_free=*/true, /*allow_slide_x=*/false, "sumo");
    agents_ = world.agents;
    robot_nq_ = static_cast<int>(world.robot->nq);
    robot_nv_ = static_cast<int>(world.robot->nv);
    robot_nu_ = static_cast<int>(world.robot->nu);
    // Draw the ring at its radius (a visual geom: no physics changes).
    mjModel* m = const_cast<mjModel*>(world.model.get());
    const int ring = mj_name2id(m, mjOBJ_GEOM, "ring");
    if (ring >= 0) m->geom_size[3 * ring] = ring_radius_;
    SetModel(world.model);
    SetDt(model()->opt.timestep * frame_skip_);
    // Own qpos[2:] and qvel, then 6 opponent vectors (18), 3 scalars.
    SetDims(2, robot_nq_ - 2 + robot_nv_ + kOpponentFeatures, robot_nu_);
    SetActionBoundsFromCtrlRange(agents_[0].actuator_base);
    SetScratchSize(kScratch);
    AddEpisodeOption("shaping_weight", kShapingWeight);
    InfoLayout& info = mutable_info();
    outcome_ = info.AddLabel("outcome", OutcomeLabels(), /*at_reset=*/true);
    distance_to_edge_ = info.AddAtReset("distance_to_edge");
    opponent_distance_to_edge_ = info.AddAtReset("opponent_distance_to_edge");
    reward_outcome_ = info.Add("reward_outcome");
    reward_approach_ = info.Add("reward_approach");
    reward_push_ = info.Add("reward_push");
    reward_ctrl_ = info.Add("reward_ctrl");
    RenderCamera camera;  // the whole ring from above at an angle
    camera.target = CameraTarget::kFixed;
    camera.distance = 3.2 * ring_radius_;
    camera.elevation = -45.0;
    SetCamera(camera);
  }

  void InitScratch(double* scratch) const override { scratch[kShapingWeight] = shaping_weight_; }

  void Reset(mjData* d, double* scratch, Rng& rng, float* obs, double* info) const override {
    const mjModel* m = model();
    mj_resetData(m, d);
    const double phase = rng.Uniform(0.0, 2.0 * kPi);
    for (int k = 0; k < 2; ++k) {
      const AgentIndex& a = agents_[k];
      AddRobotResetNoise(m, d, a, robot_nq_, robot_nv_, noise_scale_, rng);
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
    Observe(d, scratch, obs);
    const int width = info_layout().width();
    for (int k = 0; k < 2; ++k) {
      info[k * width + outcome_] = OutcomeCode(Outcome::kOngoing);
      info[k * width + distance_to_edge_] = EdgeDistance(d, k);
      info[k * width + opponent_distance_to_edge_] = EdgeDistance(d, 1 - k);
    }
  }

  bool Step(mjData* d, double* scratch, const float* actions, const StepOutput& out) const override {
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
      lost[k] = std::hypot(q[0], q[1]) > ring_radius_ || q[2] < fall_height_ || !std::isfinite(q[2]);
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
      out.reward[k] = static_cast<float>(result + shaped_approach + shaped_push + shaped_ctrl);
      out.terminated[k] = lost[0] || lost[1];
      double* info = out.info + k * width;
      info[outcome_] = OutcomeCode(outcome[k]);
      info[distance_to_edge_] = EdgeDistance(d, k);
      info[opponent_distance_to_edge_] = EdgeDistance(d, o);
      info[reward_outcome_] = result;
      info[reward_approach_] = shaped_approach;
      info[reward_push_] = shaped_push;
      info[reward_ctrl_] = shaped_ctrl;
    }
    return stable;
  }

  void Observe(const mjData* d, const double* scratch, float* obs) const override {
    const double left =
        episode_limit() > 0 ? std::fmax(0.0, 1.0 - scratch[kSteps] / episode_limit()) : 1.0;
    for (int k = 0; k < 2; ++k) {
      const int o = 1 - k;
      const mjtNum* q = d->qpos + agents_[k].qpos_base;
      const mjtNum* v = d->qvel + agents_[k].qvel_base;
      const mjtNum* qo = d->qpos + agents_[o].qpos_base;
      const mjtNum* vo = d->qvel + agents_[o].qvel_base;
      for (int i = 2; i < robot_nq_; ++i) *obs++ = static_cast<float>(q[i]);
      for (int i = 0; i < robot_nv_; ++i) *obs++ = static_cast<float>(v[i]);
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
      *obs++ = static_cast<float>(EdgeDistance(d, k));
      *obs++ = static_cast<float>(EdgeDistance(d, o));
      *obs++ = static_cast<float>(left);
    }
  }

 private:
  static double Positive(const Params& p, const char* name) {
    const double value = p.Float(name);
    if (!(value > 0.0)) throw BadValue(std::string(name) + " should be > 0, got " + std::to_string(value));
    return value;
  }

  static float* Put3(float* obs, const mjtNum* v) {
    for (int i = 0; i < 3; ++i) *obs++ = static_cast<float>(v[i]);
    return obs;
  }

  double EdgeDistance(const mjData* d, int k) const {
    const mjtNum* q = d->qpos + agents_[k].qpos_base;
    return ring_radius_ - std::hypot(q[0], q[1]);
  }

  std::vector<AgentIndex> agents_;
  int robot_nq_ = 0, robot_nv_ = 0, robot_nu_ = 0;
  int frame_skip_ = 5;
  double ring_radius_, spawn_distance_, fall_height_, win_reward_, draw_penalty_;
  double shaping_weight_, ctrl_weight_, noise_scale_;
  int outcome_, distance_to_edge_, opponent_distance_to_edge_;  // info offsets
  int reward_outcome_, reward_approach_, reward_push_, reward_ctrl_;
};

std::vector<ParamSpec> Spec() {
  return {
      FloatParam("ring_radius", 3.0, "radius of the ring in metres"),
      FloatParam("spawn_distance", 1.0, "start distance of each torso from the centre"),
      FloatParam("fall_height", 0.3, "torso height below which an Ant has fallen"),
      FloatParam("win_reward", 1000.0, "reward for a win (a loss gets minus this)"),
      FloatParam("draw_penalty", 100.0, "penalty for each agent on a draw (timeout)"),
      FloatParam("shaping_weight", 1.0, "scale of the dense shaping terms"),
      FloatParam("ctrl_cost_weight", 0.1, "weight of the control cost (shaping)"),
      FloatParam("reset_noise_scale", 0.1, "scale of the reset noise"),
      IntParam("frame_skip", 5, "mj_step calls per env step", 1, 1 << 20),
      StringParam("xml_file", "ant.xml", "robot MJCF"),
      StringParam("arena_file", "sumo_arena.xml", "arena MJCF"),
  };
}

const TaskRegistration kRegistration(
    Game<Sumo>("sumo", "Sumo", "ant", Spec(), kDoc, /*max_cycles=*/500));

}  // namespace
}  // namespace joltgym
