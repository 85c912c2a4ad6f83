// Jolt Physics worlds built from a compiled mjModel, with an mjData mirror.
//
// What maps to what (and what is approximated) is listed in docs/guides/jolt.md:
//   MuJoCo body        -> one Jolt body: its geoms as a compound shape, MuJoCo's
//                         mass, centre of mass and inertia
//   root joints        -> world-aligned slides and hinges at the body origin
//                         become the root's allowed DOFs (planar roots); a free
//                         joint leaves it unconstrained
//   one hinge          -> a HingeConstraint with MuJoCo's range, and its
//                         position motor as the joint's spring and damper
//                         (implicit, like MuJoCo's damping); armature as a
//                         spring toward the angle the joint's rate predicts
//                         (implicit, see HingePlan)
//   two or three hinges, and every hinge of a model with free roots
//                      -> one HingeJoint (hinge_joint.h) per body: each
//                         hinge's range, spring, damper, armature and motor
//                         on its own coordinate; it reports its impulses
//   welded bodies      -> part of their weld root's Jolt body (shapes, mass
//                         and inertia combined)
//   motor actuator     -> torque gear * clamp(ctrl) on child and parent (a
//                         generalized force in a HingeJoint)
//   cfrc_ext           -> (free roots) each body's change of momentum over
//                         the step minus gravity and its joints' impulses
//   contype/conaffinity, parent filtering -> a GroupFilter on body pairs
//   friction           -> the largest sliding friction of a body's geoms,
//                         combined by max as MuJoCo does
#include "jolt_engine.h"

// Jolt.h must come first.
#include <Jolt/Jolt.h>

#include <Jolt/Core/Factory.h>
#include <Jolt/Core/JobSystemSingleThreaded.h>
#include <Jolt/Core/TempAllocator.h>
#include <Jolt/Physics/Body/BodyCreationSettings.h>
#include <Jolt/Physics/Collision/GroupFilter.h>
#include <Jolt/Physics/Collision/Shape/BoxShape.h>
#include <Jolt/Physics/Collision/Shape/CapsuleShape.h>
#include <Jolt/Physics/Collision/Shape/CylinderShape.h>
#include <Jolt/Physics/Collision/Shape/OffsetCenterOfMassShape.h>
#include <Jolt/Physics/Collision/Shape/RotatedTranslatedShape.h>
#include <Jolt/Physics/Collision/Shape/SphereShape.h>
#include <Jolt/Physics/Collision/Shape/StaticCompoundShape.h>
#include <Jolt/Physics/Constraints/HingeConstraint.h>
#include <Jolt/Physics/Constraints/SliderConstraint.h>
#include <Jolt/Physics/PhysicsSystem.h>
#include <Jolt/Physics/StateRecorderImpl.h>
#include <Jolt/RegisterTypes.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <vector>

#include "../errors.h"
#include "../simulation_poll.h"
#include "hinge_joint.h"

namespace joltgym {
namespace {

// --- process-wide Jolt set-up --------------------------------------------------

void QuietTrace(const char*, ...) {}

#ifdef JPH_ENABLE_ASSERTS
// A debug test build (JOLTGYM_JOLT_ASSERTS): a failed Jolt assert says
// what failed and stops the process, so that the test running it fails.
// Except for a world blowing up: a hostile but finite state (set_state's
// joints far outside their ranges at the speed bound) can drive the solver
// to non-finite velocities, which the release build finds after the update
// and reports as physics_unstable. Here Jolt's first check of a velocity
// (isfinite) fails inside the update: from then on until the update ends,
// its asserts are counted, not fatal (the rest of the update runs on the
// same non-finite numbers, as in release), and the world is a blow-up.
thread_local bool t_in_update = false;
thread_local int t_nonfinite_asserts = 0;

bool ReportJoltAssert(const char* expression, const char* message, const char* file, JPH::uint line) {
  if (t_in_update && (t_nonfinite_asserts > 0 || std::strstr(expression, "isfinite") != nullptr)) {
    ++t_nonfinite_asserts;
    return false;  // go on, without breaking
  }
  std::fprintf(stderr, "Jolt assert failed: %s%s%s (%s:%u)\n", expression, message ? ": " : "",
               message ? message : "", file, static_cast<unsigned>(line));
  std::fflush(stderr);
  std::abort();
}
#endif

// One Jolt update; false if the asserts build found non-finite velocities
// during it (see ReportJoltAssert; the release build finds them after it).
bool UpdateChecked(JPH::PhysicsSystem& system, float h, JPH::TempAllocator* temp, JPH::JobSystem* jobs) {
#ifdef JPH_ENABLE_ASSERTS
  t_in_update = true;
  t_nonfinite_asserts = 0;
  system.Update(h, 1, temp, jobs);
  t_in_update = false;
  return t_nonfinite_asserts == 0;
#else
  system.Update(h, 1, temp, jobs);
  return true;
#endif
}

// Jolt's allocator, factory and type registry, once. The version and the
// defines that change its ABI (double precision, object layer bits, ...) are
// checked first: RegisterTypes() aborts the process on a mismatch.
void InitJoltOnce() {
  static std::once_flag once;
  static bool ok = false;
  std::call_once(once, [] {
    JPH::RegisterDefaultAllocator();
    JPH::Trace = QuietTrace;
    JPH_IF_ENABLE_ASSERTS(JPH::AssertFailed = ReportJoltAssert;)
    if (!JPH::VerifyJoltVersionID()) return;
    JPH::Factory::sInstance = new JPH::Factory();
    JPH::RegisterTypes();
    ok = true;
  });
  if (!ok) {
    throw BadValue(
        "engine='jolt': the linked Jolt library was built with another version or other defines "
        "than the headers this module was compiled with (JPH_VERSION_ID mismatch); rebuild "
        "joltgym_marl from a clean build folder");
  }
}

namespace layers {
constexpr JPH::ObjectLayer kStatic = 0;
constexpr JPH::ObjectLayer kMoving = 1;
constexpr JPH::BroadPhaseLayer kStaticBroad(0);
constexpr JPH::BroadPhaseLayer kMovingBroad(1);
}  // namespace layers

class BroadPhaseLayers final : public JPH::BroadPhaseLayerInterface {
 public:
  JPH::uint GetNumBroadPhaseLayers() const override { return 2; }
  JPH::BroadPhaseLayer GetBroadPhaseLayer(JPH::ObjectLayer layer) const override {
    return layer == layers::kStatic ? layers::kStaticBroad : layers::kMovingBroad;
  }
};

class ObjectVsBroadPhase final : public JPH::ObjectVsBroadPhaseLayerFilter {
 public:
  bool ShouldCollide(JPH::ObjectLayer layer, JPH::BroadPhaseLayer broad) const override {
    return layer == layers::kMoving || broad == layers::kMovingBroad;
  }
};

class ObjectPairs final : public JPH::ObjectLayerPairFilter {
 public:
  bool ShouldCollide(JPH::ObjectLayer a, JPH::ObjectLayer b) const override {
    return a == layers::kMoving || b == layers::kMoving;
  }
};

// MuJoCo's contact filter on body pairs: some geom pair of the two bodies has
// (contype1 & conaffinity2) || (contype2 & conaffinity1), the bodies are not
// welded together, and neither is the other's parent (filterparent; the world
// body excepted). The group id is the MuJoCo body id of the Jolt body (a
// body welded to its parent is part of its parent's Jolt body: body_weldid;
// 0 for the world and what is welded to it).
class BodyPairFilter final : public JPH::GroupFilter {
 public:
  explicit BodyPairFilter(const mjModel* m) : n_(m->nbody), allowed_(m->nbody * m->nbody, 0) {
    const bool filter_parent = !(m->opt.disableflags & mjDSBL_FILTERPARENT);
    for (int g1 = 0; g1 < m->ngeom; ++g1) {
      for (int g2 = g1 + 1; g2 < m->ngeom; ++g2) {
        const int b1 = m->geom_bodyid[g1], b2 = m->geom_bodyid[g2];
        const int w1 = m->body_weldid[b1], w2 = m->body_weldid[b2];
        if (w1 == w2) continue;
        const bool types = (m->geom_contype[g1] & m->geom_conaffinity[g2]) ||
                           (m->geom_contype[g2] & m->geom_conaffinity[g1]);
        if (!types) continue;
        const int p1 = m->body_weldid[m->body_parentid[w1]];
        const int p2 = m->body_weldid[m->body_parentid[w2]];
        if (filter_parent && w1 != 0 && w2 != 0 && (w1 == p2 || w2 == p1)) continue;
        allowed_[w1 * n_ + w2] = allowed_[w2 * n_ + w1] = 1;
      }
    }
  }
  bool CanCollide(const JPH::CollisionGroup& a, const JPH::CollisionGroup& b) const override {
    return allowed_[a.GetGroupID() * n_ + b.GetGroupID()] != 0;
  }

