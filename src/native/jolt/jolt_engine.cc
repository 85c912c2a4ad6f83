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
//   motor actuator     -> torque gear * clamp(ctrl) on child and parent
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
#include <cfloat>
#include <cmath>
#include <cstdarg>
#include <mutex>
#include <sstream>
#include <vector>

#include "../errors.h"

namespace joltgym {
namespace {

// --- process-wide Jolt set-up --------------------------------------------------

void QuietTrace(const char*, ...) {}

// Jolt's allocator, factory and type registry, once. The version and the
// defines that change its ABI (double precision, object layer bits, ...) are
// checked first: RegisterTypes() aborts the process on a mismatch.
void InitJoltOnce() {
  static std::once_flag once;
  static bool ok = false;
  std::call_once(once, [] {
    JPH::RegisterDefaultAllocator();
    JPH::Trace = QuietTrace;
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
// body excepted). The group id is the MuJoCo body id (0 for the world).
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
        allowed_[b1 * n_ + b2] = allowed_[b2 * n_ + b1] = 1;
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
  enum Kind { kFree, kRootSlide, kRootHinge, kHinge } kind;
  int joint;       // MuJoCo joint id
  int body;        // its body
  int parent;      // parent body (0: world)
  mjtNum axis[3];  // local axis (body frame)
  int hinge = -1;  // index into the world's hinge constraints (kHinge)
};

struct BodyPlan {
  int mj_body;
  JPH::RefConst<JPH::Shape> shape;
  JPH::EAllowedDOFs dofs = JPH::EAllowedDOFs::All;
  JPH::MassProperties mass;
  float friction = 0.0f;
  JPH::RVec3 position;  // at qpos0
  JPH::Quat rotation;
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
  JPH::SliderConstraintSettings settings;
};

struct ActuatorPlan {
  int actuator, joint, body, parent;
  double gear;
  bool slide = false;  // a force along the joint's axis (else a torque about it)
  JPH::Vec3 slide_axis = JPH::Vec3::sZero();  // a root slide's axis in the world
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

  const JoltModel& model_;
  JPH::TempAllocatorImplWithMallocFallback temp_;  // a fixed block; malloc past it
  JPH::JobSystemSingleThreaded jobs_;
  JPH::PhysicsSystem system_;
  std::vector<JPH::BodyID> body_of_;  // per MuJoCo body (invalid for the world / static)
  std::vector<JPH::Ref<JPH::HingeConstraint>> hinges_;
  std::vector<JPH::Ref<JPH::SliderConstraint>> sliders_;
  JPH::StateRecorderImpl snapshot_;
};

class JoltModel final : public EngineModel {
 public:
  JoltModel(const mjModel* m, const std::string& task, const EngineOptions& options);
  const std::string& name() const override { return name_; }
  std::unique_ptr<Engine> MakeEngine() const override { return std::make_unique<JoltEngine>(*this); }

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
  std::vector<ActuatorPlan> actuators;
  JPH::PhysicsSettings settings;
  int substeps = 1;  // collision steps per MuJoCo timestep
  std::vector<mjtNum> ref_xpos, ref_xquat;  // body poses at qpos0
};

// A geom as a Jolt shape in its body's frame, or throws.
JPH::RefConst<JPH::Shape> GeomShape(const mjModel* m, int g, const std::string& task) {
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
  const JPH::Vec3 pos = V(m->geom_pos + 3 * g);
  const JPH::Quat rot = Q(m->geom_quat + 4 * g) * along_z;
  return new JPH::RotatedTranslatedShape(pos, rot, shape);
}

JoltModel::JoltModel(const mjModel* m, const std::string& task, const EngineOptions& options)
    : model(m) {
  InitJoltOnce();
  auto refuse = [&](const std::string& why) {
    throw BadValue("engine='jolt' (task '" + task + "'): " + why);
  };
  if (m->opt.viscosity > 0 || m->opt.density > 0) {
    refuse("the model has a fluid (option viscosity/density); the Jolt world has no fluid forces");
  }
  // Reference poses: every joint at qpos0 (where Jolt's hinge angles are 0).
  mjData* d = mj_makeData(m);
  if (d == nullptr) throw MujocoError("MuJoCo could not make data for the Jolt model", true);
  mj_resetData(m, d);
  mj_kinematics(m, d);
  ref_xpos.assign(d->xpos, d->xpos + 3 * m->nbody);
  ref_xquat.assign(d->xquat, d->xquat + 4 * m->nbody);
  filter = new BodyPairFilter(m);

  std::vector<int> body_plan(m->nbody, -1);
  for (int b = 1; b < m->nbody; ++b) {
    const int first = m->body_jntadr[b], count = m->body_jntnum[b];
    const int parent = m->body_parentid[b];
    if (count == 0) {
      if (parent == 0) continue;  // static, added with the world's geoms below
      mj_deleteData(d);
      refuse("body " + BodyName(m, b) + " has no joint (welded to its parent); not supported yet");
    }
    BodyPlan plan;
    plan.mj_body = b;
    // Shapes.
    std::vector<JPH::RefConst<JPH::Shape>> parts;
    for (int g = m->body_geomadr[b]; g < m->body_geomadr[b] + m->body_geomnum[b]; ++g) {
      if (m->geom_contype[g] == 0 && m->geom_conaffinity[g] == 0) continue;
      try {
        parts.push_back(GeomShape(m, g, task));
      } catch (...) {
        mj_deleteData(d);
        throw;
      }
      plan.friction = std::max(plan.friction, static_cast<float>(m->geom_friction[3 * g]));
    }
    if (parts.empty()) {
      mj_deleteData(d);
      refuse("body " + BodyName(m, b) + " has no colliding geom; not supported yet");
    }
    JPH::RefConst<JPH::Shape> shape;
    if (parts.size() == 1) {
      shape = parts[0];
    } else {
      JPH::StaticCompoundShapeSettings compound;
      for (const auto& part : parts) compound.AddShape(JPH::Vec3::sZero(), JPH::Quat::sIdentity(), part);
      shape = compound.Create().Get();
    }
    // MuJoCo's centre of mass.
    const JPH::Vec3 com = V(m->body_ipos + 3 * b);
    shape = new JPH::OffsetCenterOfMassShape(shape, com - shape->GetCenterOfMass());
    plan.shape = shape;
    // MuJoCo's mass and inertia (diagonal in the iquat frame), plus each
    // hinge's armature about its axis.
    const JPH::Mat44 ri = JPH::Mat44::sRotation(Q(m->body_iquat + 4 * b));
    JPH::Mat44 inertia = ri * JPH::Mat44::sScale(V(m->body_inertia + 3 * b)) * ri.Transposed3x3();
    for (int j = first; j < first + count; ++j) {
      // Root hinges only: a child's armature is a spring in its hinge's motor (HingePlan).
      if (m->jnt_type[j] != mjJNT_HINGE || parent != 0) continue;
      const double armature = m->dof_armature[m->jnt_dofadr[j]];
      const JPH::Vec3 a = V(m->jnt_axis + 3 * j);
      for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) {
          inertia(r, c) += static_cast<float>(armature) * a[r] * a[c];
        }
      }
    }
    inertia(3, 3) = 1.0f;
    plan.mass.mMass = static_cast<float>(m->body_mass[b]);
    plan.mass.mInertia = inertia;
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
            mj_deleteData(d);
            refuse("root body " + BodyName(m, b) +
                   ": its joints should be one free joint, or slides and hinges along +x, +y or +z "
                   "(hinges at the body origin): a planar root");
          }
          const double damping = m->dof_damping[m->jnt_dofadr[j]];
          const bool sprung = damping > 0 || m->jnt_stiffness[j] > 0;
          if (type == mjJNT_HINGE && (m->jnt_limited[j] || sprung || m->dof_armature[m->jnt_dofadr[j]] > 0)) {
            const char* name = mj_id2name(m, mjOBJ_JOINT, j);
            mj_deleteData(d);
            refuse(std::string("root hinge '") + (name ? name : "?") +
                   "' has a range, damping, stiffness or armature; not supported yet on a root");
          }
          if (type == mjJNT_SLIDE && (m->jnt_limited[j] || sprung)) {
            SliderPlan slider;
            slider.body = b;
            JPH::SliderConstraintSettings& s = slider.settings;
            s.mSpace = JPH::EConstraintSpace::WorldSpace;
            s.mAutoDetectPoint = false;
            s.mPoint1 = s.mPoint2 = JPH::RVec3(V(d->xpos + 3 * b));
            const JPH::Vec3 along = V(axis).Normalized();
            s.mSliderAxis1 = s.mSliderAxis2 = along;
            s.mNormalAxis1 = s.mNormalAxis2 = along.GetNormalizedPerpendicular();
            const double q0 = m->qpos0[m->jnt_qposadr[j]];
            if (m->jnt_limited[j]) {
              s.mLimitsMin = static_cast<float>(std::min(m->jnt_range[2 * j] - q0, 0.0));
              s.mLimitsMax = static_cast<float>(std::max(m->jnt_range[2 * j + 1] - q0, 0.0));
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
      if (count != 1 || m->jnt_type[first] != mjJNT_HINGE) {
        mj_deleteData(d);
        refuse("body " + BodyName(m, b) + " has " + std::to_string(count) +
               " joint(s) of which not all hinges; the Jolt engine supports one hinge per child "
               "body so far");
      }
      const int j = first;
      if (body_plan[parent] < 0) {
        mj_deleteData(d);
        refuse("body " + BodyName(m, b) + " hangs from a static body; not supported yet");
      }
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
  // The world's geoms (and jointless bodies on the world): static.
  for (int g = 0; g < m->ngeom; ++g) {
    const int b = m->geom_bodyid[g];
    if (b != 0 && !(m->body_jntnum[b] == 0 && m->body_parentid[b] == 0)) continue;
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
      JPH::RefConst<JPH::Shape> in_body;
      try {
        in_body = GeomShape(m, g, task);
      } catch (...) {
        mj_deleteData(d);
        throw;
      }
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
      mj_deleteData(d);
      refuse("actuator #" + std::to_string(a) +
             " is not a motor on a hinge or a root slide; the Jolt engine supports those so far");
    }
    const double gain = m->actuator_gainprm[mjNGAIN * a];
    actuators.push_back({a, j, m->jnt_bodyid[j], m->body_parentid[m->jnt_bodyid[j]],
                         m->actuator_gear[6 * a] * gain, root_slide, V(d->xaxis + 3 * j)});
  }
  mj_deleteData(d);
  settings.mNumVelocitySteps = static_cast<JPH::uint>(options.velocity_iterations);
  settings.mNumPositionSteps = static_cast<JPH::uint>(options.position_iterations);
  substeps = options.substeps;
  settings.mAllowSleeping = false;
}

// --- one world -------------------------------------------------------------------

JoltEngine::JoltEngine(const JoltModel& model)
    : model_(model), temp_(1 << 18), jobs_(JPH::cMaxPhysicsJobs) {
  const mjModel* m = model.model;
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
    s.mMaxLinearVelocity = 1.0e4f;
    s.mMaxAngularVelocity = 1.0e4f;
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
  system_.OptimizeBroadPhase();
  system_.SaveState(snapshot_);
}

void JoltEngine::WriteState(const mjModel* m, mjData* d) {
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
    bodies.SetLinearAndAngularVelocity(id, V(velocity + 3), V(velocity));
  }
}

bool JoltEngine::Advance(const mjModel* m, mjData* d, int frame_skip) {
  JPH::BodyLockInterfaceNoLock& locks =
      const_cast<JPH::BodyLockInterfaceNoLock&>(system_.GetBodyLockInterfaceNoLock());
  // frame_skip * substeps Jolt updates of one collision step each (the
  // armature springs' targets move every step). Jolt applies the torques
  // added before an update during it, then resets them.
  const int steps = frame_skip * model_.substeps;
  const double h = m->opt.timestep / model_.substeps;
  for (int step = 0; step < steps; ++step) {
    for (const ActuatorPlan& a : model_.actuators) {
      double ctrl = d->ctrl[a.actuator];
      if (m->actuator_ctrllimited[a.actuator]) {
        ctrl = std::clamp(ctrl, m->actuator_ctrlrange[2 * a.actuator],
                          m->actuator_ctrlrange[2 * a.actuator + 1]);
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
    system_.Update(static_cast<float>(h), 1, &temp_, &jobs_);
  }
  d->time += frame_skip * m->opt.timestep;
  ReadBack(m, d);
  for (int i = 0; i < m->nv; ++i) {
    if (!std::isfinite(d->qvel[i]) || std::abs(d->qvel[i]) > 1e6) return false;
  }
  for (int i = 0; i < m->nq; ++i) {
    if (!std::isfinite(d->qpos[i])) return false;
  }
  return true;
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
        mju_negQuat(inv, pquat);
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
    }
  }
  mj_kinematics(m, d);
  mj_comPos(m, d);
  mj_comVel(m, d);
}

void JoltEngine::BodyPoses(const mjModel* m, double* out) const {
  const JPH::BodyLockInterfaceNoLock& locks = system_.GetBodyLockInterfaceNoLock();
  for (int b = 0; b < m->nbody; ++b) {
    double* o = out + 7 * b;
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
