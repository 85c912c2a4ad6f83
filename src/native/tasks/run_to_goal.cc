// RunToGoal: two Ants or two Humanoids race past each other to the opposite
// goal line, in one shared MuJoCo world (see kDoc).
#include <cmath>

#include "../compose.h"
#include "../outcome.h"
#include "competitors.h"
#include "gym_compete.h"

namespace joltgym {
namespace {

constexpr double kPi = 3.14159265358979323846;

constexpr const char* kDoc =
    R"(RunToGoal: two robots start facing each other and race to the opposite goal line.

The run-to-goal game of Bansal et al. 2018 ("Emergent Complexity via
Multi-Agent Competition", gym-compete's ``run-to-goal-ants`` /
``run-to-goal-humans``), in one shared MuJoCo world.

=================  ============================================================
Agents             ``agent_0`` (starts at x = -``spawn_x``, -1 m, runs toward +x),
                   ``agent_1`` (starts at x = +spawn_x turned 180 degrees, runs toward -x)
Robot              ``robot="ant"`` (default; ant.xml, Ant-v5 physics) or
                   ``"humanoid"`` (humanoid.xml, Humanoid-v5 physics); reset noise
                   as Ant-v5 (0.1) / Humanoid-v5 (0.01)
Action             the robot's actuators: Ant 8 in [-1, 1], Humanoid 17 in [-0.4, 0.4]
Observation        float32, world frame, as gym-compete's agents (Ant 110, Humanoid 359):
                   [0:nq] own qpos (Ant 15, Humanoid 24; root x, y, z, quaternion,
                   joint angles); [nq:nq+nv] own qvel (Ant 14, Humanoid 23);
                   Humanoid only: cinert (13 x 10), cvel (13 x 6) of its bodies and
                   its qfrc_actuator (23); then cfrc_ext of its bodies clipped to
                   [-1, 1] (Ant 13 x 6, Humanoid 13 x 6); last 3: the opponent's
                   root (torso) position x, y, z. ``obs_frame="goal"`` turns
                   agent_1's observation 180 degrees about z (x, y flip sign,
                   the quaternion reads as unturned), so both agents see their
                   goal toward +x and one policy serves both seats
Outcome            a robot whose centre of mass crosses the opponent's goal line
                   (x = +-``goal_x``, 4 m) first wins, the other loses; both in one
                   step, both fallen (Ant torso z < 0.28, Humanoid < 0.8; gym-compete
                   ends the episode then), or ``max_cycles`` (500) steps: a draw
Reward             ``reward_outcome``: +``win_reward`` (1000) win, -win_reward loss,
                   -``draw_penalty`` (0) draw; plus ``shaping_weight`` (1) x the
                   reference's dense terms: ``reward_forward`` (Ant 1, Humanoid 0.25)
                   x centre-of-mass velocity toward the goal, ``reward_ctrl`` =
                   -``ctrl_cost_weight`` (Ant 0.5, Humanoid 0.1) x sum(action**2), ``reward_contact`` =
                   -(Ant 0.5e-3 x sum(clip(cfrc_ext, -1, 1)**2), Humanoid
                   min(0.5e-6 x sum(cfrc_ext**2), 10)), ``reward_survive`` = +-alive
                   bonus (Ant 1, Humanoid 5) while standing (torso z >= 0.28 / 1.0) or not
Info               ``outcome`` (``Outcome`` code: 0 ongoing, 1 win, 2 loss, 3 draw),
                   ``distance_to_goal``, the reward terms (all also on reset, the
                   reward terms 0)
Episode end        for both agents together: terminated on a result, truncated
                   at ``max_cycles``
Annealing          ``reset(options={"shaping_weight": w})`` (or the keyword
                   argument) sets the shaping weight for the following episodes
State              qpos and qvel of the whole world (float32)
=================  ============================================================
)";

enum Slot { kShapingWeight = 0, kSteps = 1, kScratch = 2 };