 private:
  int n_;
  std::vector<std::uint8_t> allowed_;
};

// MuJoCo combines two geoms' friction by taking the larger.
float MaxFriction(const JPH::Body& a, const JPH::SubShapeID&, const JPH::Body& b,
                  const JPH::SubShapeID&) {
  return std::max(a.GetFriction(), b.GetFriction());
}
float NoRestitution(const JPH::Body&, const JPH::SubShapeID&, const JPH::Body&,
                    const JPH::SubShapeID&) {
  return 0.0f;
}

// --- small math -----------------------------------------------------------------

JPH::Vec3 V(const mjtNum* v) {
  return JPH::Vec3(static_cast<float>(v[0]), static_cast<float>(v[1]), static_cast<float>(v[2]));
}
// MuJoCo quaternions are w, x, y, z; Jolt's constructor takes x, y, z, w.
JPH::Quat Q(const mjtNum* q) {
  return JPH::Quat(static_cast<float>(q[1]), static_cast<float>(q[2]), static_cast<float>(q[3]),
                   static_cast<float>(q[0]))
      .Normalized();
}

double WrapToPi(double a) {
  a = std::fmod(a + mjPI, 2.0 * mjPI);
  if (a < 0) a += 2.0 * mjPI;
  return a - mjPI;
}

// The angle of rotation `r` (w, x, y, z) about unit axis `axis`.
double AngleAbout(const mjtNum* r, const mjtNum* axis) {
  const double s = r[1] * axis[0] + r[2] * axis[1] + r[3] * axis[2];
  return WrapToPi(2.0 * std::atan2(s, r[0]));
}

std::string BodyName(const mjModel* m, int b) {
  const char* name = mj_id2name(m, mjOBJ_BODY, b);
  return name ? std::string("'") + name + "'" : "#" + std::to_string(b);
}

// --- the per-task description ---------------------------------------------------

// How the mirror reads one MuJoCo joint back from the Jolt bodies.
struct JointMap {
  // kHinge: a Jolt HingeConstraint; kJoint: hinge `index` of a HingeJoint
  enum Kind { kFree, kRootSlide, kRootHinge, kHinge, kJoint } kind;
  int joint;       // MuJoCo joint id
  int body;        // its body
  int parent;      // parent's Jolt body (0: world)
  mjtNum axis[3];  // local axis (body frame)
  int hinge = -1;  // index into the world's hinge constraints (kHinge) or HingeJoints (kJoint)
  int index = 0;   // kJoint: which of the HingeJoint's hinges
};

struct BodyPlan {
  int mj_body;
  JPH::RefConst<JPH::Shape> shape;
  JPH::EAllowedDOFs dofs = JPH::EAllowedDOFs::All;
  JPH::MassProperties mass;
  float friction = 0.0f;
  JPH::RVec3 position;  // at qpos0
  JPH::Quat rotation;
  JPH::Mat44 inertia;  // about the centre of mass, in the body's frame
};

struct HingePlan {
  int joint;
  int body, parent;  // MuJoCo ids (parent 0: the world)
  // Armature A (a rotor inertia on the joint alone, which no rigid body has)
  // as MuJoCo treats it, implicitly: a torque -A (w_new - w_old) / h. The
  // motor's spring gives it: stiffness A / h^2 toward the angle predicted
  // from the step's start, theta_old + h * w_old (Advance sets that target
  // each Jolt step), pulls with -(A / h^2)(theta_old + h w_new - theta_old -
  // h w_old). It joins the joint's own spring (stiffness k about springref)
  // as one spring of stiffness k + A / h^2 toward their weighted target.
  // (Adding A to the link's inertia instead would also weigh on every
  // rotation of the link, and gave NaN on the Ant in the prototype; an
  // explicit rate torque is unstable at few solver iterations.)
  double armature = 0.0;
  double stiffness = 0.0;
  double spring_target = 0.0;  // springref - qpos0: Jolt's angle of the spring's rest
  JPH::HingeConstraintSettings settings;
};

// A root slide with a range, damping or stiffness: a SliderConstraint to the
// world along it (the root's allowed DOFs have neither), its motor the spring
// and damper.
struct SliderPlan {
  int body;
  int dof;  // the slide's dof (qfrc_constraint)
  JPH::SliderConstraintSettings settings;
};

struct ActuatorPlan {
  int actuator, joint, body, parent;
  double gear;
  bool slide = false;  // a force along the joint's axis (else a torque about it)
  JPH::Vec3 slide_axis = JPH::Vec3::sZero();  // a root slide's axis in the world
  int joint_plan = -1;  // a hinge of HingeJoint #joint_plan: a generalized force in it
  int index = 0;        // which of its hinges
};

// A body's hinges as one HingeJoint (hinge_joint.h): bodies with two or
// three hinges, and every hinged body of a model whose contact forces are
// measured (a HingeJoint reports its impulses).
struct JointPlan {
  JointPlan(const mjModel* m, const mjData* d, int b, int parent_body)
      : body(b), parent(parent_body), first_joint(m->body_jntadr[b]) {
    settings.count = m->body_jntnum[b];
    settings.anchor = JPH::RVec3(V(d->xanchor + 3 * first_joint));
    for (int k = 0; k < settings.count; ++k) {
      const int j = first_joint + k;
      HingeParams& h = settings.hinges[k];
      mju_copy3(h.axis, m->jnt_axis + 3 * j);
      mju_normalize3(h.axis);
      const double q0 = m->qpos0[m->jnt_qposadr[j]];
      h.limited = m->jnt_limited[j];
      // MuJoCo's limit constraint holds the joint `margin` inside its range.
      const double margin = std::clamp(m->jnt_margin[j], 0.0, 0.5 * (m->jnt_range[2 * j + 1] - m->jnt_range[2 * j]));
      h.low = m->jnt_range[2 * j] + margin - q0;
      h.high = m->jnt_range[2 * j + 1] - margin - q0;
      h.solref[0] = m->jnt_solref[mjNREF * j];
      h.solref[1] = m->jnt_solref[mjNREF * j + 1];
      for (int i = 0; i < 5; ++i) h.solimp[i] = m->jnt_solimp[mjNIMP * j + i];
      h.timestep = m->opt.timestep;
      h.stiffness = m->jnt_stiffness[j];
      h.spring_target = m->qpos_spring[m->jnt_qposadr[j]] - q0;
      h.damping = m->dof_damping[m->jnt_dofadr[j]];
      h.armature = m->dof_armature[m->jnt_dofadr[j]];
    }
  }
  int body, parent;  // MuJoCo body and the parent's Jolt body (0: the world)
  int first_joint;
  HingeJointSettings settings;
};

// One body's fluid forces (MuJoCo's inertia-box model).
struct FluidPlan {
  int plan;        // its Jolt body (index into JoltModel::bodies)
  double box[3];   // the inertia box's sides
  double com[3];   // its centre of mass in the Jolt body's frame
  double frame[4]; // its inertia frame in the Jolt body's frame
};

class JoltModel;

class JoltEngine final : public Engine {
 public:
  explicit JoltEngine(const JoltModel& model);
  bool Advance(const mjModel* m, mjData* d, int frame_skip) override;
  void WriteState(const mjModel* m, mjData* d) override;
  void BodyPoses(const mjModel* m, double* out) const override;

 private:
  void ReadBack(const mjModel* m, mjData* d);
  bool BodiesFinite() const;
  bool blown_up_ = false;  // a non-finite or runaway body: not stepped again until WriteState
  // qpos and qvel as this engine last left them in the mirror (ReadBack,
  // WriteState). A mirror that differs at the next Advance was written by
  // someone else (a user of the Gymnasium env's `data`, a task): that state
  // is then written into the Jolt world first, as set_state would.
  std::vector<mjtNum> mirror_;
  void RememberMirror(const mjModel* m, const mjData* d);
  bool MirrorWritten(const mjModel* m, const mjData* d) const;
  // What MuJoCo does to a bad state (its bad qpos / qvel / qacc warnings):
  // the data back to the model's reference state, and the Jolt world with it.
  void ResetToReference(const mjModel* m, mjData* d);
  // Contact forces: each body's momentum before a Jolt update, and after it
  // the impulse its contacts gave it (what gravity and its joints did not).
  void RecordMomentaBefore();
  // MuJoCo's inertia-box fluid forces, for the next Jolt update.
  void ApplyFluidForces(const mjModel* m);
  // data.xfrc_applied: each body's force (at its centre of mass) and torque, in the world frame.
  void ApplyPerturbations(const mjModel* m, const mjData* d);
  void AccumulateContactImpulses(float h);
  void WriteContactForces(const mjModel* m, mjData* d, double duration);

  const JoltModel& model_;
  JPH::TempAllocatorImplWithMallocFallback temp_;  // a fixed block; malloc past it
  JPH::JobSystemSingleThreaded jobs_;
  JPH::PhysicsSystem system_;
  std::vector<JPH::BodyID> body_of_;  // per MuJoCo body (invalid for the world / static / welded)
  std::vector<int> body_index_;       // per MuJoCo body: its index in model_.bodies (or -1)
  std::vector<JPH::Ref<JPH::HingeConstraint>> hinges_;
  std::vector<JPH::Ref<JPH::SliderConstraint>> sliders_;
  std::vector<JPH::Ref<HingeJoint>> joints_;
  std::vector<double> joint_forces_;  // kMaxHinges per HingeJoint
  // Per Jolt body (model_.bodies order), for the contact forces.
  struct Momentum {
    JPH::Vec3 linear_velocity, angular_velocity;
    JPH::Quat rotation;
    JPH::RVec3 com;
  };
  std::vector<Momentum> before_;
  std::vector<double> contact_impulse_;  // 6 per body: angular about the world origin, linear
  std::vector<double> applied_;          // 6 per body: the fluid's force this update, the same way
  std::vector<double> limit_impulse_;    // per dof: joint-limit impulses over the step (qfrc_constraint)
  void AccumulateLimitImpulses(const mjModel* m);
  JPH::StateRecorderImpl snapshot_;
};

class JoltModel final : public EngineModel {
 public:
  JoltModel(const mjModel* m, const std::string& task, const EngineOptions& options);
  const std::string& name() const override { return name_; }
  std::unique_ptr<Engine> MakeEngine() const override { return std::make_unique<JoltEngine>(*this); }
  std::string ChangedField(const mjModel* m) const override;

