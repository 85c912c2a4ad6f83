// One MuJoCo body's hinges (one, two or three, sharing one anchor) as one
// Jolt constraint between the body and its parent.
//
// MuJoCo turns a body with hinges j1..jn by Rot(a1, q1) ... Rot(an, qn) after
// its rest orientation, each axis in the frame the previous hinges left: the
// relative rotation is a product of n hinge rotations, and the relative
// angular velocity is sum_k w_k dq_k (w_k: hinge k's axis in the world). The
// constraint holds the anchor together (3 rows), locks the 3 - n directions
// outside the span of the w_k, and puts each hinge's limit, spring, damper,
// armature and actuator torque on that hinge's own coordinate: along the
// dual axis b_k (b_k . w_j = delta_kj), so that a row impulse is a
// generalized force on q_k alone, as in MuJoCo. The angles are read back from
// the bodies' rotations by Gauss-Newton on the hinge product, started from
// the last angles (exact for any axes; no Euler convention assumed).
//
// It also reports the impulse it applied to each body in the last step (the
// contact-force balance needs every non-contact impulse; Jolt's own
// HingeConstraint does not expose the axes of its rotation rows).
#pragma once

// Jolt.h must come first.
#include <Jolt/Jolt.h>

#include <Jolt/Physics/Constraints/ConstraintPart/AngleConstraintPart.h>
#include <Jolt/Physics/Constraints/ConstraintPart/HingeRotationConstraintPart.h>
#include <Jolt/Physics/Constraints/ConstraintPart/PointConstraintPart.h>
#include <Jolt/Physics/Constraints/SpringSettings.h>
#include <Jolt/Physics/Constraints/TwoBodyConstraint.h>

#include <array>

namespace joltgym {

constexpr int kMaxHinges = 3;

// One hinge of a HingeJoint, as MuJoCo's model has it.
struct HingeParams {
  double axis[3] = {0, 0, 1};  // unit axis in the child body's frame
  bool limited = false;
  double low = 0.0, high = 0.0;  // range relative to qpos0
  // MuJoCo's soft limit: solreflimit (timeconst, dampratio; or, negative,
  // -stiffness, -damping), solimplimit (d0, dmax, width, midpoint, power),
  // and the model's timestep (solref's time constant is at least 2 of them).
  double solref[2] = {0.02, 1.0};
  double solimp[5] = {0.9, 0.95, 0.001, 0.5, 2.0};
  double timestep = 0.002;
  double stiffness = 0.0;      // joint stiffness, about spring_target
  double spring_target = 0.0;  // springref - qpos0
  double damping = 0.0;
  double armature = 0.0;
};

class HingeJointSettings final : public JPH::TwoBodyConstraintSettings {
 public:
  JPH::TwoBodyConstraint* Create(JPH::Body& parent, JPH::Body& child) const override;

  JPH::RVec3 anchor;  // world space, with both bodies at qpos0
  int count = 1;
  std::array<HingeParams, kMaxHinges> hinges;
};

class HingeJoint final : public JPH::TwoBodyConstraint {
 public:
  HingeJoint(JPH::Body& parent, JPH::Body& child, const HingeJointSettings& settings);

  JPH::EConstraintSubType GetSubType() const override { return JPH::EConstraintSubType::User1; }
  void NotifyShapeChanged(const JPH::BodyID& body, JPH::Vec3Arg delta_com) override;
  void ResetWarmStart() override;
  void SetupVelocityConstraint(float dt) override;
  void WarmStartVelocityConstraint(float ratio) override;
  bool SolveVelocityConstraint(float dt) override;
  bool SolvePositionConstraint(float dt, float baumgarte) override;
#ifdef JPH_DEBUG_RENDERER
  void DrawConstraint(JPH::DebugRenderer*) const override {}
#endif
  void SaveState(JPH::StateRecorder& stream) const override;
  void RestoreState(JPH::StateRecorder& stream) override;
  JPH::Ref<JPH::ConstraintSettings> GetConstraintSettings() const override;
  JPH::Mat44 GetConstraintToBody1Matrix() const override;
  JPH::Mat44 GetConstraintToBody2Matrix() const override;