class RunToGoal final : public Task {
 public:
  explicit RunToGoal(const Params& p) {
    const std::string robot = p.String("robot");
    CompetitorRules rules = RulesFor(robot, "run_to_goal");
    spawn_x_ = p.Float("spawn_x");
    goal_x_ = p.Float("goal_x");
    if (!(spawn_x_ > 0.0)) throw BadValue("spawn_x should be > 0, got " + FloatText(spawn_x_));
    if (!(goal_x_ > spawn_x_)) {
      throw BadValue("goal_x should be > spawn_x (" + FloatText(spawn_x_) + "), got " +
                     FloatText(goal_x_));
    }
    win_reward_ = p.Float("win_reward");
    draw_penalty_ = p.Float("draw_penalty");
    shaping_weight_ = p.Float("shaping_weight");
    ApplyCtrlCostWeight(p, &rules);
    const double noise = p.Float("reset_noise_scale");
    if (!std::isnan(noise)) {
      if (!(noise >= 0.0))
        throw BadValue("reset_noise_scale should be >= 0 or None, got " + std::to_string(noise));
      rules.reset_noise = noise;
    }
    frame_skip_ = p.Int("frame_skip");
    const std::string frame = p.String("obs_frame");
    if (frame != "world" && frame != "goal")
      throw BadValue("obs_frame should be 'world' or 'goal', got '" + frame + "'");
    goal_frame_ = frame == "goal";

    const std::string xml = p.String("xml_file").empty() ? rules.xml_file : p.String("xml_file");
    const std::string arena =
        p.String("arena_file").empty()
            ? (rules.humanoid ? "humanoid_arena.xml" : "run_to_goal_ant_arena.xml")
            : p.String("arena_file");
    const std::string robot_path = ResolveAssetPath(xml);
    const std::vector<Placement> placements{FacingPlacement(-spawn_x_, 0.0, 0.0),
                                            FacingPlacement(spawn_x_, 0.0, kPi)};
    ComposedModel world = ComposeWorld(ResolveAssetPath(arena), robot_path, "torso", "agent_",
                                       placements, /*agents_collide=*/true);
    RequireRootJoint(world, robot_path, /*allow_free=*/true, /*allow_slide_x=*/false,
                     "run_to_goal");
    bots_ = Competitors(world, rules);
    // Draw the goal lines where they are.
    mjModel* m = const_cast<mjModel*>(world.model.get());
    const int right = mj_name2id(m, mjOBJ_GEOM, "rightgoal");
    const int left = mj_name2id(m, mjOBJ_GEOM, "leftgoal");
    if (right >= 0) m->geom_pos[3 * right] = goal_x_;
    if (left >= 0) m->geom_pos[3 * left] = -goal_x_;
    const int ring = mj_name2id(m, mjOBJ_GEOM, "ring");  // the humanoid arena's sumo ring: hidden
    if (ring >= 0) m->geom_rgba[4 * ring + 3] = 0.0f;
    SetModel(world.model);
    SetFrameSkip(frame_skip_);
    SetDims(2, bots_.obs_dim(), bots_.nu());
    SetActionBoundsFromCtrlRange(bots_.agents()[0].actuator_base);
    SetScratchSize(kScratch);
    AddEpisodeOption("shaping_weight", kShapingWeight);
    InfoLayout& info = mutable_info();
    outcome_ = info.AddLabel("outcome", OutcomeLabels(), /*at_reset=*/true);
    distance_to_goal_ = info.AddAtReset("distance_to_goal");
    reward_outcome_ = info.Add("reward_outcome");
    shaping_columns_ = ShapingColumns::Add(info);
    RenderCamera camera;  // the whole field from the side
    camera.target = CameraTarget::kFixed;
    camera.distance = 2.2 * goal_x_;
    camera.elevation = -25.0;
    camera.lookat[2] = rules.humanoid ? 0.8 : 0.3;
    SetCamera(camera);
  }

  void InitScratch(double* scratch) const override { scratch[kShapingWeight] = shaping_weight_; }

  void Reset(mjData* d, double* scratch, Rng& rng, double* obs, double* info) const override {
    const mjModel* m = model();
    bots_.ResetWithNoise(m, d, rng);
    mj_forward(m, d);
    scratch[kSteps] = 0.0;
    Observe(d, scratch, obs);
    const int width = info_layout().width();
    for (int k = 0; k < 2; ++k) {
      info[k * width + outcome_] = OutcomeCode(Outcome::kOngoing);
      info[k * width + distance_to_goal_] = ToGoal(d, k);
    }
  }