  const mjModel* model;
  std::string name_ = kJoltEngine;
  BroadPhaseLayers broad_layers;
  ObjectVsBroadPhase object_vs_broad;
  ObjectPairs object_pairs;
  JPH::Ref<BodyPairFilter> filter;
  std::vector<BodyPlan> bodies;
  std::vector<std::pair<JPH::RefConst<JPH::Shape>, float>> statics;  // world geoms, friction
  std::vector<JPH::RVec3> static_positions;
  std::vector<JPH::Quat> static_rotations;
  std::vector<HingePlan> hinges;
  std::vector<SliderPlan> sliders;
  std::vector<JointMap> joints;
  std::vector<JointPlan> joints_plans;
  std::vector<ActuatorPlan> actuators;
  bool contact_forces = false;  // cfrc_ext measured (every root free)
  std::vector<FluidPlan> fluids;
  // Per MuJoCo body: the body whose Jolt body holds it (body_weldid) and
  // its pose in that body's frame.
  std::vector<int> weld_root;
  std::vector<mjtNum> weld_pos, weld_quat;
  JPH::PhysicsSettings settings;
  int substeps = 1;  // collision steps per MuJoCo timestep
  std::vector<mjtNum> ref_xpos, ref_xquat;  // body poses at qpos0
  std::vector<unsigned char> built_from;    // the bytes of BuildFields(model) when built
  mjtNum built_fluid[5] = {};               // opt.density, viscosity, wind when built
};

// A model array the Jolt world is built from (read once, by JoltModel).
struct ModelField {
  const char* name;
  const void* data;
  std::size_t bytes;
};

// The model's arrays JoltModel reads when it builds bodies, shapes, joints
// and actuators (what Advance reads live, the controls' ranges, the
// timestep, gravity and the fluid's density, viscosity and wind, is not
// here: changes to those take effect).
std::array<ModelField, 36> BuildFields(const mjModel* m) {
  const std::size_t b = m->nbody, j = m->njnt, g = m->ngeom, u = m->nu;
  const std::size_t r = sizeof(mjtNum), i = sizeof(int);
  return {{
      {"body_pos", m->body_pos, 3 * b * r},         {"body_quat", m->body_quat, 4 * b * r},
      {"body_ipos", m->body_ipos, 3 * b * r},       {"body_iquat", m->body_iquat, 4 * b * r},
      {"body_mass", m->body_mass, b * r},           {"body_inertia", m->body_inertia, 3 * b * r},
      {"jnt_type", m->jnt_type, j * i},             {"jnt_pos", m->jnt_pos, 3 * j * r},
      {"jnt_axis", m->jnt_axis, 3 * j * r},         {"jnt_range", m->jnt_range, 2 * j * r},
      {"jnt_limited", m->jnt_limited, j * sizeof(mjtByte)},
      {"jnt_stiffness", m->jnt_stiffness, j * r},   {"jnt_margin", m->jnt_margin, j * r},
      {"jnt_solref", m->jnt_solref, mjNREF * j * r}, {"jnt_solimp", m->jnt_solimp, mjNIMP * j * r},
      {"dof_damping", m->dof_damping, m->nv * r},   {"dof_armature", m->dof_armature, m->nv * r},
      {"qpos0", m->qpos0, m->nq * r},               {"qpos_spring", m->qpos_spring, m->nq * r},
      {"geom_type", m->geom_type, g * i},           {"geom_contype", m->geom_contype, g * i},
      {"geom_conaffinity", m->geom_conaffinity, g * i},
      {"geom_size", m->geom_size, 3 * g * r},       {"geom_pos", m->geom_pos, 3 * g * r},
      {"geom_quat", m->geom_quat, 4 * g * r},       {"geom_friction", m->geom_friction, 3 * g * r},
      {"geom_fluid", m->geom_fluid, mjNFLUID * g * r},
      {"actuator_gear", m->actuator_gear, 6 * u * r},
      {"actuator_gainprm", m->actuator_gainprm, mjNGAIN * u * r},
      {"actuator_biasprm", m->actuator_biasprm, mjNBIAS * u * r},
      {"actuator_trnid", m->actuator_trnid, 2 * u * i},
      // Read by no Jolt body or contact (the guide's table says what is not modelled): a change
      // to them is refused rather than silently ignored.
      {"dof_frictionloss", m->dof_frictionloss, m->nv * r},
      {"geom_condim", m->geom_condim, g * i},
      {"geom_margin", m->geom_margin, g * r},
      {"opt.disableflags", &m->opt.disableflags, i},
      {"opt.enableflags", &m->opt.enableflags, i},
  }};
}

std::string JoltModel::ChangedField(const mjModel* m) const {
  std::size_t at = 0;
  for (const ModelField& field : BuildFields(m)) {
    if (std::memcmp(built_from.data() + at, field.data, field.bytes) != 0) return field.name;
    at += field.bytes;
  }
  // A robot made without a fluid has no fluid plan: the fluid options take effect only on one
  // made in a fluid (Swimmer).
  if (fluids.empty()) {
    if (m->opt.density != built_fluid[0]) return "opt.density";
    if (m->opt.viscosity != built_fluid[1]) return "opt.viscosity";
    for (int k = 0; k < 3; ++k) {
      if (m->opt.wind[k] != built_fluid[2 + k]) return "opt.wind";
    }
  }
  return "";
}

// A geom as a Jolt shape at `pos`/`quat` (by default its pose in its
// body's frame), or throws.
JPH::RefConst<JPH::Shape> GeomShape(const mjModel* m, int g, const std::string& task,
                                    const mjtNum* pos = nullptr, const mjtNum* quat = nullptr) {
  const mjtNum* size = m->geom_size + 3 * g;
  JPH::RefConst<JPH::Shape> shape;
  // Jolt's capsule and cylinder lie along y, MuJoCo's along z.
  JPH::Quat along_z = JPH::Quat::sIdentity();
  const float r = static_cast<float>(size[0]);
  switch (m->geom_type[g]) {
    case mjGEOM_SPHERE:
      shape = new JPH::SphereShape(r);
      break;
    case mjGEOM_CAPSULE:
      shape = new JPH::CapsuleShape(static_cast<float>(size[1]), r);
      along_z = JPH::Quat::sRotation(JPH::Vec3::sAxisX(), 0.5f * JPH::JPH_PI);
      break;
    case mjGEOM_CYLINDER: {
      const float half = static_cast<float>(size[1]);
      shape = new JPH::CylinderShape(half, std::min(0.05f, 0.5f * std::min(half, r)));
      along_z = JPH::Quat::sRotation(JPH::Vec3::sAxisX(), 0.5f * JPH::JPH_PI);
      break;
    }
    case mjGEOM_BOX: {
      const JPH::Vec3 half = V(size);
      shape = new JPH::BoxShape(half, std::min(0.05f, 0.5f * half.ReduceMin()));
      break;
    }
    default: {
      const char* name = mj_id2name(m, mjOBJ_GEOM, g);
      throw BadValue("engine='jolt' (task '" + task + "'): geom " +
                     (name ? std::string("'") + name + "'" : "#" + std::to_string(g)) +
                     " has mjtGeom type " + std::to_string(m->geom_type[g]) +
                     "; the Jolt engine supports sphere, capsule, cylinder and box geoms (and planes "
                     "on the world body)");
    }
  }
  const JPH::Vec3 at = V(pos ? pos : m->geom_pos + 3 * g);
  const JPH::Quat rot = Q(quat ? quat : m->geom_quat + 4 * g) * along_z;
  return new JPH::RotatedTranslatedShape(at, rot, shape);
}

JoltModel::JoltModel(const mjModel* m, const std::string& task, const EngineOptions& options)
    : model(m) {
  InitJoltOnce();
  for (const ModelField& field : BuildFields(m)) {
    const auto* bytes = static_cast<const unsigned char*>(field.data);
    built_from.insert(built_from.end(), bytes, bytes + field.bytes);
  }
  built_fluid[0] = m->opt.density;
  built_fluid[1] = m->opt.viscosity;
  for (int k = 0; k < 3; ++k) built_fluid[2 + k] = m->opt.wind[k];
  auto refuse = [&](const std::string& why) {
    throw BadValue("engine='jolt' (task '" + task + "'): " + why);
  };
  for (int g = 0; g < m->ngeom; ++g) {
    if ((m->opt.viscosity > 0 || m->opt.density > 0) && m->geom_fluid[mjNFLUID * g] > 0) {
      refuse("geom #" + std::to_string(g) +
             " uses MuJoCo's ellipsoid fluid model (fluidshape); the Jolt engine has the inertia-box one");
    }
  }
  // Reference poses: every joint at qpos0 (where Jolt's hinge angles are 0).
  std::unique_ptr<mjData, void (*)(mjData*)> data(mj_makeData(m), mj_deleteData);
  mjData* d = data.get();
  if (d == nullptr) throw MujocoError("MuJoCo could not make data for the Jolt model", true);
  mj_resetData(m, d);
  mj_kinematics(m, d);
  ref_xpos.assign(d->xpos, d->xpos + 3 * m->nbody);
  ref_xquat.assign(d->xquat, d->xquat + 4 * m->nbody);
  filter = new BodyPairFilter(m);

  // Tendons and equality constraints that act on the dynamics have no Jolt
  // counterpart (an inert fixed tendon, like Humanoid's, is fine).
  for (int t = 0; t < m->ntendon; ++t) {
    if (m->tendon_limited[t] || m->tendon_stiffness[t] > 0 || m->tendon_damping[t] > 0 ||
        m->tendon_frictionloss[t] > 0) {
      refuse("tendon #" + std::to_string(t) +
             " has a range, stiffness, damping or friction; the Jolt engine has no tendons");
    }
  }
  if (m->neq > 0) refuse("the model has equality constraints; the Jolt engine has none");
  // Contact forces (cfrc_ext) are measured when every root is free: then a
  // body's change of momentum is gravity, its joints' impulses (all
  // HingeJoints, which report them) and its contacts.
  contact_forces = false;
  for (int b = 1; b < m->nbody; ++b) {
    if (m->body_weldid[m->body_parentid[b]] != 0 || m->body_jntnum[b] == 0) continue;
    const bool free = m->body_jntnum[b] == 1 && m->jnt_type[m->body_jntadr[b]] == mjJNT_FREE;
    if (!free) {
      contact_forces = false;
      break;
    }
    contact_forces = true;
  }

  weld_root.assign(m->nbody, 0);
  weld_pos.assign(3 * m->nbody, 0.0);
  weld_quat.assign(4 * m->nbody, 0.0);
  for (int b = 0; b < m->nbody; ++b) {
    // Where b sits in its Jolt body (the weld root's frame), at any qpos.
    const int w = m->body_weldid[b];
    weld_root[b] = w;
    mjtNum inv[4], delta[3];
    mju_negQuat(inv, d->xquat + 4 * w);
    mju_sub3(delta, d->xpos + 3 * b, d->xpos + 3 * w);
    mju_rotVecQuat(weld_pos.data() + 3 * b, delta, inv);
    mju_mulQuat(weld_quat.data() + 4 * b, inv, d->xquat + 4 * b);
  }

  std::vector<int> body_plan(m->nbody, -1);
  for (int b = 1; b < m->nbody; ++b) {
    if (m->body_weldid[b] != b) continue;  // welded: part of its weld root's Jolt body (or static)
    const int first = m->body_jntadr[b], count = m->body_jntnum[b];
    const int parent = m->body_weldid[m->body_parentid[b]];  // the parent's Jolt body (0: the world)
    BodyPlan plan;
    plan.mj_body = b;
    // Shapes: the geoms of the body and of every body welded to it, in its frame.
    std::vector<JPH::RefConst<JPH::Shape>> parts;
    for (int g = 0; g < m->ngeom; ++g) {
      const int gb = m->geom_bodyid[g];
      if (m->body_weldid[gb] != b) continue;
      if (m->geom_contype[g] == 0 && m->geom_conaffinity[g] == 0) continue;
      if (gb == b) {
        parts.push_back(GeomShape(m, g, task));
      } else {
        mjtNum pos[3], quat[4], local[4];
        mju_rotVecQuat(pos, m->geom_pos + 3 * g, weld_quat.data() + 4 * gb);
        mju_addTo3(pos, weld_pos.data() + 3 * gb);
        mju_mulQuat(local, weld_quat.data() + 4 * gb, m->geom_quat + 4 * g);
        mju_copy4(quat, local);
        parts.push_back(GeomShape(m, g, task, pos, quat));
      }
      plan.friction = std::max(plan.friction, static_cast<float>(m->geom_friction[3 * g]));
    }
    if (parts.empty()) {
      // No colliding geom (Swimmer's links): a small sphere, which the
      // contact filter never lets touch anything (no geom pair allows it).
      parts.push_back(new JPH::SphereShape(0.01f));
    }
    JPH::RefConst<JPH::Shape> shape;
    if (parts.size() == 1) {
      shape = parts[0];
    } else {
      JPH::StaticCompoundShapeSettings compound;
      for (const auto& part : parts) compound.AddShape(JPH::Vec3::sZero(), JPH::Quat::sIdentity(), part);
      shape = compound.Create().Get();
    }
    // MuJoCo's mass, centre of mass and inertia of the body and what is
    // welded to it (parallel axes), in the body's frame.
    double mass = 0.0, com[3] = {0, 0, 0}, inertia[9] = {0};
    for (int c = b; c < m->nbody; ++c) {
      if (m->body_weldid[c] != b) continue;
      mjtNum at[3];
      mju_rotVecQuat(at, m->body_ipos + 3 * c, weld_quat.data() + 4 * c);
      mju_addTo3(at, weld_pos.data() + 3 * c);
      mju_addToScl3(com, at, m->body_mass[c]);
      mass += m->body_mass[c];
    }
    if (mass > 0) mju_scl3(com, com, 1.0 / mass);
    for (int c = b; c < m->nbody; ++c) {
      if (m->body_weldid[c] != b) continue;
      mjtNum at[3], r[3], iquat[4], rot[9];
      mju_rotVecQuat(at, m->body_ipos + 3 * c, weld_quat.data() + 4 * c);
      mju_addTo3(at, weld_pos.data() + 3 * c);
      mju_sub3(r, at, com);
      mju_mulQuat(iquat, weld_quat.data() + 4 * c, m->body_iquat + 4 * c);
      mju_quat2Mat(rot, iquat);
      const mjtNum* diag = m->body_inertia + 3 * c;
      const double r2 = mju_dot3(r, r);
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
          double v = 0.0;
          for (int k = 0; k < 3; ++k) v += rot[3 * i + k] * diag[k] * rot[3 * j + k];
          inertia[3 * i + j] += v + m->body_mass[c] * ((i == j ? r2 : 0.0) - r[i] * r[j]);
        }
      }
    }
    shape = new JPH::OffsetCenterOfMassShape(shape, V(com) - shape->GetCenterOfMass());
    plan.shape = shape;
    JPH::Mat44 tensor = JPH::Mat44::sIdentity();
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) tensor(i, j) = static_cast<float>(inertia[3 * i + j]);
    }
    // A root hinge's armature is added to the root's inertia about its axis
    // (a child's is a spring in its joint, HingePlan).
    for (int j = first; j < first + count; ++j) {
      if (m->jnt_type[j] != mjJNT_HINGE || parent != 0) continue;
      const double armature = m->dof_armature[m->jnt_dofadr[j]];
      const JPH::Vec3 a = V(m->jnt_axis + 3 * j);
      for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) {
          tensor(r, c) += static_cast<float>(armature) * a[r] * a[c];
        }
      }
    }
    plan.mass.mMass = static_cast<float>(mass);
    plan.mass.mInertia = tensor;
    plan.inertia = tensor;
    plan.position = JPH::RVec3(V(d->xpos + 3 * b));
    plan.rotation = Q(d->xquat + 4 * b);

    // Joints.
    if (parent == 0) {
      if (count == 1 && m->jnt_type[first] == mjJNT_FREE) {
        joints.push_back({JointMap::kFree, first, b, 0, {0, 0, 0}});
      } else {
        // World-aligned slides and hinges at the body origin: allowed DOFs.
        JPH::EAllowedDOFs dofs = JPH::EAllowedDOFs::None;
        for (int j = first; j < first + count; ++j) {
          const int type = m->jnt_type[j];
          const mjtNum* axis = d->xaxis + 3 * j;
          int k = -1;
          for (int i = 0; i < 3; ++i) {
            if (std::abs(std::abs(axis[i]) - 1.0) < 1e-9) k = i;
          }
          // A slide moves the body wherever its anchor is; a hinge turns it
          // about its anchor, which must be the origin Jolt's DOFs turn about.
          const bool at_origin = type == mjJNT_SLIDE || mju_norm3(m->jnt_pos + 3 * j) < 1e-12;
          if ((type != mjJNT_SLIDE && type != mjJNT_HINGE) || k < 0 || !at_origin || axis[k] < 0) {
                  refuse("root body " + BodyName(m, b) +
                   ": its joints should be one free joint, or slides and hinges along +x, +y or +z "
                   "(hinges at the body origin): a planar root");
          }
          const double damping = m->dof_damping[m->jnt_dofadr[j]];
          const bool sprung = damping > 0 || m->jnt_stiffness[j] > 0;
          // (A root hinge's armature is in the root's inertia, above: the
          // root's rotation about the axis is the hinge's rate.)
          if (type == mjJNT_HINGE && (m->jnt_limited[j] || sprung)) {
            const char* name = mj_id2name(m, mjOBJ_JOINT, j);
            refuse(std::string("root hinge '") + (name ? name : "?") +
                   "' has a range, damping or stiffness; not supported yet on a root");
          }
          if (type == mjJNT_SLIDE && (m->jnt_limited[j] || sprung)) {
            SliderPlan slider;
            slider.body = b;
            slider.dof = m->jnt_dofadr[j];
            JPH::SliderConstraintSettings& s = slider.settings;
            s.mSpace = JPH::EConstraintSpace::WorldSpace;
            s.mAutoDetectPoint = false;
            s.mPoint1 = s.mPoint2 = JPH::RVec3(V(d->xpos + 3 * b));
            const JPH::Vec3 along = V(axis).Normalized();
            s.mSliderAxis1 = s.mSliderAxis2 = along;
            s.mNormalAxis1 = s.mNormalAxis2 = along.GetNormalizedPerpendicular();
            const double q0 = m->qpos0[m->jnt_qposadr[j]];
            if (m->jnt_limited[j]) {
              // MuJoCo's limit constraint holds the joint `margin` inside its range.
              const double margin =
                  std::clamp(m->jnt_margin[j], 0.0, 0.5 * (m->jnt_range[2 * j + 1] - m->jnt_range[2 * j]));
              s.mLimitsMin = static_cast<float>(std::min(m->jnt_range[2 * j] + margin - q0, 0.0));
              s.mLimitsMax = static_cast<float>(std::max(m->jnt_range[2 * j + 1] - margin - q0, 0.0));
              const double timeconst = m->jnt_solref[mjNREF * j], dampratio = m->jnt_solref[mjNREF * j + 1];
              if (timeconst > 0 && dampratio > 0) {
                s.mLimitsSpringSettings.mFrequency = static_cast<float>(1.0 / (2.0 * mjPI * timeconst));
                s.mLimitsSpringSettings.mDamping = static_cast<float>(dampratio);
              }
            }
            if (sprung) {
              s.mMotorSettings.mSpringSettings.mMode = JPH::ESpringMode::StiffnessAndDamping;
              s.mMotorSettings.mSpringSettings.mStiffness =
                  static_cast<float>(std::max(m->jnt_stiffness[j], 1e-6));
              s.mMotorSettings.mSpringSettings.mDamping = static_cast<float>(damping);
            }
            sliders.push_back(slider);
          }
          const int bit = (type == mjJNT_SLIDE ? 1 : 8) << k;
          dofs = dofs | static_cast<JPH::EAllowedDOFs>(bit);
          joints.push_back({type == mjJNT_SLIDE ? JointMap::kRootSlide : JointMap::kRootHinge, j, b,
                            0, {axis[0], axis[1], axis[2]}});
        }
        plan.dofs = dofs;
      }
    } else {
      bool all_hinges = count >= 1 && count <= kMaxHinges;
      for (int j = first; j < first + count && all_hinges; ++j) {
        all_hinges = m->jnt_type[j] == mjJNT_HINGE &&
                     mju_dist3(m->jnt_pos + 3 * j, m->jnt_pos + 3 * first) < 1e-9;
      }
      if (!all_hinges) {
        refuse("body " + BodyName(m, b) + " has " + std::to_string(count) +
               " joint(s); the Jolt engine supports one, two or three hinges sharing one anchor per "
               "child body");
      }
      if (count > 1 || contact_forces) {
        joints_plans.push_back(JointPlan(m, d, b, parent));
        for (int k = 0; k < count; ++k) {
          joints.push_back({JointMap::kJoint, first + k, b, parent,
                            {m->jnt_axis[3 * (first + k)], m->jnt_axis[3 * (first + k) + 1],
                             m->jnt_axis[3 * (first + k) + 2]},
                            static_cast<int>(joints_plans.size()) - 1, k});
        }
        body_plan[b] = static_cast<int>(bodies.size());
        bodies.push_back(plan);
        continue;
      }
      const int j = first;
      HingePlan hinge;
      hinge.joint = j;
      hinge.body = b;
      hinge.parent = parent;
      JPH::HingeConstraintSettings& s = hinge.settings;
      s.mSpace = JPH::EConstraintSpace::WorldSpace;
      s.mPoint1 = s.mPoint2 = JPH::RVec3(V(d->xanchor + 3 * j));
      const JPH::Vec3 axis = V(d->xaxis + 3 * j).Normalized();
      s.mHingeAxis1 = s.mHingeAxis2 = axis;
      s.mNormalAxis1 = s.mNormalAxis2 = axis.GetNormalizedPerpendicular();
      const double q0 = m->qpos0[m->jnt_qposadr[j]];
      if (m->jnt_limited[j]) {
        s.mLimitsMin = static_cast<float>(std::clamp(m->jnt_range[2 * j] - q0, -mjPI, 0.0));
        s.mLimitsMax = static_cast<float>(std::clamp(m->jnt_range[2 * j + 1] - q0, 0.0, mjPI));
        const double timeconst = m->jnt_solref[mjNREF * j], dampratio = m->jnt_solref[mjNREF * j + 1];
        if (timeconst > 0 && dampratio > 0) {
          s.mLimitsSpringSettings.mFrequency = static_cast<float>(1.0 / (2.0 * mjPI * timeconst));
          s.mLimitsSpringSettings.mDamping = static_cast<float>(dampratio);
        }
      }
      // The joint's spring (stiffness about springref), its armature (see
      // HingePlan) and damping, implicit: a position motor in
      // stiffness-and-damping mode. A damper alone needs a positive
      // stiffness (zero makes Jolt's motor rigid).
      const double damping = m->dof_damping[m->jnt_dofadr[j]];
      const double step = m->opt.timestep / std::max(options.substeps, 1);
      hinge.armature = m->dof_armature[m->jnt_dofadr[j]];
      hinge.stiffness = m->jnt_stiffness[j];
      hinge.spring_target = m->qpos_spring[m->jnt_qposadr[j]] - q0;
      const double spring = hinge.stiffness + hinge.armature / (step * step);
      if (damping > 0 || spring > 0) {
        s.mMotorSettings.mSpringSettings.mMode = JPH::ESpringMode::StiffnessAndDamping;
        s.mMotorSettings.mSpringSettings.mStiffness = static_cast<float>(std::max(spring, 1e-6));
        s.mMotorSettings.mSpringSettings.mDamping = static_cast<float>(damping);
      }
      hinges.push_back(hinge);
      joints.push_back({JointMap::kHinge, j, b, parent,
                        {m->jnt_axis[3 * j], m->jnt_axis[3 * j + 1], m->jnt_axis[3 * j + 2]},
                        static_cast<int>(hinges.size()) - 1});
    }
    body_plan[b] = static_cast<int>(bodies.size());
    bodies.push_back(plan);
  }
  // The world's geoms (and those of bodies welded to it): static.
  for (int g = 0; g < m->ngeom; ++g) {
    const int b = m->geom_bodyid[g];
    if (m->body_weldid[b] != 0) continue;
    if (m->geom_contype[g] == 0 && m->geom_conaffinity[g] == 0) continue;
    JPH::RefConst<JPH::Shape> shape;
    mjtNum quat[4];
    mju_mat2Quat(quat, d->geom_xmat + 9 * g);
    JPH::Quat rot = Q(quat);
    JPH::RVec3 pos(V(d->geom_xpos + 3 * g));
    if (m->geom_type[g] == mjGEOM_PLANE) {
      // An infinite plane as a large box under the plane's surface.
      const float depth = 1.0f;
      shape = new JPH::BoxShape(JPH::Vec3(1000.0f, 1000.0f, depth), 0.05f);
      pos = pos - JPH::RVec3(rot * JPH::Vec3(0, 0, depth));
    } else {
      const JPH::RefConst<JPH::Shape> in_body = GeomShape(m, g, task);
      // GeomShape is in the body frame; here the geom's world pose is used.
      // (The outer shape is kept alive until the inner one is held.)
      shape = static_cast<const JPH::RotatedTranslatedShape*>(in_body.GetPtr())->GetInnerShape();
      JPH::Quat along = JPH::Quat::sIdentity();
      if (m->geom_type[g] == mjGEOM_CAPSULE || m->geom_type[g] == mjGEOM_CYLINDER) {
        along = JPH::Quat::sRotation(JPH::Vec3::sAxisX(), 0.5f * JPH::JPH_PI);
      }
      rot = rot * along;
    }
    statics.emplace_back(shape, static_cast<float>(m->geom_friction[3 * g]));
    static_positions.push_back(pos);
    static_rotations.push_back(rot);
  }
  // Actuators: motors on hinges (torque gear * ctrl).
  for (int a = 0; a < m->nu; ++a) {
    const int j = m->actuator_trnid[2 * a];
    const bool motor = m->actuator_trntype[a] == mjTRN_JOINT && m->actuator_dyntype[a] == mjDYN_NONE &&
                       m->actuator_gaintype[a] == mjGAIN_FIXED && m->actuator_biastype[a] == mjBIAS_NONE;
    const bool root_slide = m->jnt_type[j] == mjJNT_SLIDE && m->body_parentid[m->jnt_bodyid[j]] == 0;
    if (!motor || (m->jnt_type[j] != mjJNT_HINGE && !root_slide)) {
      refuse("actuator #" + std::to_string(a) +
             " is not a motor on a hinge or a root slide; the Jolt engine supports those so far");
    }
    const double gain = m->actuator_gainprm[mjNGAIN * a];
    ActuatorPlan plan{a, j, m->jnt_bodyid[j], m->body_weldid[m->body_parentid[m->jnt_bodyid[j]]],
                      m->actuator_gear[6 * a] * gain, root_slide, V(d->xaxis + 3 * j)};
    for (const JointMap& jm : joints) {
      if (jm.joint == j && jm.kind == JointMap::kJoint) plan.joint_plan = jm.hinge, plan.index = jm.index;
    }
    actuators.push_back(plan);
  }
  // MuJoCo's inertia-box fluid model (option density, viscosity, wind) per
  // body: the box of the body's inertia, in its inertia frame.
  if (m->opt.viscosity > 0 || m->opt.density > 0) {
    for (int b = 1; b < m->nbody; ++b) {
      const int root = m->body_weldid[b];
      if (m->body_mass[b] < mjMINVAL || body_plan[root] < 0) continue;
      FluidPlan fluid;
      fluid.plan = body_plan[root];
      const mjtNum* inertia = m->body_inertia + 3 * b;
      for (int k = 0; k < 3; ++k) {
        const double sum = inertia[(k + 1) % 3] + inertia[(k + 2) % 3] - inertia[k];
        fluid.box[k] = std::sqrt(std::max(mjMINVAL, sum) / m->body_mass[b] * 6.0);
      }
      mju_rotVecQuat(fluid.com, m->body_ipos + 3 * b, weld_quat.data() + 4 * b);
      mju_addTo3(fluid.com, weld_pos.data() + 3 * b);
      mju_mulQuat(fluid.frame, weld_quat.data() + 4 * b, m->body_iquat + 4 * b);
      fluids.push_back(fluid);
    }
  }
  settings.mNumVelocitySteps = static_cast<JPH::uint>(options.velocity_iterations);
  settings.mNumPositionSteps = static_cast<JPH::uint>(options.position_iterations);
  substeps = options.substeps;
  settings.mAllowSleeping = false;
}