  int count() const { return settings_.count; }
  // The hinge angles (qpos - qpos0) the world starts from (reset, set_state).
  void SetAngles(const double* angles);
  // The hinge angles and rates of the bodies' current poses and velocities
  // (the angles also become the next steps' starting guess).
  void ReadAngles(double* angles, double* rates);
  // Generalized forces (actuator torques) on each hinge for the next step;
  // called before each Jolt update, it also takes the bodies' relative
  // rate at the step's start (Jolt grants no velocity access while it sets
  // up its constraints).
  void SetForces(const double* forces);
  // Each hinge's limit impulse in the last step, as a generalized impulse.
  void LimitImpulses(double* out) const;
  // The impulse this constraint applied in the last step: on the child
  // (linear; angular about its centre of mass) and on the parent (the same,
  // about the parent's centre of mass), in the world frame.
  void LastImpulses(JPH::Vec3& child_linear, JPH::Vec3& child_angular, JPH::Vec3& parent_linear,
                    JPH::Vec3& parent_angular) const;

 private:
  // The hinges' axes at the bodies' current rotations.
  struct Axes {
    JPH::Vec3 dual[kMaxHinges];  // unit dual axes b_k / |b_k|
    float scale[kMaxHinges] = {1, 1, 1};  // |b_k|: dq_k = scale * dual . (w_child - w_parent)
    bool regular = true;  // false near a singular configuration of the hinges
    JPH::Vec3 lock[2];    // unit directions outside the hinges' span
    JPH::Vec3 residual;   // the rotation (world) the hinges cannot produce
  };
  // Solves for the angles of the current rotations, from angles_.
  void UpdateAngles(Axes& axes);
  // axis . (I1^-1 + I2^-1) axis of the two bodies turning about the anchor
  // (world frame).
  double InverseInertiaAlong(JPH::Vec3Arg axis) const;
  // MuJoCo's constraint impedance of a violation (solimp).
  static double Impedance(const double* solimp, double violation);

  HingeJointSettings settings_;
  JPH::Vec3 local_anchor1_, local_anchor2_;  // from each body's centre of mass
  double joint_in_parent_[4];  // joint frame (child's rest rotation) in the parent's frame, w-x-y-z
  double angles_[kMaxHinges] = {0, 0, 0};
  double forces_[kMaxHinges] = {0, 0, 0};
  double impulse_forces_[kMaxHinges] = {0, 0, 0};
  JPH::Vec3 relative_rate_ = JPH::Vec3::sZero();  // child's angular velocity minus the parent's  // the part applied as an impulse (no armature or spring)
  int locks_;  // 3 - count
  // Set per step (SetupVelocityConstraint), the rows' axes.
  Axes axes_;
  JPH::Vec3 r1_, r2_;  // world arms from the centres of mass to the anchor
  float force_dt_ = 0.0f;
  // One hinge: its two locked directions solved together (Jolt's own
  // hinge rows; they converge much better than two separate rows on light
  // links). Their axes are internal to Jolt, so the torque impulse they
  // give the child is measured: the child's inertia times the change of
  // its angular velocity across their calls.
  JPH::HingeRotationConstraintPart rotation_;
  JPH::Mat44 child_inertia_;  // world inertia of the child (this step)
  JPH::Vec3 rotation_impulse_ = JPH::Vec3::sZero();
  void MeasureRotation(JPH::Vec3Arg before);
  JPH::Vec3 ParentHingeAxis() const;  // hinge 1's axis as the parent holds it (world)
  JPH::PointConstraintPart point_;
  std::array<JPH::AngleConstraintPart, 2> lock_;
  std::array<JPH::AngleConstraintPart, kMaxHinges> limit_;
  std::array<JPH::AngleConstraintPart, kMaxHinges> motor_;
  std::array<float, kMaxHinges> limit_min_{}, limit_max_{};  // the limit rows' impulse bounds
};

}  // namespace joltgym
