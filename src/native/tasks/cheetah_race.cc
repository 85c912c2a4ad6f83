// CheetahRace: 1 to 8 HalfCheetahs in one shared world (see kDoc).
#include <cmath>

#include "../compose.h"
#include "locomotion.h"

namespace joltgym {
namespace {

constexpr const char* kDoc = R"(CheetahRace: 1 to 8 HalfCheetahs racing in one shared MuJoCo world.

=================  ============================================================
Agents             ``cheetah_0`` ... ``cheetah_{N-1}`` (``num_agents``, default 2)
Layouts            ``"lanes"`` (default): side by side, ``lane_spacing`` (1 m) apart,
                   never touching; ``"shared_track"``: one plane, agent k starting
                   ``k * start_spacing`` (1.5 m) behind agent 0, so bodies collide
Action (6)         HalfCheetah torques (bthigh, bshin, bfoot, fthigh, fshin, ffoot) in [-1, 1]
Observation        17 + 2 (N - 1), float32: the agent's HalfCheetah observation
                   (qpos[1:], qvel), then for every other agent in ascending index
                   order its x position relative to this agent and its x velocity
Reward             ``reward_forward`` = forward_reward_weight (1) * x velocity,
                   ``reward_ctrl`` = -ctrl_cost_weight (0.1) * sum(action**2),
                   ``reward_finish`` = finish_bonus (100) for the first agent
                   ``finish_line`` metres past its start (when finish_line is set;
                   several crossing in one step: the furthest wins)
Info               x_position, rank (1 = leading), x_velocity, reward_forward,
                   reward_ctrl, reward_finish (all also on reset, the last four 0)
Episode end        for all agents together: terminated at the finish, truncated
                   after ``max_cycles`` (1000) steps
State              qpos and qvel of the whole world (float32)
=================  ============================================================

A race with one agent is exactly ``HalfCheetah-v5``.
)";

class CheetahRace final : public Task {
 public:
  explicit CheetahRace(const Params& p) {
    const int n = p.Int("num_agents");
    if (n < 1 || n > 8) throw BadValue("num_agents should be in [1, 8], got " + std::to_string(n));
    const std::string& layout = p.String("layout");
    if (layout != "lanes" && layout != "shared_track") {
      throw BadValue("layout should be 'lanes' or 'shared_track', got '" + layout + "'");
    }
    frame_skip_ = p.Int("frame_skip");
    if (frame_skip_ < 1) throw BadValue("frame_skip should be >= 1, got " + std::to_string(frame_skip_));
    noise_scale_ = p.Float("reset_noise_scale");
    if (!(noise_scale_ >= 0.0)) throw BadValue("reset_noise_scale should be >= 0");
    forward_weight_ = p.Float("forward_reward_weight");
    ctrl_weight_ = p.Float("ctrl_cost_weight");
    finish_line_ = p.Float("finish_line");
    finish_bonus_ = p.Float("finish_bonus");
    if (!std::isnan(finish_line_) && !(finish_line_ > 0.0)) {
      throw BadValue("finish_line should be > 0 metres or None, got " + FloatText(finish_line_));
    }
    const double lane = p.Float("lane_spacing");
    const double stagger = p.Float("start_spacing");
    if (!(lane > 0.0) || !(stagger > 0.0)) throw BadValue("lane_spacing and start_spacing should be > 0");

    const bool shared = layout == "shared_track";
    std::vector<Placement> placements(n);
    for (int k = 0; k < n; ++k) {
      if (shared) {
        placements[k].pos[0] = -stagger * k;
      } else {
        placements[k].pos[1] = lane * (k - 0.5 * (n - 1));
      }
      start_x_.push_back(placements[k].pos[0]);
    }
    const std::string robot_path = ResolveAssetPath(p.String("xml_file"));
    ComposedModel world = ComposeWorld(ResolveAssetPath(p.String("arena_file")), robot_path,
                                       "torso", "cheetah_", placements, shared);
    // X(k) and the x velocity are the root joint's first qpos and qvel.
    RequireRootJoint(world, robot_path, /*allow_free=*/true, /*allow_slide_x=*/true,
                     "cheetah_race");
    agents_ = world.agents;
    robot_nq_ = static_cast<int>(world.robot->nq);
    robot_nv_ = static_cast<int>(world.robot->nv);
    robot_nu_ = static_cast<int>(world.robot->nu);
    SetModel(world.model);
    SetFrameSkip(frame_skip_);
    SetDims(n, robot_nq_ - 1 + robot_nv_ + 2 * (n - 1), robot_nu_);
    SetActionBoundsFromCtrlRange(agents_[0].actuator_base);
    SetScratchSize(1);  // scratch[0]: 1 once someone has finished
    InfoLayout& info = mutable_info();
    x_position_ = info.AddAtReset("x_position");
    rank_ = info.AddInteger("rank", /*at_reset=*/true);
    x_velocity_ = info.Add("x_velocity");
    reward_forward_ = info.Add("reward_forward");
    reward_ctrl_ = info.Add("reward_ctrl");
    reward_finish_ = info.Add("reward_finish");
    RenderCamera camera;  // side view following the leader
    camera.target = CameraTarget::kLeader;
    camera.distance = 3.0 + 0.8 * n;
    camera.elevation = -20.0;
    SetCamera(camera);
  }