// --- one world -------------------------------------------------------------------

// The bodies' speed bound, m/s and rad/s (Jolt clamps to it every step).
constexpr float kMaxSpeed = 500.0f;

JoltEngine::JoltEngine(const JoltModel& model)
    : model_(model), temp_(1 << 18), jobs_(JPH::cMaxPhysicsJobs) {
  const mjModel* m = model.model;
  mirror_.assign(static_cast<std::size_t>(m->nq + m->nv), 0.0);
  const JPH::uint max_bodies = static_cast<JPH::uint>(model.bodies.size() + model.statics.size() + 4);
  // Room for every body touching a few others; Jolt drops contacts beyond.
  const JPH::uint max_contacts = 16 * max_bodies;
  system_.Init(max_bodies, 0, max_contacts, max_contacts, model.broad_layers, model.object_vs_broad,
               model.object_pairs);
  system_.SetPhysicsSettings(model.settings);
  system_.SetGravity(V(m->opt.gravity));
  system_.SetCombineFriction(MaxFriction);
  system_.SetCombineRestitution(NoRestitution);
  JPH::BodyInterface& bodies = system_.GetBodyInterfaceNoLock();
  body_of_.assign(m->nbody, JPH::BodyID());
  body_index_.assign(m->nbody, -1);
  for (std::size_t i = 0; i < model.bodies.size(); ++i) body_index_[model.bodies[i].mj_body] = static_cast<int>(i);
  for (std::size_t i = 0; i < model.statics.size(); ++i) {
    JPH::BodyCreationSettings s(model.statics[i].first, model.static_positions[i], model.static_rotations[i],
                                JPH::EMotionType::Static, layers::kStatic);
    s.mFriction = model.statics[i].second;
    s.mRestitution = 0.0f;
    s.mCollisionGroup = JPH::CollisionGroup(model.filter, 0, 0);
    bodies.CreateAndAddBody(s, JPH::EActivation::DontActivate);
  }
  for (const BodyPlan& plan : model.bodies) {
    JPH::BodyCreationSettings s(plan.shape, plan.position, plan.rotation, JPH::EMotionType::Dynamic,
                                layers::kMoving);
    s.mAllowedDOFs = plan.dofs;
    s.mOverrideMassProperties = JPH::EOverrideMassProperties::MassAndInertiaProvided;
    s.mMassPropertiesOverride = plan.mass;
    s.mFriction = plan.friction;
    s.mRestitution = 0.0f;
    s.mLinearDamping = 0.0f;
    s.mAngularDamping = 0.0f;
    // Far above any robot's (HalfCheetah's joints stay under 30 rad/s); beyond them Jolt's solver
    // and rotation integration overflow (its asserts catch it under hostile states).
    s.mMaxLinearVelocity = kMaxSpeed;
    s.mMaxAngularVelocity = kMaxSpeed;
    s.mAllowSleeping = false;
    s.mCollisionGroup = JPH::CollisionGroup(model.filter, static_cast<JPH::CollisionGroup::GroupID>(plan.mj_body), 0);
    body_of_[plan.mj_body] = bodies.CreateAndAddBody(s, JPH::EActivation::Activate);
  }
  JPH::BodyLockInterfaceNoLock& locks = const_cast<JPH::BodyLockInterfaceNoLock&>(system_.GetBodyLockInterfaceNoLock());
  for (const HingePlan& plan : model.hinges) {
    JPH::Body* child = locks.TryGetBody(body_of_[plan.body]);
    JPH::Body* parent = plan.parent == 0 || body_of_[plan.parent].IsInvalid()
                            ? &JPH::Body::sFixedToWorld
                            : locks.TryGetBody(body_of_[plan.parent]);
    auto* hinge = static_cast<JPH::HingeConstraint*>(plan.settings.Create(*parent, *child));
    if (plan.settings.mMotorSettings.mSpringSettings.mMode == JPH::ESpringMode::StiffnessAndDamping) {
      hinge->SetMotorState(JPH::EMotorState::Position);
      hinge->SetTargetAngle(static_cast<float>(plan.spring_target));
    }
    system_.AddConstraint(hinge);
    hinges_.emplace_back(hinge);
  }
  for (const SliderPlan& plan : model.sliders) {
    JPH::Body* body = locks.TryGetBody(body_of_[plan.body]);
    auto* slider = static_cast<JPH::SliderConstraint*>(plan.settings.Create(JPH::Body::sFixedToWorld, *body));
    if (plan.settings.mMotorSettings.mSpringSettings.mMode == JPH::ESpringMode::StiffnessAndDamping) {
      slider->SetMotorState(JPH::EMotorState::Position);
      slider->SetTargetPosition(0.0f);
    }
    system_.AddConstraint(slider);
    sliders_.emplace_back(slider);
  }
  for (const JointPlan& plan : model.joints_plans) {
    JPH::Body* child = locks.TryGetBody(body_of_[plan.body]);
    JPH::Body* parent = plan.parent == 0 ? &JPH::Body::sFixedToWorld : locks.TryGetBody(body_of_[plan.parent]);
    auto* joint = static_cast<HingeJoint*>(plan.settings.Create(*parent, *child));
    system_.AddConstraint(joint);
    joints_.emplace_back(joint);
  }
  joint_forces_.assign(kMaxHinges * joints_.size(), 0.0);
  before_.resize(model.bodies.size());
  contact_impulse_.assign(6 * model.bodies.size(), 0.0);
  applied_.assign(6 * model.bodies.size(), 0.0);
  limit_impulse_.assign(m->nv, 0.0);
  system_.OptimizeBroadPhase();
  system_.SaveState(snapshot_);
}