  bool Step(mjData* d, double* scratch, const float* actions,
            const StepOutput& out) const override {
    double before[2];
    for (int k = 0; k < 2; ++k) before[k] = ToGoal(d, k);
    const bool stable = bots_.Act(model(), d, actions, frame_skip_);
    scratch[kSteps] += 1.0;
    Observe(d, scratch, out.obs);

    bool reached[2], fallen[2];
    for (int k = 0; k < 2; ++k) {
      reached[k] = ToGoal(d, k) < 0.0;
      fallen[k] = bots_.Fallen(d, k);
    }
    const bool timeout = episode_limit() > 0 && scratch[kSteps] >= episode_limit();
    Outcome outcome[2] = {Outcome::kOngoing, Outcome::kOngoing};
    bool over = false;
    if (reached[0] != reached[1]) {
      outcome[0] = reached[0] ? Outcome::kWin : Outcome::kLoss;
      outcome[1] = reached[1] ? Outcome::kWin : Outcome::kLoss;
      over = true;
    } else if (reached[0] || (fallen[0] && fallen[1])) {
      outcome[0] = outcome[1] = Outcome::kDraw;
      over = true;
    } else if (timeout) {
      outcome[0] = outcome[1] = Outcome::kDraw;
    }

    const double weight = scratch[kShapingWeight];
    const int width = info_layout().width();
    for (int k = 0; k < 2; ++k) {
      const Shaping s = bots_.Shape(d, k, actions + k * bots_.nu(), before[k] - ToGoal(d, k), dt());
      double result = 0.0;
      if (outcome[k] == Outcome::kWin) result = win_reward_;
      if (outcome[k] == Outcome::kLoss) result = -win_reward_;
      if (outcome[k] == Outcome::kDraw) result = -draw_penalty_;
      double* info = out.info + k * width;
      out.reward[k] = s.Apply(result, weight, shaping_columns_, info);
      out.terminated[k] = over;
      info[outcome_] = OutcomeCode(outcome[k]);
      info[distance_to_goal_] = ToGoal(d, k);
      info[reward_outcome_] = result;
    }
    return stable;
  }

  void Observe(const mjData* d, const double*, double* obs) const override {
    double* second = bots_.Put(d, 0, 1, obs);
    bots_.Put(d, 1, 0, second);
    if (goal_frame_) bots_.HalfTurn(second);
  }

 private:
  // How far agent k's centre of mass is from its goal line, along its way
  // (negative once past it).
  double ToGoal(const mjData* d, int k) const {
    const double x = bots_.Com(d, k)[0];
    return k == 0 ? goal_x_ - x : x + goal_x_;
  }

  Competitors bots_;
  int frame_skip_ = 5;
  bool goal_frame_ = false;  // agent_1's observation turned 180 degrees
  double spawn_x_, goal_x_, win_reward_, draw_penalty_, shaping_weight_;
  int outcome_, distance_to_goal_, reward_outcome_;  // info offsets
  ShapingColumns shaping_columns_;
};

std::vector<ParamSpec> Spec() {
  return {
      StringParam("robot", "ant", "'ant' or 'humanoid'"),
      FloatParam("spawn_x", 1.0, "start distance of each robot from the centre line (x = 0)"),
      FloatParam("goal_x", 4.0, "x of the goal lines (+-goal_x)"),
      FloatParam("win_reward", 1000.0, "reward for a win (a loss gets minus this)"),
      FloatParam("draw_penalty", 0.0, "penalty for each agent on a draw"),
      FloatParam("shaping_weight", 1.0, "scale of the dense shaping terms"),
      CtrlCostWeightParam(),
      OptionalFloatParam("reset_noise_scale", NAN,
                         "scale of the reset noise; None: the robot's (0.1 / 0.01)"),
      IntParam("frame_skip", 5, "mj_step calls per env step", 1, kMaxFrameSkip),
      StringParam("obs_frame", "world",
                  "'world' (gym-compete's) or 'goal': agent_1's observation turned 180 degrees "
                  "about z, so both agents see their own goal toward +x"),
      StringParam("xml_file", "", "robot MJCF; '': the robot's (ant.xml / humanoid.xml)"),
      StringParam("arena_file", "",
                  "arena MJCF; '': the robot's (run_to_goal_ant_arena.xml / humanoid_arena.xml)"),
  };
}

// gym-compete's run-to-goal-ants-v0 / run-to-goal-humans-v0.
GymCompeteForm GymCompeteRunToGoal(const Params& p) {
  GymCompeteForm form;
  form.rules = GymCompeteRules::kRunToGoal;
  form.agent_prefix = "agent";
  if (RulesFor(p.String("robot"), "run_to_goal").humanoid) {
    form.scene = "gym_compete/run_to_goal_humans.xml";
    form.roles = {GymCompeteRole::kWalker, GymCompeteRole::kWalker};
  } else {
    form.scene = "gym_compete/run_to_goal_ants.xml";
    form.roles = {GymCompeteRole::kAnt, GymCompeteRole::kAnt};
  }
  return form;
}

const TaskRegistration kRegistration(
    RunsOnJolt(WithGymCompeteForm(Game<RunToGoal>("run_to_goal", "RunToGoal", "agent", Spec(), kDoc,
                                                  /*max_cycles=*/500),
                                  GymCompeteRunToGoal, {"robot"}),
               kAntJoltOptions));

}  // namespace
}  // namespace joltgym
