// Sumo: two Ants in one shared world on a round ring.
//
// Spawn: the two torsos start spawn_distance from the ring's centre on
// opposite sides, facing each other, at a phase drawn uniformly per episode
// (plus Ant-v5's reset noise on every joint).
// Outcome: an agent loses when its torso leaves the ring (horizontal distance
// from the centre > ring_radius) or it falls (torso height < fall_height); the
// other wins. Both at once: a draw. No result after max_cycles steps: a draw.
//
// obs (45) per agent, in its own torso frame where noted:
//   [0:13]  own qpos[2:] (torso z, torso quaternion, 8 joint angles)
//   [13:27] own qvel (torso linear velocity (world), angular velocity (local), 8 joints)
//   [27:30] opponent torso position relative to own torso, in own frame
//   [30:33] opponent torso x axis (its forward) in own frame
//   [33:36] opponent torso z axis (its up) in own frame
//   [36:39] opponent torso linear velocity in own frame
//   [39:42] opponent torso angular velocity in own frame
//   [42]    own distance to the ring's edge (ring_radius - horizontal distance)
//   [43]    opponent's distance to the edge
//   [44]    fraction of the episode left (1 at reset, 0 at max_cycles)
// act (8) per agent: Ant-v5 torques in [-1, 1].
// reward: reward_outcome (+win_reward win, -win_reward loss, -draw_penalty
//   draw), plus shaping_weight * (reward_approach + reward_push + reward_ctrl):
//   approach = own horizontal velocity toward the opponent, push = rate at
//   which the opponent's distance from the centre grows, ctrl = -ctrl_cost_weight * |a|^2.
//   The reported reward_approach / reward_push / reward_ctrl include the weight.
// info per agent: outcome (0 ongoing, 1 win, 2 loss, 3 draw), reward terms,
//   distance_to_edge, opponent_distance_to_edge (these two also on reset).
// Episode option: shaping_weight (reset(options={"shaping_weight": w})).
#include <cmath>

#include "../compose.h"
#include "locomotion.h"

namespace joltgym {
namespace {

constexpr double kPi = 3.14159265358979323846;

enum Slot { kShapingWeight = 0, kSteps = 1, kFinished = 2, kScratch = 3 };
enum Outcome { kOngoing = 0, kWin = 1, kLoss = 2, kDraw = 3 };

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
    ComposedModel world = ComposeWorld(ResolveAssetPath(p.String("arena_file")),
                                       ResolveAssetPath(p.String("xml_file")), "torso", "ant_",
                                       placements, /*agents_collide=*/true);
    agents_ = world.agents;
    robot_nq_ = static_cast<int>(world.robot->nq);
    robot_nv_ = static_cast<int>(world.robot->nv);
    robot_nu_ = static_cast<int>(world.robot->nu);
    if (world.robot->njnt < 1 || world.robot->jnt_type[0] != mjJNT_FREE) {
      throw BadValue("sumo robot should have a free root joint");
    }
    // Draw the ring at its radius (a visual geom: no physics changes).
    mjModel* m = const_cast<mjModel*>(world.model.get());
    const int ring = mj_name2id(m, mjOBJ_GEOM, "ring");
    if (ring >= 0) m->geom_size[3 * ring] = ring_radius_;
    SetModel(world.model);
    SetDt(model()->opt.timestep * frame_skip_);
    SetDims(2, 45, robot_nu_);
    SetActionBoundsFromCtrlRange(agents_[0].actuator_base);
    SetScratchSize(kScratch);
    AddEpisodeOption("shaping_weight", kShapingWeight);
    mutable_info()
        .Add("outcome", 1, true)
        .Add("distance_to_edge", 1, true)
        .Add("opponent_distance_to_edge", 1, true)
        .Add("reward_outcome")
        .Add("reward_approach")
        .Add("reward_push")
        .Add("reward_ctrl");
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
      info[k * width + 0] = kOngoing;
      info[k * width + 1] = EdgeDistance(d, k);
      info[k * width + 2] = EdgeDistance(d, 1 - k);
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
    int outcome[2] = {kOngoing, kOngoing};
    if (lost[0] && lost[1]) {
      outcome[0] = outcome[1] = kDraw;
    } else if (lost[0] || lost[1]) {
      outcome[0] = lost[0] ? kLoss : kWin;
      outcome[1] = lost[1] ? kLoss : kWin;
    } else if (timeout) {
      outcome[0] = outcome[1] = kDraw;
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
      if (outcome[k] == kWin) result = win_reward_;
      if (outcome[k] == kLoss) result = -win_reward_;
      if (outcome[k] == kDraw) result = -draw_penalty_;
      const double shaped_approach = weight * approach, shaped_push = weight * push,
                   shaped_ctrl = weight * ctrl;
      out.reward[k] = static_cast<float>(result + shaped_approach + shaped_push + shaped_ctrl);
      out.terminated[k] = lost[0] || lost[1];
      double* info = out.info + k * width;
      info[0] = outcome[k];
      info[1] = EdgeDistance(d, k);
      info[2] = EdgeDistance(d, o);
      info[3] = result;
      info[4] = shaped_approach;
      info[5] = shaped_push;
      info[6] = shaped_ctrl;
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

const TaskRegistration kRegistration({"sumo", "", Spec(),
                                      [](const Params& p) { return std::make_shared<Sumo>(p); }});

}  // namespace
}  // namespace joltgym