bool JoltEngine::BodiesFinite() const {
  const JPH::BodyLockInterfaceNoLock& locks = system_.GetBodyLockInterfaceNoLock();
  for (const BodyPlan& plan : model_.bodies) {
    const JPH::Body* body = locks.TryGetBody(body_of_[plan.mj_body]);
    const JPH::Vec3 p(body->GetPosition());
    const float sum = p.ReduceMax() + p.ReduceMin() + body->GetRotation().GetXYZW().ReduceMax() +
                      body->GetLinearVelocity().LengthSq() + body->GetAngularVelocity().LengthSq();
    if (!std::isfinite(sum) || body->GetLinearVelocity().LengthSq() > 1e12f ||
        body->GetAngularVelocity().LengthSq() > 1e12f || std::abs(p.ReduceMax()) > 1e6f ||
        std::abs(p.ReduceMin()) > 1e6f) {
      return false;
    }
  }
  return true;
}

void JoltEngine::WriteState(const mjModel* m, mjData* d) {
  blown_up_ = false;
  snapshot_.Rewind();
  system_.RestoreState(snapshot_);
  JPH::BodyInterface& bodies = system_.GetBodyInterfaceNoLock();
  mjtNum velocity[6];
  for (const BodyPlan& plan : model_.bodies) {
    const int b = plan.mj_body;
    const JPH::BodyID id = body_of_[b];
    bodies.SetPositionAndRotation(id, JPH::RVec3(V(d->xpos + 3 * b)), Q(d->xquat + 4 * b),
                                  JPH::EActivation::Activate);
    // [angular, linear] at the body's centre of mass, world orientation.
    mj_objectVelocity(m, d, mjOBJ_BODY, b, velocity, 0);
    // Within the bodies' velocity bounds (set_state may ask for more).
    auto bounded = [](JPH::Vec3 v) { return v.Length() > kMaxSpeed ? v.Normalized() * kMaxSpeed : v; };
    bodies.SetLinearAndAngularVelocity(id, bounded(V(velocity + 3)), bounded(V(velocity)));
  }
  for (std::size_t i = 0; i < joints_.size(); ++i) {
    const JointPlan& plan = model_.joints_plans[i];
    double angles[kMaxHinges];
    for (int k = 0; k < plan.settings.count; ++k) {
      const int qa = m->jnt_qposadr[plan.first_joint + k];
      angles[k] = d->qpos[qa] - m->qpos0[qa];
    }
    joints_[i]->SetAngles(angles);
  }
  // The state has no contact or limit forces yet (MuJoCo's mj_forward
  // leaves cfrc_ext to mj_rnePostConstraint; its qfrc_constraint is that of
  // the state's own constraints, which this engine has not solved).
  mju_zero(d->cfrc_ext, 6 * m->nbody);
  mju_zero(d->qfrc_constraint, m->nv);
  RememberMirror(m, d);
}

