#include "compose.h"

#include <cmath>
#include <memory>

#include "errors.h"
#include "mujoco_errors.h"

namespace joltgym {

namespace {

using SpecPtr = std::unique_ptr<mjSpec, void (*)(mjSpec*)>;

// MuJoCo's messages while composing: an error is raised as MujocoError; the
// attach conflicts are expected (the arena's options, sizes and keyframes
// govern the shared world, and MuJoCo notes every robot setting it
// overrides), other warnings go on to ThreadConstructionReport().
void Settle(bool ok, MujocoReport& report, const std::string& what) {
  if (!ok) {
    throw MujocoError("MuJoCo failed " + what + ": " + report.error_message,
                      report.error == MujocoReport::Error::kOutOfMemory);
  }
  MujocoReport kept;
  for (std::string& warning : report.warnings) {
    if (warning.compare(0, 15, "Attach conflict") == 0) continue;
    kept.warnings.push_back(std::move(warning));
  }
  kept.dropped_warnings = report.dropped_warnings;
  report.Clear();
  ThreadConstructionReport().TakeWarnings(kept);
}

SpecPtr Parse(const std::string& path) {
  RequireModelFile(path);
  char error[1024] = "";
  mjSpec* spec = nullptr;
  MujocoReport report;
  const bool ok = GuardMujoco(
      [&] { spec = mj_parseXML(path.c_str(), nullptr, error, sizeof(error)); }, &report);
  SpecPtr owned(spec, mj_deleteSpec);
  Settle(ok, report, "parsing MJCF file '" + path + "'");
  if (spec == nullptr) throw BadValue("MJCF file '" + path + "' could not be parsed: " + error);
  return owned;
}

std::string BodyName(const mjModel* m, int body) {
  const char* name = mj_id2name(m, mjOBJ_BODY, body);
  return name != nullptr && name[0] != '\0' ? "'" + std::string(name) + "'"
                                            : "#" + std::to_string(body);
}

// What composition and the games rely on: `root_body` is the robot's first
// body, every other body hangs from it, it carries the robot's first joint,
// and the actuators (at least one) drive joints.
void ValidateRobot(const mjModel* robot, const std::string& path, const std::string& root_body) {
  const std::string file = "robot MJCF '" + path + "' ";
  const int root = mj_name2id(robot, mjOBJ_BODY, root_body.c_str());
  if (root < 0) throw BadValue(file + "has no body '" + root_body + "'");
  if (root != 1) {
    throw BadValue(file + "should have body '" + root_body +
                   "' first, as the root of the robot; it is body #" + std::to_string(root) +
                   " after " + BodyName(robot, 1));
  }
  for (int b = 2; b < robot->nbody; ++b) {
    if (robot->body_rootid[b] != 1) {
      throw BadValue(file + "should have every body under '" + root_body + "'; body " +
                     BodyName(robot, b) + " is not");
    }
  }
  if (robot->njnt < 1 || robot->body_jntadr[1] != 0) {
    throw BadValue(file + "should have a root joint on body '" + root_body + "'; got " +
                   (robot->njnt < 1 ? std::string("no joints") : "none on it"));
  }
  if (robot->nu < 1) throw BadValue(file + "should have at least one actuator; got 0");
  for (int i = 0; i < robot->nu; ++i) {
    const int type = robot->actuator_trntype[i];
    if (type != mjTRN_JOINT && type != mjTRN_JOINTINPARENT) {
      throw BadValue(file + "should have actuators that drive joints; actuator #" +
                     std::to_string(i) + " has transmission type " + std::to_string(type));
    }
  }
}

// Writes the compiled inertials of `compiled` into the spec's bodies so that
// they no longer depend on compiler settings (inertiafromgeom, settotalmass)
// of whichever spec they end up in.
void FreezeInertials(mjSpec* spec, const mjModel* compiled) {
  for (int b = 1; b < compiled->nbody; ++b) {
    // Bodies are visited in the same (depth-first) order in spec and model.
    int k = 0;
    mjsElement* el = mjs_firstElement(spec, mjOBJ_BODY);
    while (el != nullptr && k < b) {
      el = mjs_nextElement(spec, el);
      ++k;
    }
    mjsBody* body = el ? mjs_asBody(el) : nullptr;
    if (body == nullptr) throw BadValue("robot spec and model disagree on the number of bodies");
    body->mass = compiled->body_mass[b];
    for (int i = 0; i < 3; ++i) body->ipos[i] = compiled->body_ipos[3 * b + i];
    for (int i = 0; i < 4; ++i) body->iquat[i] = compiled->body_iquat[4 * b + i];
    for (int i = 0; i < 3; ++i) body->inertia[i] = compiled->body_inertia[3 * b + i];
    body->explicitinertial = 1;
  }
  // An attached subtree keeps its own compiler settings: make them use the
  // explicit inertials as given.
  spec->compiler.inertiafromgeom = mjINERTIAFROMGEOM_FALSE;
  spec->compiler.settotalmass = -1;
}

// Agent k's geoms: contype |= bit(k+1), conaffinity = the other agents'
// bits, plus bit 0 where the robot had it (so the arena's rules stay). Two
// geoms of one agent never match; geoms of two agents always do. Set in the
// spec, before compiling, so that the compiler's per-body filters
// (body_contype / body_conaffinity, used by the broad phase) include them.
void SetAgentContactBits(mjSpec* spec, int k, int num_agents) {
  int others = 0;
  for (int j = 0; j < num_agents; ++j) {
    if (j != k) others |= 1 << (j + 1);
  }
  for (mjsElement* el = mjs_firstElement(spec, mjOBJ_GEOM); el != nullptr;
       el = mjs_nextElement(spec, el)) {
    mjsGeom* geom = mjs_asGeom(el);
    if (geom->contype == 0 && geom->conaffinity == 0) continue;  // visual only
    geom->contype |= 1 << (k + 1);
    geom->conaffinity = (geom->conaffinity & 1) | others;
  }
}

std::string CompileError(mjSpec* spec) {
  const char* message = mjs_getError(spec);
  return message ? message : "unknown error";
}

const char* JointTypeName(int type) {
  switch (type) {
    case mjJNT_FREE:
      return "free";
    case mjJNT_BALL:
      return "ball";
    case mjJNT_SLIDE:
      return "slide";
    case mjJNT_HINGE:
      return "hinge";
  }
  return "unknown";
}

}  // namespace

void RequireRootJoint(const ComposedModel& world, const std::string& robot_path, bool allow_free,
                      bool allow_slide_x, const std::string& game) {
  const mjModel* r = world.robot.get();
  const int type = r->jnt_type[0];
  const double* axis = r->jnt_axis;
  const bool slide_x = type == mjJNT_SLIDE && std::fabs(axis[0] - 1.0) < 1e-9 &&
                       std::fabs(axis[1]) < 1e-9 && std::fabs(axis[2]) < 1e-9;
  if ((allow_free && type == mjJNT_FREE) || (allow_slide_x && slide_x)) return;
  std::string expected = allow_free && allow_slide_x ? "a free joint or a slide joint along x"
                         : allow_free                ? "a free joint"
                                                     : "a slide joint along x";
  std::string got = std::string("a ") + JointTypeName(type) + " joint";
  if (type == mjJNT_SLIDE) {
    got += " along (" + std::to_string(axis[0]) + ", " + std::to_string(axis[1]) + ", " +
           std::to_string(axis[2]) + ")";
  }
  throw BadValue(game + " robot MJCF '" + robot_path + "' should have " + expected +
                 " as its root joint; got " + got);
}

ComposedModel ComposeWorld(const std::string& arena_path, const std::string& robot_path,
                           const std::string& root_body, const std::string& agent_prefix,
                           const std::vector<Placement>& placements, bool agents_collide) {
  if (placements.empty() || placements.size() > 30) {
    throw BadValue("a shared world holds 1 to 30 agents, got " + std::to_string(placements.size()));
  }
  ComposedModel out;
  out.robot = LoadModel(robot_path, /*simulated=*/false);
  const mjModel* robot = out.robot.get();
  ValidateRobot(robot, robot_path, root_body);

  SpecPtr arena = Parse(arena_path);
  std::vector<SpecPtr> copies;
  mjsBody* world = mjs_findBody(arena.get(), "world");
  for (size_t k = 0; k < placements.size(); ++k) {
    copies.push_back(Parse(robot_path));
    mjSpec* copy = copies.back().get();
    FreezeInertials(copy, robot);
    if (agents_collide) SetAgentContactBits(copy, static_cast<int>(k), static_cast<int>(placements.size()));
    mjsBody* root = mjs_findBody(copy, root_body.c_str());
    if (root == nullptr) throw BadValue("robot MJCF '" + robot_path + "' has no body '" + root_body + "'");
    mjsFrame* frame = mjs_addFrame(world, nullptr);
    for (int i = 0; i < 3; ++i) frame->pos[i] = placements[k].pos[i];
    for (int i = 0; i < 4; ++i) frame->quat[i] = placements[k].quat[i];
    const std::string prefix = agent_prefix + std::to_string(k) + "/";
    mjsElement* attached = nullptr;
    MujocoReport report;
    const bool ok = GuardMujoco(
        [&] { attached = mjs_attach(frame->element, root->element, prefix.c_str(), ""); }, &report);
    Settle(ok, report, "attaching robot " + std::to_string(k));
    if (attached == nullptr) {
      throw BadValue("could not attach robot " + std::to_string(k) + ": " + CompileError(arena.get()));
    }
  }
  mjModel* model = nullptr;
  MujocoReport report;
  arena->compiler.usethread = 0;  // compile on this thread (see LoadModel)
  const bool ok = GuardMujoco([&] { model = mj_compile(arena.get(), nullptr); }, &report);
  if (model != nullptr) {
    out.model = ModelPtr(model, [](const mjModel* m) { mj_deleteModel(const_cast<mjModel*>(m)); });
  }
  Settle(ok, report, "compiling the shared world of '" + arena_path + "'");
  if (model == nullptr) throw BadValue("shared world could not be compiled: " + CompileError(arena.get()));
  RequirePositiveTimestep(model, arena_path);

  // Index maps, computed once; the hot path never looks names up.
  const std::string root_name = root_body;
  for (size_t k = 0; k < placements.size(); ++k) {
    const std::string prefix = agent_prefix + std::to_string(k) + "/";
    AgentIndex a;
    a.body_base = RequireId(model, mjOBJ_BODY, prefix + root_name);
    const int first_joint = model->body_jntadr[a.body_base];
    // The attached subtree must be contiguous, and inside the composed model,
    // for the base + i mapping; every index below is checked before use.
    bool contiguous = first_joint >= 0 && first_joint + robot->njnt <= model->njnt &&
                      a.body_base + robot->nbody - 1 <= model->nbody;
    a.qpos_base = contiguous ? model->jnt_qposadr[first_joint] : 0;
    a.qvel_base = contiguous ? model->jnt_dofadr[first_joint] : 0;
    contiguous =
        contiguous && a.qpos_base + robot->nq <= model->nq && a.qvel_base + robot->nv <= model->nv;
    a.actuator_base = -1;
    for (int i = 0; contiguous && i < model->nu && a.actuator_base < 0; ++i) {
      const int joint = model->actuator_trnid[2 * i];
      if (joint >= first_joint && joint < first_joint + robot->njnt) a.actuator_base = i;
    }
    contiguous = contiguous && a.actuator_base >= 0 && a.actuator_base + robot->nu <= model->nu;
    for (int j = 0; contiguous && j < robot->njnt; ++j) {
      contiguous = model->jnt_qposadr[first_joint + j] == a.qpos_base + robot->jnt_qposadr[j] &&
                   model->jnt_dofadr[first_joint + j] == a.qvel_base + robot->jnt_dofadr[j] &&
                   model->jnt_bodyid[first_joint + j] == a.body_base + robot->jnt_bodyid[j] - 1;
    }
    for (int i = 0; contiguous && i < robot->nu; ++i) {
      contiguous = model->actuator_trnid[2 * (a.actuator_base + i)] == first_joint + robot->actuator_trnid[2 * i];
    }
    if (!contiguous) throw BadValue("agent " + std::to_string(k) + "'s robot is not contiguous in the composed model");
    a.geom_begin = a.geom_end = -1;
    for (int b = a.body_base; b < a.body_base + robot->nbody - 1; ++b) {
      if (model->body_geomnum[b] == 0) continue;
      if (a.geom_begin < 0) a.geom_begin = model->body_geomadr[b];
      a.geom_end = model->body_geomadr[b] + model->body_geomnum[b];
    }
    if (a.geom_begin < 0) a.geom_begin = a.geom_end = 0;
    out.agents.push_back(a);
  }

  return out;
}

void AddRobotResetNoise(const mjModel* model, mjData* data, const AgentIndex& agent, int nq, int nv,
                        double scale, Rng& rng) {
  for (int i = 0; i < nq; ++i) {
    data->qpos[agent.qpos_base + i] = model->qpos0[agent.qpos_base + i] + rng.Uniform(-scale, scale);
  }
  for (int i = 0; i < nv; ++i) data->qvel[agent.qvel_base + i] = scale * rng.StandardNormal();
}

void SetAgentControls(mjData* data, const std::vector<AgentIndex>& agents, int nu,
                      const float* actions) {
  for (size_t k = 0; k < agents.size(); ++k) {
    for (int i = 0; i < nu; ++i) data->ctrl[agents[k].actuator_base + i] = actions[k * nu + i];
  }
}

}  // namespace joltgym
