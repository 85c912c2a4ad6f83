// KickAndDefend: a kicker Humanoid shoots a ball at a goal a keeper Humanoid
// defends, in one shared MuJoCo world (see kDoc).
#include <cmath>

#include "../compose.h"
#include "../outcome.h"
#include "competitors.h"
#include "gym_compete.h"

namespace joltgym {
namespace {

constexpr double kPi = 3.14159265358979323846;

constexpr const char* kDoc =
    R"(KickAndDefend: a kicker Humanoid shoots a ball at the goal a keeper Humanoid defends.

The kick-and-defend game of Bansal et al. 2018 ("Emergent Complexity via
Multi-Agent Competition", gym-compete's ``kick-and-defend``), in one shared
MuJoCo world with Humanoid-v5 physics (humanoid.xml, reset noise 0.01) and the
reference's ball (radius 0.2 m, 0.15 kg).

=================  ============================================================
Agents             ``kicker_0`` (facing +x), ``keeper_0`` (facing -x); bodies
                   ``humanoid_0/...`` (kicker), ``humanoid_1/...`` (keeper)
Start              kicker at x ~ U(-3.5, -0.5), keeper at x ~ U(1.6, 3.5), both
                   y ~ U(-2, 2); the ball at x ~ U(-2, 1), y ~ U(-``ball_spread``,
                   ball_spread) (2 m; the reference uses 4), z = 0.35, at rest
Action (17)        Humanoid-v5 torques in [-0.4, 0.4]
Observation (368)  float32, the same layout for both roles: [0:359] as
                   run_to_goal's humanoid (own qpos, qvel, cinert, cvel,
                   qfrc_actuator, clipped cfrc_ext, the opponent's torso position);
                   [359:361] the ball's x, y relative to own torso, [361] its z,
                   [362:365] its linear velocity, [365] goal x (4) - ball x,
                   [366] 3 - ball y, [367] -3 - ball y (to the posts)
Outcome            goal (ball x > ``goal_x`` (4 m) with |y| <= ``goal_half_width``
                   (3 m)): the kicker wins (+``win_reward``, 1000), the keeper loses;
                   the keeper's torso leaving its area (|goal_x - x| > 2.5 m): a
                   foul, the keeper loses (-1000) and the kicker's outcome is
                   "draw" (reward 0, as the reference); the ball past the goal line
                   wide, the ball sent back (x velocity < 0 at a horizontal speed > 1 m/s), both
                   fallen (torso z < 0.8) or ``max_cycles`` (500) steps: the kicker
                   loses (-1000) and the keeper wins with +1000, +500 if it touched
                   the ball during the episode and +500 if its torso is above 0.8 m
Reward             ``reward_outcome`` plus ``shaping_weight`` (1) x the reference's
                   dense terms: kicker ``reward_forward`` = 0.25 x centre-of-mass
                   velocity along +x; both ``reward_ctrl`` = -``ctrl_cost_weight`` (0.1) x sum(action**2),
                   ``reward_contact`` = -min(0.5e-6 x sum(cfrc_ext**2), 10),
                   ``reward_survive`` = +5 while the torso is at z >= 1, else -5;
                   ``reward_ball``: kicker -(its distance to the ball) - |goal_x -
                   ball x|, keeper +|goal_x - ball x|
Info               ``outcome`` (``Outcome`` code: 0 ongoing, 1 win, 2 loss, 3 draw),
                   ``ball_to_goal`` (goal_x - ball x), ``keeper_touched_ball``,
                   ``foul``, the reward terms (all also on reset, the step-only
                   ones 0)
Episode end        for both agents together: terminated on a result, truncated
                   at ``max_cycles`` (the keeper's win is reported on that step)
Annealing          ``reset(options={"shaping_weight": w})`` (or the keyword
                   argument) sets the shaping weight for the following episodes
State              qpos and qvel of the whole world (the ball first), float32
=================  ============================================================
)";

enum Slot { kShapingWeight = 0, kSteps = 1, kTouched = 2, kScratch = 3 };
constexpr int kKicker = 0, kKeeper = 1;
// Observation entries after Competitors::Put: ball x, y relative, z, linear
// velocity, distance to the goal line and to both posts in y.
constexpr int kBallFeatures = 3 + 3 + 1 + 2;

class KickAndDefend final : public Task {
 public:
  explicit KickAndDefend(const Params& p) {
    CompetitorRules rules = HumanoidRules();
    goal_x_ = p.Float("goal_x");
    goal_half_width_ = p.Float("goal_half_width");
    keeper_area_ = p.Float("keeper_area");
    ball_spread_ = p.Float("ball_spread");
    if (!(goal_x_ > 3.5))
      throw BadValue("goal_x should be > 3.5 (the keeper starts at x <= 3.5), got " +
                     FloatText(goal_x_));
    if (!(goal_half_width_ > 0.0))
      throw BadValue("goal_half_width should be > 0, got " + FloatText(goal_half_width_));
    if (!(keeper_area_ > 0.0))
      throw BadValue("keeper_area should be > 0, got " + FloatText(keeper_area_));
    if (!(ball_spread_ >= 0.0))
      throw BadValue("ball_spread should be >= 0, got " + FloatText(ball_spread_));
    win_reward_ = p.Float("win_reward");
    shaping_weight_ = p.Float("shaping_weight");
    ApplyCtrlCostWeight(p, &rules);
    const double noise = p.Float("reset_noise_scale");
    if (!(noise >= 0.0))
      throw BadValue("reset_noise_scale should be >= 0, got " + std::to_string(noise));
    rules.reset_noise = noise;
    frame_skip_ = p.Int("frame_skip");

    const std::string robot_path = ResolveAssetPath(p.String("xml_file"));
    const std::string arena_path = ResolveAssetPath(p.String("arena_file"));
    const std::vector<Placement> placements{FacingPlacement(0.0, 0.0, 0.0),
                                            FacingPlacement(0.0, 0.0, kPi)};
    ComposedModel world = ComposeWorld(arena_path, robot_path, "torso", "humanoid_", placements,
                                       /*agents_collide=*/true);
    RequireRootJoint(world, robot_path, /*allow_free=*/true, /*allow_slide_x=*/false,
                     "kick_and_defend");
    const mjModel* cm = world.model.get();
    ball_body_ = mj_name2id(cm, mjOBJ_BODY, "ball");
    ball_geom_ = mj_name2id(cm, mjOBJ_GEOM, "ball");
    const int ball_joint = mj_name2id(cm, mjOBJ_JOINT, "ball");
    if (ball_body_ < 0 || ball_geom_ < 0 || ball_joint < 0 ||
        cm->jnt_type[ball_joint] != mjJNT_FREE) {
      throw BadValue("kick_and_defend arena MJCF '" + arena_path +
                     "' should have a body, geom and free joint named 'ball'");
    }
    ball_qpos_ = cm->jnt_qposadr[ball_joint];
    ball_qvel_ = cm->jnt_dofadr[ball_joint];
    bots_ = Competitors(world, rules);
    SetModel(world.model);
    SetAgentNames({"kicker_0", "keeper_0"});
    SetFrameSkip(frame_skip_);
    SetDims(2, bots_.obs_dim() + kBallFeatures, bots_.nu());
    SetActionBoundsFromCtrlRange(bots_.agents()[0].actuator_base);
    SetScratchSize(kScratch);
    AddEpisodeOption("shaping_weight", kShapingWeight);
    InfoLayout& info = mutable_info();
    outcome_ = info.AddLabel("outcome", OutcomeLabels(), /*at_reset=*/true);
    ball_to_goal_ = info.AddAtReset("ball_to_goal");
    touched_ = info.Add("keeper_touched_ball");
    foul_ = info.Add("foul");
    reward_outcome_ = info.Add("reward_outcome");
    shaping_columns_ = ShapingColumns::Add(info);
    reward_ball_ = info.Add("reward_ball");
    RenderCamera camera;  // the pitch from the side, the goal on the right
    camera.target = CameraTarget::kFixed;
    camera.distance = 9.0;
    camera.elevation = -25.0;
    camera.lookat[0] = 1.0;
    camera.lookat[2] = 0.5;
    SetCamera(camera);
  }

  void InitScratch(double* scratch) const override { scratch[kShapingWeight] = shaping_weight_; }

  void Reset(mjData* d, double* scratch, Rng& rng, double* obs, double* info) const override {
    const mjModel* m = model();
    bots_.ResetWithNoise(m, d, rng);
    const double low[2] = {-3.5, 1.6}, high[2] = {-0.5, 3.5};
    for (int k = 0; k < 2; ++k) {
      mjtNum* q = d->qpos + bots_.agents()[k].qpos_base;
      q[0] += rng.Uniform(low[k], high[k]);
      q[1] += rng.Uniform(-2.0, 2.0);
    }
    mjtNum* ball = d->qpos + ball_qpos_;
    ball[0] = rng.Uniform(-2.0, 1.0);
    ball[1] = rng.Uniform(-ball_spread_, ball_spread_);
    ball[2] = 0.35;
    mj_forward(m, d);
    scratch[kSteps] = 0.0;
    scratch[kTouched] = 0.0;
    Observe(d, scratch, obs);
    const int width = info_layout().width();
    for (int k = 0; k < 2; ++k) {
      info[k * width + outcome_] = OutcomeCode(Outcome::kOngoing);
      info[k * width + ball_to_goal_] = goal_x_ - ball[0];
    }
  }

  bool Step(mjData* d, double* scratch, const float* actions,
            const StepOutput& out) const override {
    const double before = bots_.Com(d, kKicker)[0];
    const bool stable = bots_.Act(model(), d, actions, frame_skip_);
    scratch[kSteps] += 1.0;
    if (KeeperTouchesBall(d)) scratch[kTouched] = 1.0;
    Observe(d, scratch, out.obs);

    const mjtNum* ball = d->qpos + ball_qpos_;
    const mjtNum* ball_v = d->qvel + ball_qvel_;
    const bool goal = ball[0] > goal_x_ && std::fabs(ball[1]) <= goal_half_width_;
    const bool foul = std::fabs(goal_x_ - bots_.Root(d, kKeeper)[0]) > keeper_area_;
    const bool past = ball[0] > goal_x_;
    const bool sent_back = ball_v[0] < 0.0 && std::hypot(ball_v[0], ball_v[1]) > 1.0;
    const bool both_fallen = bots_.Fallen(d, kKicker) && bots_.Fallen(d, kKeeper);
    const bool timeout = episode_limit() > 0 && scratch[kSteps] >= episode_limit();
    const bool touched = scratch[kTouched] != 0.0;
    Outcome outcome[2] = {Outcome::kOngoing, Outcome::kOngoing};
    double result[2] = {0.0, 0.0};
    bool over = false;
    if (goal) {
      outcome[kKicker] = Outcome::kWin, outcome[kKeeper] = Outcome::kLoss;
      result[kKicker] = win_reward_, result[kKeeper] = -win_reward_;
      over = true;
    } else if (past || sent_back || both_fallen || timeout) {
      outcome[kKicker] = Outcome::kLoss, outcome[kKeeper] = Outcome::kWin;
      result[kKicker] = -win_reward_;
      result[kKeeper] = win_reward_ + (touched ? 0.5 * win_reward_ : 0.0) +
                        (bots_.Root(d, kKeeper)[2] > 0.8 ? 0.5 * win_reward_ : 0.0);
      over = past || sent_back || both_fallen;
    } else if (foul) {
      outcome[kKicker] = Outcome::kDraw, outcome[kKeeper] = Outcome::kLoss;
      result[kKeeper] = -win_reward_;
      over = true;
    }

    const double weight = scratch[kShapingWeight];
    const double ball_gap = std::fabs(goal_x_ - ball[0]);
    const mjtNum* kicker = bots_.Root(d, kKicker);
    const double to_ball = std::hypot(ball[0] - kicker[0], ball[1] - kicker[1]);
    const int width = info_layout().width();
    for (int k = 0; k < 2; ++k) {
      const double progress = k == kKicker ? bots_.Com(d, kKicker)[0] - before : 0.0;
      const Shaping s = bots_.Shape(d, k, actions + k * bots_.nu(), progress, dt());
      const double ball_term = weight * (k == kKicker ? -to_ball - ball_gap : ball_gap);
      double* info = out.info + k * width;
      out.reward[k] =
          (s.Apply(result[k], weight, shaping_columns_, info) + ball_term);
      out.terminated[k] = over;
      info[outcome_] = OutcomeCode(outcome[k]);
      info[ball_to_goal_] = goal_x_ - ball[0];
      info[touched_] = touched ? 1.0 : 0.0;
      info[foul_] = foul && !goal ? 1.0 : 0.0;
      info[reward_outcome_] = result[k];
      info[reward_ball_] = ball_term;
    }
    return stable;
  }

  void Observe(const mjData* d, const double*, double* obs) const override {
    const mjtNum* ball = d->qpos + ball_qpos_;
    const mjtNum* ball_v = d->qvel + ball_qvel_;
    for (int k = 0; k < 2; ++k) {
      obs = bots_.Put(d, k, 1 - k, obs);
      const mjtNum* q = bots_.Root(d, k);
      *obs++ = ball[0] - q[0];
      *obs++ = ball[1] - q[1];
      *obs++ = ball[2];
      for (int i = 0; i < 3; ++i) *obs++ = ball_v[i];
      *obs++ = goal_x_ - ball[0];
      *obs++ = goal_half_width_ - ball[1];
      *obs++ = -goal_half_width_ - ball[1];
    }
  }

 private:
  bool KeeperTouchesBall(const mjData* d) const {
    const AgentIndex& a = bots_.agents()[kKeeper];
    for (int i = 0; i < d->ncon; ++i) {
      const mjContact& c = d->contact[i];
      if (c.dist >= 0) continue;
      const int other =
          c.geom[0] == ball_geom_ ? c.geom[1] : (c.geom[1] == ball_geom_ ? c.geom[0] : -1);
      if (a.OwnsGeom(other)) return true;
    }
    return false;
  }

  Competitors bots_;
  int frame_skip_ = 5;
  int ball_body_ = -1, ball_geom_ = -1, ball_qpos_ = 0, ball_qvel_ = 0;
  double goal_x_, goal_half_width_, keeper_area_, ball_spread_, win_reward_, shaping_weight_;
  int outcome_, ball_to_goal_, touched_, foul_, reward_outcome_, reward_ball_;  // info offsets
  ShapingColumns shaping_columns_;
};

std::vector<ParamSpec> Spec() {
  return {
      FloatParam("goal_x", 4.0, "x of the goal line"),
      FloatParam("goal_half_width", 3.0, "half the goal's width: a goal needs |ball y| <= this"),
      FloatParam("keeper_area", 2.5,
                 "the keeper fouls when its torso is further than this from the goal line"),
      FloatParam("ball_spread", 2.0, "the ball starts at y ~ U(-ball_spread, ball_spread)"),
      FloatParam("win_reward", 1000.0,
                 "reward for a win (a loss gets minus this; keeper bonuses are halves of it)"),
      FloatParam("shaping_weight", 1.0, "scale of the dense shaping terms"),
      CtrlCostWeightParam(),
      FloatParam("reset_noise_scale", 0.01, "scale of the reset noise (Humanoid-v5's)"),
      IntParam("frame_skip", 5, "mj_step calls per env step", 1, kMaxFrameSkip),
      StringParam("xml_file", "humanoid.xml", "robot MJCF"),
      StringParam("arena_file", "kick_and_defend_arena.xml", "arena MJCF (with a free 'ball')"),
  };
}

// gym-compete's kick-and-defend-v0.
GymCompeteForm GymCompeteKickAndDefend(const Params&) {
  GymCompeteForm form;
  form.rules = GymCompeteRules::kKickAndDefend;
  form.scene = "gym_compete/kick_and_defend.xml";
  form.agent_prefix = "humanoid";
  form.agent_names = {"kicker_0", "keeper_0"};
  form.roles = {GymCompeteRole::kKicker, GymCompeteRole::kKeeper};
  return form;
}

const TaskRegistration kRegistration(RunsOnJolt(WithGymCompeteForm(
    Game<KickAndDefend>("kick_and_defend", "KickAndDefend", "humanoid", Spec(), kDoc,
                        /*max_cycles=*/500),
    GymCompeteKickAndDefend)));

}  // namespace
}  // namespace joltgym