void JoltEngine::RememberMirror(const mjModel* m, const mjData* d) {
  std::memcpy(mirror_.data(), d->qpos, sizeof(mjtNum) * m->nq);
  std::memcpy(mirror_.data() + m->nq, d->qvel, sizeof(mjtNum) * m->nv);
}

bool JoltEngine::MirrorWritten(const mjModel* m, const mjData* d) const {
  // Bytes, not values: a NaN the engine itself left compares equal.
  return std::memcmp(mirror_.data(), d->qpos, sizeof(mjtNum) * m->nq) != 0 ||
         std::memcmp(mirror_.data() + m->nq, d->qvel, sizeof(mjtNum) * m->nv) != 0;
}

bool JoltEngine::Advance(const mjModel* m, mjData* d, int frame_skip) {
  JPH::BodyLockInterfaceNoLock& locks =
      const_cast<JPH::BodyLockInterfaceNoLock&>(system_.GetBodyLockInterfaceNoLock());
  // frame_skip * substeps Jolt updates of one collision step each (the
  // armature springs' targets move every step). Jolt applies the torques
  // added before an update during it, then resets them.
  const int steps = frame_skip * model_.substeps;
  // model.opt.timestep and .gravity may be changed between steps (v5's
  // MujocoEnv lets a user do so): both take effect, as on MuJoCo; a timestep
  // or gravity that is not finite (or a timestep <= 0) is a blow-up there, so
  // it is one here (the episode ends with physics_unstable).
  const double* g = m->opt.gravity;
  if (!(m->opt.timestep > 0.0) || !std::isfinite(m->opt.timestep) || !std::isfinite(g[0]) ||
      !std::isfinite(g[1]) || !std::isfinite(g[2])) {
    return false;
  }
  if (MirrorWritten(m, d)) {
    // A state written into the mirror since the last step (env.unwrapped.data.qpos[...] = ...)
    // takes effect as on MuJoCo, whose mj_step starts from whatever data holds. One that MuJoCo
    // calls bad (not finite, or beyond mjMAXVAL = 1e10) is a blow-up there: it warns (bad qpos /
    // qvel) and resets the data to the model's reference state; so does this engine, without
    // stepping.
    bool finite = true;
    for (int i = 0; i < m->nq + m->nv; ++i) {
      const mjtNum value = i < m->nq ? d->qpos[i] : d->qvel[i - m->nq];
      finite = finite && std::isfinite(value) && std::abs(value) <= mjMAXVAL;
    }
    if (!finite) {
      ResetToReference(m, d);
      return false;
    }
    mj_forward(m, d);
    WriteState(m, d);
  }
  const JPH::Vec3 gravity = V(g);
  if (gravity != system_.GetGravity()) system_.SetGravity(gravity);
  const double h = m->opt.timestep / model_.substeps;
  bool perturbed = false;
  for (int i = 6; i < 6 * m->nbody && !perturbed; ++i) perturbed = d->xfrc_applied[i] != 0;
  if (model_.contact_forces) std::fill(contact_impulse_.begin(), contact_impulse_.end(), 0.0);
  std::fill(limit_impulse_.begin(), limit_impulse_.end(), 0.0);
  // On a thread that notices signals (a single world's step), a pending one
  // stops the step between two updates: the world is then mid-step (as
  // Simulate's MuJoCo loop leaves it) and only a reset may follow.
  const bool polls = SimulationPoll::poll() != nullptr;
  auto next_poll = polls ? SimulationPoll::FirstDue() : std::chrono::steady_clock::time_point{};
  for (int step = 0; step < steps && !blown_up_; ++step) {
    if (polls && step > 0 && SimulationPoll::Due(&next_poll)) return true;
    std::fill(joint_forces_.begin(), joint_forces_.end(), 0.0);
    for (const ActuatorPlan& a : model_.actuators) {
      double ctrl = d->ctrl[a.actuator];
      if (m->actuator_ctrllimited[a.actuator]) {
        ctrl = std::clamp(ctrl, m->actuator_ctrlrange[2 * a.actuator],
                          m->actuator_ctrlrange[2 * a.actuator + 1]);
      }
      // A motor's force is its control (gain 1), clamped to its force range as MuJoCo clamps
      // actuator_force, then geared; both read live, as the control range is.
      if (m->actuator_forcelimited[a.actuator]) {
        ctrl = std::clamp(ctrl, m->actuator_forcerange[2 * a.actuator],
                          m->actuator_forcerange[2 * a.actuator + 1]);
      }
      if (a.joint_plan >= 0) {  // a generalized force, on that hinge's own coordinate
        joint_forces_[kMaxHinges * a.joint_plan + a.index] += a.gear * ctrl;
        continue;
      }
      JPH::Body* child = locks.TryGetBody(body_of_[a.body]);
      if (a.slide) {  // a root slide: the axis is the world's
        child->AddForce(static_cast<float>(a.gear * ctrl) * a.slide_axis);
        continue;
      }
      const JPH::Vec3 axis = child->GetRotation() * V(m->jnt_axis + 3 * a.joint);
      const JPH::Vec3 torque = static_cast<float>(a.gear * ctrl) * axis;
      child->AddTorque(torque);
      if (a.parent != 0 && !body_of_[a.parent].IsInvalid()) {
        locks.TryGetBody(body_of_[a.parent])->AddTorque(-torque);
      }
    }
    for (std::size_t i = 0; i < model_.hinges.size(); ++i) {
      const HingePlan& plan = model_.hinges[i];
      if (plan.armature <= 0) continue;
      JPH::HingeConstraint& hinge = *hinges_[i];
      const JPH::Body* child = locks.TryGetBody(body_of_[plan.body]);
      const JPH::Vec3 axis = child->GetRotation() * V(m->jnt_axis + 3 * plan.joint);
      JPH::Vec3 omega = child->GetAngularVelocity();
      if (plan.parent != 0 && !body_of_[plan.parent].IsInvalid()) {
        omega -= locks.TryGetBody(body_of_[plan.parent])->GetAngularVelocity();
      }
      const double predicted = hinge.GetCurrentAngle() + h * omega.Dot(axis);
      const double rotor = plan.armature / (h * h);
      hinge.SetTargetAngle(static_cast<float>((plan.stiffness * plan.spring_target + rotor * predicted) /
                                              (plan.stiffness + rotor)));
    }
    for (std::size_t i = 0; i < joints_.size(); ++i) joints_[i]->SetForces(joint_forces_.data() + kMaxHinges * i);
    if (!model_.fluids.empty()) ApplyFluidForces(m);
    if (perturbed) ApplyPerturbations(m, d);
    if (model_.contact_forces) RecordMomentaBefore();
    const bool finite = UpdateChecked(system_, static_cast<float>(h), &temp_, &jobs_);
    if (model_.contact_forces) AccumulateContactImpulses(static_cast<float>(h));
    AccumulateLimitImpulses(m);
    // A blown-up world is not stepped again (Jolt's own checks abort on
    // non-finite velocities): the end of this Advance rebuilds it.
    blown_up_ = !finite || !BodiesFinite();
  }
  d->time += frame_skip * m->opt.timestep;
  ReadBack(m, d);
  if (model_.contact_forces) WriteContactForces(m, d, frame_skip * m->opt.timestep);
  // qfrc_constraint: the joint limits' generalized forces, the mean over the
  // step (contacts' are not mapped to the dofs).
  const double duration = frame_skip * m->opt.timestep;
  for (int i = 0; i < m->nv; ++i) d->qfrc_constraint[i] = limit_impulse_[i] / duration;
  bool stable = !blown_up_;
  for (int i = 0; stable && i < m->nv; ++i) {
    stable = std::isfinite(d->qvel[i]) && std::abs(d->qvel[i]) <= 1e6;
  }
  for (int i = 0; stable && i < m->nq; ++i) stable = std::isfinite(d->qpos[i]);
  if (stable) return true;
  // A blow-up: as MuJoCo does on its bad qpos / qvel / qacc warnings, the data goes back to the
  // model's reference state (and the Jolt world with it), so the step's observation and reward
  // stay finite while the episode ends with physics_unstable (a set_state of 1e300 left NaN in
  // both).
  ResetToReference(m, d);
  return false;
}

