// YouShallNotPass: a walker Humanoid tries to cross a line that a blocker
// Humanoid defends, in one shared MuJoCo world (see kDoc).
#include <cmath>

#include "../compose.h"
#include "../outcome.h"
#include "competitors.h"
#include "gym_compete.h"

namespace joltgym {
namespace {

constexpr double kPi = 3.14159265358979323846;

constexpr const char* kDoc =
    R"(YouShallNotPass: a walker Humanoid tries to cross the line a blocker Humanoid defends.

The you-shall-not-pass game of Bansal et al. 2018 ("Emergent Complexity via
Multi-Agent Competition", gym-compete's ``you-shall-not-pass-humans``), in one
shared MuJoCo world with Humanoid-v5 physics (humanoid.xml, reset noise 0.01).

=================  ============================================================
Agents             ``walker_0`` (starts at x = -``spawn_x``, -1 m, facing +x),
                   ``blocker_0`` (starts at x = +spawn_x, facing the walker; names as
                   PettingZoo recommends, <role>_<number>);
                   bodies ``humanoid_0/...`` (walker), ``humanoid_1/...`` (blocker)
Action (17)        Humanoid-v5 torques in [-0.4, 0.4]
Observation (359)  float32, world frame, the same layout for both roles (as
                   gym-compete's): [0:24] own qpos, [24:47] own qvel, [47:177]
                   cinert and [177:255] cvel of its 13 bodies, [255:278]
                   qfrc_actuator, [278:356] cfrc_ext clipped to [-1, 1], [356:359]
                   the opponent's torso position
Outcome            the walker's centre of mass crosses x = ``goal_x`` (4 m): the
                   walker wins (+``win_reward``, 1000), the blocker loses; the walker
                   falls (torso z < ``fall_height``, 0.3 m): the walker loses and the
                   blocker wins if it stands (torso z >= fall_height), else its
                   outcome is "draw" (reward 0); ``max_cycles`` (500) steps: the walker
                   loses (-1000), the blocker's outcome is "draw" (reward 0)
Reward             ``reward_outcome`` plus ``shaping_weight`` (1) x the reference's
                   dense terms: walker ``reward_forward`` = 0.25 x centre-of-mass
                   velocity toward the line; both ``reward_ctrl`` = -``ctrl_cost_weight`` (0.1) x
                   sum(action**2), ``reward_contact`` = -min(0.5e-6 x sum(cfrc_ext**2),
                   10), ``reward_survive`` = +5 while the torso is at z >= 1, else -5;
                   ``reward_goal_distance``: walker -|x - goal_x| of its torso, blocker
                   +|x - goal_x| of the walker's torso
Info               ``outcome`` (``Outcome`` code: 0 ongoing, 1 win, 2 loss, 3 draw),
                   ``walker_distance_to_line``, the reward terms (all also on
                   reset, the reward terms 0)
Episode end        for both agents together: terminated on a result, truncated
                   at ``max_cycles`` (the walker's loss is reported on that step)
Annealing          ``reset(options={"shaping_weight": w})`` (or the keyword
                   argument) sets the shaping weight for the following episodes
State              qpos and qvel of the whole world (float32)
=================  ============================================================
)";

enum Slot { kShapingWeight = 0, kSteps = 1, kScratch = 2 };
constexpr int kWalker = 0, kBlocker = 1;

class YouShallNotPass final : public Task {
 public:
  explicit YouShallNotPass(const Params& p) {
    CompetitorRules rules = HumanoidRules();
    spawn_x_ = p.Float("spawn_x");
    goal_x_ = p.Float("goal_x");
    if (!(spawn_x_ > 0.0)) throw BadValue("spawn_x should be > 0, got " + FloatText(spawn_x_));
    if (!(goal_x_ > spawn_x_)) {
      throw BadValue("goal_x should be > spawn_x (" + FloatText(spawn_x_) + "), got " +
                     FloatText(goal_x_));
    }
    fall_height_ = p.Float("fall_height");
    win_reward_ = p.Float("win_reward");
    shaping_weight_ = p.Float("shaping_weight");
    ApplyCtrlCostWeight(p, &rules);
    const double noise = p.Float("reset_noise_scale");
    if (!(noise >= 0.0))
      throw BadValue("reset_noise_scale should be >= 0, got " + std::to_string(noise));
    rules.reset_noise = noise;
    frame_skip_ = p.Int("frame_skip");

    const std::string robot_path = ResolveAssetPath(p.String("xml_file"));
    const std::vector<Placement> placements{FacingPlacement(-spawn_x_, 0.0, 0.0),
                                            FacingPlacement(spawn_x_, 0.0, kPi)};
    ComposedModel world = ComposeWorld(ResolveAssetPath(p.String("arena_file")), robot_path,
                                       "torso", "humanoid_", placements, /*agents_collide=*/true);
    RequireRootJoint(world, robot_path, /*allow_free=*/true, /*allow_slide_x=*/false,
                     "you_shall_not_pass");
    bots_ = Competitors(world, rules);
    mjModel* m = const_cast<mjModel*>(world.model.get());
    const int right = mj_name2id(m, mjOBJ_GEOM, "rightgoal");
    if (right >= 0) m->geom_pos[3 * right] = goal_x_;
    for (const char* hidden : {"leftgoal", "ring"}) {  // only the walker's line is drawn
      const int g = mj_name2id(m, mjOBJ_GEOM, hidden);
      if (g >= 0) m->geom_rgba[4 * g + 3] = 0.0f;
    }
    SetModel(world.model);
    SetAgentNames({"walker_0", "blocker_0"});
    SetFrameSkip(frame_skip_);
    SetDims(2, bots_.obs_dim(), bots_.nu());
    SetActionBoundsFromCtrlRange(bots_.agents()[0].actuator_base);
    SetScratchSize(kScratch);
    AddEpisodeOption("shaping_weight", kShapingWeight);
    InfoLayout& info = mutable_info();
    outcome_ = info.AddLabel("outcome", OutcomeLabels(), /*at_reset=*/true);
    to_line_ = info.AddAtReset("walker_distance_to_line");
    reward_outcome_ = info.Add("reward_outcome");
    shaping_columns_ = ShapingColumns::Add(info);
    reward_goal_distance_ = info.Add("reward_goal_distance");
    RenderCamera camera;  // the field from the side
    camera.target = CameraTarget::kFixed;
    camera.distance = 2.0 * goal_x_;
    camera.elevation = -20.0;
    camera.lookat[0] = 0.5 * goal_x_ - 0.5 * spawn_x_;
    camera.lookat[2] = 0.8;
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
      info[k * width + to_line_] = ToLine(d);
    }
  }

  bool Step(mjData* d, double* scratch, const float* actions,
            const StepOutput& out) const override {
    const double before = ToLine(d);
    const bool stable = bots_.Act(model(), d, actions, frame_skip_);
    scratch[kSteps] += 1.0;
    Observe(d, scratch, out.obs);

    const bool crossed = ToLine(d) < 0.0;
    const bool walker_fell = Down(d, kWalker);
    const bool timeout = episode_limit() > 0 && scratch[kSteps] >= episode_limit();
    Outcome outcome[2] = {Outcome::kOngoing, Outcome::kOngoing};
    double result[2] = {0.0, 0.0};
    bool over = false;
    if (crossed) {
      outcome[kWalker] = Outcome::kWin, outcome[kBlocker] = Outcome::kLoss;
      result[kWalker] = win_reward_, result[kBlocker] = -win_reward_;
      over = true;
    } else if (walker_fell || timeout) {
      const bool blocker_wins = walker_fell && !Down(d, kBlocker);
      outcome[kWalker] = Outcome::kLoss;
      outcome[kBlocker] = blocker_wins ? Outcome::kWin : Outcome::kDraw;
      result[kWalker] = -win_reward_;
      result[kBlocker] = blocker_wins ? win_reward_ : 0.0;
      over = walker_fell;
    }

    const double weight = scratch[kShapingWeight];
    const double walker_x = bots_.Root(d, kWalker)[0];
    const int width = info_layout().width();
    for (int k = 0; k < 2; ++k) {
      const double progress = k == kWalker ? before - ToLine(d) : 0.0;
      const Shaping s = bots_.Shape(d, k, actions + k * bots_.nu(), progress, dt());
      const double gap = std::fabs(walker_x - goal_x_);
      const double goal = weight * (k == kWalker ? -gap : gap);
      double* info = out.info + k * width;
      out.reward[k] =
          (s.Apply(result[k], weight, shaping_columns_, info) + goal);
      out.terminated[k] = over;
      info[outcome_] = OutcomeCode(outcome[k]);
      info[to_line_] = ToLine(d);
      info[reward_outcome_] = result[k];
      info[reward_goal_distance_] = goal;
    }
    return stable;
  }

  void Observe(const mjData* d, const double*, double* obs) const override {
    for (int k = 0; k < 2; ++k) obs = bots_.Put(d, k, 1 - k, obs);
  }

 private:
  // The walker's centre of mass to the line (negative once past it).
  double ToLine(const mjData* d) const { return goal_x_ - bots_.Com(d, kWalker)[0]; }

  bool Down(const mjData* d, int k) const {
    const double z = bots_.Root(d, k)[2];
    return !(z >= fall_height_);
  }

  Competitors bots_;
  int frame_skip_ = 5;
  double spawn_x_, goal_x_, fall_height_, win_reward_, shaping_weight_;
  int outcome_, to_line_, reward_outcome_, reward_goal_distance_;  // info offsets
  ShapingColumns shaping_columns_;
};

std::vector<ParamSpec> Spec() {
  return {
      FloatParam("spawn_x", 1.0, "start distance of each humanoid from x = 0"),
      FloatParam("goal_x", 4.0, "x of the line the walker must cross"),
      FloatParam("fall_height", 0.3, "torso height below which a humanoid has fallen"),
      FloatParam("win_reward", 1000.0, "reward for a win (a loss gets minus this)"),
      FloatParam("shaping_weight", 1.0, "scale of the dense shaping terms"),
      CtrlCostWeightParam(),
      FloatParam("reset_noise_scale", 0.01, "scale of the reset noise (Humanoid-v5's)"),
      IntParam("frame_skip", 5, "mj_step calls per env step", 1, kMaxFrameSkip),
      StringParam("xml_file", "humanoid.xml", "robot MJCF"),
      StringParam("arena_file", "humanoid_arena.xml", "arena MJCF"),
  };
}

// gym-compete's you-shall-not-pass-humans-v0: its agent 1 (the walker, from
// x = +1 toward x = -4) is our walker_0, its agent 0 our blocker_0.
GymCompeteForm GymCompeteYouShallNotPass(const Params&) {
  GymCompeteForm form;
  form.rules = GymCompeteRules::kYouShallNotPass;
  form.scene = "gym_compete/you_shall_not_pass.xml";
  form.agent_prefix = "humanoid";
  form.agent_names = {"walker_0", "blocker_0"};
  form.roles = {GymCompeteRole::kWalker, GymCompeteRole::kBlocker};
  return form;
}

const TaskRegistration kRegistration(RunsOnJolt(WithGymCompeteForm(
    Game<YouShallNotPass>("you_shall_not_pass", "YouShallNotPass", "humanoid", Spec(), kDoc,
                          /*max_cycles=*/500),
    GymCompeteYouShallNotPass)));

}  // namespace
}  // namespace joltgym