  void Reset(mjData* d, double* scratch, Rng& rng, double* obs, double* info) const override {
    const mjModel* m = model();
    mj_resetData(m, d);
    for (const AgentIndex& a : agents_) {
      AddRobotResetNoise(m, d, a, robot_nq_, robot_nv_, noise_scale_, rng);
    }
    mj_forward(m, d);
    scratch[0] = 0.0;
    Observe(d, scratch, obs);
    const int width = info_layout().width();
    for (int k = 0; k < num_agents(); ++k) {
      info[k * width + x_position_] = X(d, k);
      info[k * width + rank_] = Rank(d, k);
    }
  }

  bool Step(mjData* d, double* scratch, const float* actions, const StepOutput& out) const override {
    const int n = num_agents();
    double before[8];
    for (int k = 0; k < n; ++k) before[k] = X(d, k);
    SetAgentControls(d, agents_, robot_nu_, actions);
    const bool stable = Simulate(model(), d, frame_skip_);
    Observe(d, scratch, out.obs);

    // The finish: the furthest agent past the line, if any, the first time.
    int winner = -1;
    if (!std::isnan(finish_line_) && scratch[0] == 0.0) {
      double best = -INFINITY;
      for (int k = 0; k < n; ++k) {
        const double progress = X(d, k) - start_x_[k];
        if (progress >= finish_line_ && progress > best) {
          best = progress;
          winner = k;
        }
      }
      if (winner >= 0) scratch[0] = 1.0;
    }
    const int width = info_layout().width();
    for (int k = 0; k < n; ++k) {
      const double x = X(d, k);
      const double velocity = (x - before[k]) / dt();
      const double forward = forward_weight_ * velocity;
      const double ctrl_cost = Float32ControlCost(ctrl_weight_, actions + k * robot_nu_, robot_nu_);
      const double bonus = k == winner ? finish_bonus_ : 0.0;
      out.reward[k] = forward - ctrl_cost + bonus;
      out.terminated[k] = winner >= 0;
      double* info = out.info + k * width;
      info[x_position_] = x;
      info[rank_] = Rank(d, k);
      info[x_velocity_] = velocity;
      info[reward_forward_] = forward;
      info[reward_ctrl_] = -ctrl_cost;
      info[reward_finish_] = bonus;
    }
    return stable;
  }

  void Observe(const mjData* d, const double*, double* obs) const override {
    const int n = num_agents();
    for (int k = 0; k < n; ++k) {
      const AgentIndex& a = agents_[k];
      for (int i = 1; i < robot_nq_; ++i) *obs++ = d->qpos[a.qpos_base + i];
      for (int i = 0; i < robot_nv_; ++i) *obs++ = d->qvel[a.qvel_base + i];
      const double x = X(d, k);
      for (int j = 0; j < n; ++j) {
        if (j == k) continue;
        *obs++ = X(d, j) - x;
        *obs++ = d->qvel[agents_[j].qvel_base];
      }
    }
  }

 private:
  // World x of agent k's torso: its start plus the root slide joint.
  double X(const mjData* d, int k) const { return start_x_[k] + d->qpos[agents_[k].qpos_base]; }

  double Rank(const mjData* d, int k) const {
    const double x = X(d, k);
    int ahead = 0;
    for (int j = 0; j < num_agents(); ++j) {
      const double xj = X(d, j);
      if (xj > x || (xj == x && j < k)) ++ahead;
    }
    return 1.0 + ahead;
  }

  std::vector<AgentIndex> agents_;
  std::vector<double> start_x_;
  int robot_nq_ = 0, robot_nv_ = 0, robot_nu_ = 0;
  int frame_skip_ = 5;
  double noise_scale_ = 0.1;
  double forward_weight_ = 1.0, ctrl_weight_ = 0.1;
  double finish_line_ = NAN, finish_bonus_ = 100.0;
  int x_position_, rank_, x_velocity_, reward_forward_, reward_ctrl_, reward_finish_;  // info
};

std::vector<ParamSpec> Spec() {
  return {
      IntParam("num_agents", 2, "number of HalfCheetahs, 1 to 8", 1, 8),
      StringParam("layout", "lanes", "'lanes' (side by side) or 'shared_track' (one plane, staggered)"),
      FloatParam("lane_spacing", 1.0, "metres between lanes (lanes layout)"),
      FloatParam("start_spacing", 1.5, "metres between starts (shared_track layout)"),
      OptionalFloatParam("finish_line", NAN, "metres to run for the finish bonus; None: no finish"),
      FloatParam("finish_bonus", 100.0, "reward for the first agent over the finish line"),
      FloatParam("forward_reward_weight", 1.0, "weight of the forward velocity"),
      FloatParam("ctrl_cost_weight", 0.1, "weight of the control cost"),
      FloatParam("reset_noise_scale", 0.1, "scale of the reset noise"),
      IntParam("frame_skip", 5, "mj_step calls per env step", 1, kMaxFrameSkip),
      StringParam("xml_file", "half_cheetah.xml", "robot MJCF"),
      StringParam("arena_file", "race_arena.xml", "arena MJCF"),
  };
}

const TaskRegistration kRegistration(RunsOnJolt(
    Game<CheetahRace>("cheetah_race", "CheetahRace", "cheetah", Spec(), kDoc, /*max_cycles=*/1000)));

}  // namespace
}  // namespace joltgym