void JoltEngine::ResetToReference(const mjModel* m, mjData* d) {
  mj_resetData(m, d);
  mj_forward(m, d);
  WriteState(m, d);
}

void JoltEngine::ReadBack(const mjModel* m, mjData* d) {
  const JPH::BodyLockInterfaceNoLock& locks = system_.GetBodyLockInterfaceNoLock();
  auto pose = [&](int b, mjtNum* pos, mjtNum* quat, mjtNum* omega, mjtNum* v_origin) {
    const JPH::Body* body = locks.TryGetBody(body_of_[b]);
    const JPH::RVec3 p = body->GetPosition();
    const JPH::Quat q = body->GetRotation();
    pos[0] = p.GetX(), pos[1] = p.GetY(), pos[2] = p.GetZ();
    quat[0] = q.GetW(), quat[1] = q.GetX(), quat[2] = q.GetY(), quat[3] = q.GetZ();
    mju_normalize4(quat);
    const JPH::Vec3 w = body->GetAngularVelocity();
    const JPH::Vec3 v = body->GetPointVelocity(p);
    omega[0] = w.GetX(), omega[1] = w.GetY(), omega[2] = w.GetZ();
    v_origin[0] = v.GetX(), v_origin[1] = v.GetY(), v_origin[2] = v.GetZ();
  };
  mjtNum pos[3], quat[4], omega[3], vel[3];
  mjtNum ppos[3], pquat[4], pomega[3], pvel[3];
  for (const JointMap& jm : model_.joints) {
    const int qa = m->jnt_qposadr[jm.joint], va = m->jnt_dofadr[jm.joint];
    if (jm.kind == JointMap::kJoint) {
      // All hinges of the HingeJoint at once (they are consecutive joints).
      if (jm.index != 0) continue;
      double angles[kMaxHinges], rates[kMaxHinges];
      HingeJoint& joint = *joints_[jm.hinge];
      joint.ReadAngles(angles, rates);
      for (int k = 0; k < joint.count(); ++k) {
        const int q = m->jnt_qposadr[jm.joint + k];
        d->qpos[q] = m->qpos0[q] + angles[k];
        d->qvel[m->jnt_dofadr[jm.joint + k]] = rates[k];
      }
      continue;
    }
    pose(jm.body, pos, quat, omega, vel);
    switch (jm.kind) {
      case JointMap::kFree: {
        mju_copy3(d->qpos + qa, pos);
        mju_copy4(d->qpos + qa + 3, quat);
        mju_copy3(d->qvel + va, vel);
        mjtNum neg[4];
        mju_negQuat(neg, quat);
        mju_rotVecQuat(d->qvel + va + 3, omega, neg);
        break;
      }
      case JointMap::kRootSlide: {
        const mjtNum* ref = model_.ref_xpos.data() + 3 * jm.body;
        const mjtNum delta[3] = {pos[0] - ref[0], pos[1] - ref[1], pos[2] - ref[2]};
        d->qpos[qa] = m->qpos0[qa] + mju_dot3(delta, jm.axis);
        d->qvel[va] = mju_dot3(vel, jm.axis);
        break;
      }
      case JointMap::kRootHinge: {
        mjtNum inv[4], r[4];
        mju_negQuat(inv, model_.ref_xquat.data() + 4 * jm.body);
        mju_mulQuat(r, quat, inv);  // world-frame rotation since qpos0
        const double previous = d->qpos[qa] - m->qpos0[qa];
        const double angle = previous + WrapToPi(AngleAbout(r, jm.axis) - previous);
        d->qpos[qa] = m->qpos0[qa] + angle;
        d->qvel[va] = mju_dot3(omega, jm.axis);
        break;
      }
      case JointMap::kHinge: {
        mjtNum inv[4], rel[4], offset_inv[4], r[4];
        if (jm.parent != 0 && !body_of_[jm.parent].IsInvalid()) {
          pose(jm.parent, ppos, pquat, pomega, pvel);
        } else {
          mju_copy4(pquat, d->xquat + 4 * jm.parent);
          mju_zero3(pomega);
        }
        mjtNum actual[4];  // the parent body's own frame (it may be welded to jm.parent)
        mju_mulQuat(actual, pquat, model_.weld_quat.data() + 4 * m->body_parentid[jm.body]);
        mju_negQuat(inv, actual);
        mju_mulQuat(rel, inv, quat);  // child in the parent's frame
        mju_negQuat(offset_inv, m->body_quat + 4 * jm.body);
        mju_mulQuat(r, offset_inv, rel);  // the hinge's own rotation
        const double previous = d->qpos[qa] - m->qpos0[qa];
        const double angle = previous + WrapToPi(AngleAbout(r, jm.axis) - previous);
        d->qpos[qa] = m->qpos0[qa] + angle;
        mjtNum axis[3], relw[3];
        mju_rotVecQuat(axis, jm.axis, quat);
        mju_sub3(relw, omega, pomega);
        d->qvel[va] = mju_dot3(relw, axis);
        break;
      }
      case JointMap::kJoint:
        break;  // above
    }
  }
  mj_kinematics(m, d);
  mj_comPos(m, d);
  mj_transmission(m, d);
  mj_comVel(m, d);
  // actuator_force and qfrc_actuator of the controls, as MuJoCo computes them.
  mj_fwdActuation(m, d);
  RememberMirror(m, d);
}

// Adds sign * (an impulse at a centre of mass) to out: [angular about the
// world origin, linear], in double.
void AddImpulse(double* out, JPH::RVec3Arg com, JPH::Vec3Arg linear, JPH::Vec3Arg angular, double sign) {
  const double c[3] = {com.GetX(), com.GetY(), com.GetZ()};
  const double l[3] = {linear.GetX(), linear.GetY(), linear.GetZ()};
  double moment[3];
  mju_cross(moment, c, l);
  for (int k = 0; k < 3; ++k) {
    out[k] += sign * (moment[k] + angular[k]);
    out[3 + k] += sign * l[k];
  }
}

// MuJoCo's inertia-box fluid model (its "Fluid forces": viscous drag of
// the sphere of the box's mean side, and quadratic drag of the box's faces),
// from each body's velocity at its centre of mass in its inertia frame
// relative to the wind; applied at the centre of mass.
void JoltEngine::ApplyFluidForces(const mjModel* m) {
  JPH::BodyLockInterfaceNoLock& locks =
      const_cast<JPH::BodyLockInterfaceNoLock&>(system_.GetBodyLockInterfaceNoLock());
  const double density = m->opt.density, viscosity = m->opt.viscosity;
  std::fill(applied_.begin(), applied_.end(), 0.0);
  for (const FluidPlan& f : model_.fluids) {
    JPH::Body* body = locks.TryGetBody(body_of_[model_.bodies[f.plan].mj_body]);
    const JPH::RVec3 origin = body->GetPosition();
    const JPH::Quat q = body->GetRotation();
    mjtNum rotation[4] = {q.GetW(), q.GetX(), q.GetY(), q.GetZ()}, frame[4], inverse[4], com[3];
    mju_normalize4(rotation);
    mju_mulQuat(frame, rotation, f.frame);
    mju_negQuat(inverse, frame);
    mju_rotVecQuat(com, f.com, rotation);
    com[0] += origin.GetX(), com[1] += origin.GetY(), com[2] += origin.GetZ();
    const JPH::Vec3 w = body->GetAngularVelocity();
    const JPH::Vec3 v = body->GetPointVelocity(JPH::RVec3(static_cast<float>(com[0]), static_cast<float>(com[1]),
                                                          static_cast<float>(com[2])));
    const mjtNum omega[3] = {w.GetX(), w.GetY(), w.GetZ()};
    const mjtNum velocity[3] = {v.GetX() - m->opt.wind[0], v.GetY() - m->opt.wind[1], v.GetZ() - m->opt.wind[2]};
    mjtNum lw[3], lv[3], torque[3] = {0, 0, 0}, force[3] = {0, 0, 0};
    mju_rotVecQuat(lw, omega, inverse);
    mju_rotVecQuat(lv, velocity, inverse);
    const double* box = f.box;
    if (viscosity > 0) {
      const double diameter = (box[0] + box[1] + box[2]) / 3.0;
      for (int k = 0; k < 3; ++k) {
        torque[k] = -mjPI * diameter * diameter * diameter * viscosity * lw[k];
        force[k] = -3.0 * mjPI * diameter * viscosity * lv[k];
      }
    }
    if (density > 0) {
      for (int k = 0; k < 3; ++k) {
        const double a = box[(k + 1) % 3], b = box[(k + 2) % 3];
        force[k] -= 0.5 * density * a * b * std::abs(lv[k]) * lv[k];
        torque[k] -= density * box[k] * (a * a * a * a + b * b * b * b) * std::abs(lw[k]) * lw[k] / 64.0;
      }
    }
    mjtNum world_force[3], world_torque[3];
    mju_rotVecQuat(world_force, force, frame);
    mju_rotVecQuat(world_torque, torque, frame);
    body->AddForce(V(world_force), JPH::RVec3(V(com)));
    body->AddTorque(V(world_torque));
    AddImpulse(applied_.data() + 6 * f.plan, JPH::RVec3(V(com)), V(world_force), V(world_torque), 1.0);
  }
}

void JoltEngine::ApplyPerturbations(const mjModel* m, const mjData* d) {
  JPH::BodyLockInterfaceNoLock& locks =
      const_cast<JPH::BodyLockInterfaceNoLock&>(system_.GetBodyLockInterfaceNoLock());
  for (int b = 1; b < m->nbody; ++b) {
    const mjtNum* wrench = d->xfrc_applied + 6 * b;
    if (wrench[0] == 0 && wrench[1] == 0 && wrench[2] == 0 && wrench[3] == 0 && wrench[4] == 0 &&
        wrench[5] == 0) {
      continue;
    }
    const JPH::BodyID id = body_of_[model_.weld_root[b]];
    if (id.IsInvalid()) continue;  // welded to the world
    JPH::Body* body = locks.TryGetBody(id);
    const JPH::RVec3 origin = body->GetPosition();
    const JPH::Quat q = body->GetRotation();
    mjtNum rotation[4] = {q.GetW(), q.GetX(), q.GetY(), q.GetZ()}, local[3], com[3];
    mju_normalize4(rotation);
    mju_rotVecQuat(local, m->body_ipos + 3 * b, model_.weld_quat.data() + 4 * b);
    mju_addTo3(local, model_.weld_pos.data() + 3 * b);
    mju_rotVecQuat(com, local, rotation);
    com[0] += origin.GetX(), com[1] += origin.GetY(), com[2] += origin.GetZ();
    body->AddForce(V(wrench), JPH::RVec3(V(com)));
    body->AddTorque(V(wrench + 3));
  }
}

void JoltEngine::AccumulateLimitImpulses(const mjModel* m) {
  for (std::size_t i = 0; i < sliders_.size(); ++i) {
    limit_impulse_[model_.sliders[i].dof] += sliders_[i]->GetTotalLambdaPositionLimits();
  }
  for (std::size_t i = 0; i < hinges_.size(); ++i) {
    limit_impulse_[m->jnt_dofadr[model_.hinges[i].joint]] += hinges_[i]->GetTotalLambdaRotationLimits();
  }
  for (std::size_t i = 0; i < joints_.size(); ++i) {
    double impulses[kMaxHinges];
    joints_[i]->LimitImpulses(impulses);
    const int first = model_.joints_plans[i].first_joint;
    for (int k = 0; k < joints_[i]->count(); ++k) limit_impulse_[m->jnt_dofadr[first + k]] += impulses[k];
  }
}

void JoltEngine::RecordMomentaBefore() {
  const JPH::BodyLockInterfaceNoLock& locks = system_.GetBodyLockInterfaceNoLock();
  for (std::size_t i = 0; i < model_.bodies.size(); ++i) {
    const JPH::Body* body = locks.TryGetBody(body_of_[model_.bodies[i].mj_body]);
    before_[i] = {body->GetLinearVelocity(), body->GetAngularVelocity(), body->GetRotation(),
                  body->GetCenterOfMassPosition()};
  }
}

// Newton on each body over the update: m dv = h m g + (joint impulses) +
// (contact impulses), I dw = (joint angular impulses) + (contact angular
// impulses), with the world inertia of the update's start (Jolt integrates
// velocities before positions and has no gyroscopic term). Every joint is
// a HingeJoint here (contact_forces), and actuators act through them.
void JoltEngine::AccumulateContactImpulses(float h) {
  const JPH::BodyLockInterfaceNoLock& locks = system_.GetBodyLockInterfaceNoLock();
  const JPH::Vec3 gravity = system_.GetGravity();
  for (std::size_t i = 0; i < model_.bodies.size(); ++i) {
    const BodyPlan& plan = model_.bodies[i];
    const JPH::Body* body = locks.TryGetBody(body_of_[plan.mj_body]);
    const Momentum& b = before_[i];
    const JPH::Vec3 linear = plan.mass.mMass * (body->GetLinearVelocity() - b.linear_velocity - h * gravity);
    const JPH::Vec3 dw = b.rotation.Conjugated() * (body->GetAngularVelocity() - b.angular_velocity);
    const JPH::Vec3 angular = b.rotation * plan.inertia.Multiply3x3(dw);
    AddImpulse(contact_impulse_.data() + 6 * i, b.com, linear, angular, 1.0);
    for (int k = 0; k < 6; ++k) contact_impulse_[6 * i + k] -= h * applied_[6 * i + k];  // the fluid's
  }
  for (std::size_t j = 0; j < joints_.size(); ++j) {
    const JointPlan& plan = model_.joints_plans[j];
    JPH::Vec3 child_linear, child_angular, parent_linear, parent_angular;
    joints_[j]->LastImpulses(child_linear, child_angular, parent_linear, parent_angular);
    auto remove = [&](int mj_body, JPH::Vec3Arg linear, JPH::Vec3Arg angular) {
      const int i = body_index_[mj_body];
      AddImpulse(contact_impulse_.data() + 6 * i, before_[i].com, linear, angular, -1.0);
    };
    remove(plan.body, child_linear, child_angular);
    if (plan.parent != 0) remove(plan.parent, parent_linear, parent_angular);
  }
}

// MuJoCo's cfrc_ext: [torque, force] of the contacts on each body (on its
// weld root: a welded body's are its root's), the torque about the
// subtree centre of mass of the body's root (mj_rnePostConstraint); here
// the mean over the env step.
void JoltEngine::WriteContactForces(const mjModel* m, mjData* d, double duration) {
  mju_zero(d->cfrc_ext, 6 * m->nbody);
  for (std::size_t i = 0; i < model_.bodies.size(); ++i) {
    const int b = model_.bodies[i].mj_body;
    const double* impulse = contact_impulse_.data() + 6 * i;
    mjtNum* out = d->cfrc_ext + 6 * b;
    mjtNum force[3], about[3];
    for (int k = 0; k < 3; ++k) force[k] = impulse[3 + k] / duration;
    mju_cross(about, d->subtree_com + 3 * m->body_rootid[b], force);
    for (int k = 0; k < 3; ++k) out[k] = impulse[k] / duration - about[k], out[3 + k] = force[k];
  }
}

void JoltEngine::BodyPoses(const mjModel* m, double* out) const {
  const JPH::BodyLockInterfaceNoLock& locks = system_.GetBodyLockInterfaceNoLock();
  for (int b = 0; b < m->nbody; ++b) {
    double* o = out + 7 * b;
    const int root = model_.weld_root[b];
    if (root != b && !body_of_[root].IsInvalid()) {  // welded: fixed in its root's frame
      const JPH::Body* body = locks.TryGetBody(body_of_[root]);
      const JPH::RVec3 p = body->GetPosition();
      const JPH::Quat q = body->GetRotation();
      const mjtNum pos[3] = {p.GetX(), p.GetY(), p.GetZ()};
      mjtNum quat[4] = {q.GetW(), q.GetX(), q.GetY(), q.GetZ()};
      mju_normalize4(quat);
      mju_rotVecQuat(o, model_.weld_pos.data() + 3 * b, quat);
      mju_addTo3(o, pos);
      mju_mulQuat(o + 3, quat, model_.weld_quat.data() + 4 * b);
      continue;
    }
    if (body_of_[b].IsInvalid()) {  // the world and static bodies never move
      for (int k = 0; k < 3; ++k) o[k] = model_.ref_xpos[3 * b + k];
      for (int k = 0; k < 4; ++k) o[3 + k] = model_.ref_xquat[4 * b + k];
      continue;
    }
    const JPH::Body* body = locks.TryGetBody(body_of_[b]);
    const JPH::RVec3 p = body->GetPosition();
    const JPH::Quat q = body->GetRotation();
    o[0] = p.GetX(), o[1] = p.GetY(), o[2] = p.GetZ();
    o[3] = q.GetW(), o[4] = q.GetX(), o[5] = q.GetY(), o[6] = q.GetZ();
  }
}

}  // namespace

std::shared_ptr<const EngineModel> MakeJoltModel(const mjModel* model, const std::string& task,
                                                  const EngineOptions& options) {
  return std::make_shared<JoltModel>(model, task, options);
}

}  // namespace joltgym
