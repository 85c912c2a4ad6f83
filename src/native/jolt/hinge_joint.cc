#include "hinge_joint.h"

#include <Jolt/Physics/Body/Body.h>
#include <Jolt/Physics/StateRecorder.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace joltgym {
namespace {

void ToQuat(JPH::QuatArg q, double* out) {
  out[0] = q.GetW(), out[1] = q.GetX(), out[2] = q.GetY(), out[3] = q.GetZ();
}
JPH::Vec3 ToVec(const double* v) {
  return JPH::Vec3(static_cast<float>(v[0]), static_cast<float>(v[1]), static_cast<float>(v[2]));
}

// Solves the symmetric n x n system g x = r (n <= 3) by its adjugate, with
// a relative floor on the determinant; returns false if g is (near)
// singular (x is then the damped solution, finite).
bool SolveSymmetric(int n, const double g[3][3], const double* r, double* x) {
  if (n == 1) {
    const bool ok = g[0][0] > 1e-12;
    x[0] = r[0] / (ok ? g[0][0] : 1e-12);
    return ok;
  }
  if (n == 2) {
    double det = g[0][0] * g[1][1] - g[0][1] * g[1][0];
    const bool ok = det > 1e-6;
    if (!ok) det = 1e-6;
    x[0] = (g[1][1] * r[0] - g[0][1] * r[1]) / det;
    x[1] = (g[0][0] * r[1] - g[1][0] * r[0]) / det;
    return ok;
  }
  double c[3][3];
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      const int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
      c[i][j] = g[i1][j1] * g[i2][j2] - g[i1][j2] * g[i2][j1];
    }
  }
  double det = g[0][0] * c[0][0] + g[0][1] * c[0][1] + g[0][2] * c[0][2];
  const bool ok = det > 1e-6;
  if (!ok) det = 1e-6;
  for (int i = 0; i < 3; ++i) x[i] = (c[0][i] * r[0] + c[1][i] * r[1] + c[2][i] * r[2]) / det;
  return ok;
}

}  // namespace

JPH::TwoBodyConstraint* HingeJointSettings::Create(JPH::Body& parent, JPH::Body& child) const {
  return new HingeJoint(parent, child, *this);
}

HingeJoint::HingeJoint(JPH::Body& parent, JPH::Body& child, const HingeJointSettings& settings)
    : JPH::TwoBodyConstraint(parent, child, settings), settings_(settings), locks_(3 - settings.count) {
  local_anchor1_ = JPH::Vec3(parent.GetInverseCenterOfMassTransform() * settings.anchor);
  local_anchor2_ = JPH::Vec3(child.GetInverseCenterOfMassTransform() * settings.anchor);
  double q1[4], q2[4], inv[4];
  ToQuat(parent.GetRotation(), q1);
  ToQuat(child.GetRotation(), q2);
  mju_normalize4(q1);
  mju_normalize4(q2);
  mju_negQuat(inv, q1);
  mju_mulQuat(joint_in_parent_, inv, q2);
}

void HingeJoint::NotifyShapeChanged(const JPH::BodyID& body, JPH::Vec3Arg delta_com) {
  if (mBody1->GetID() == body) local_anchor1_ -= delta_com;
  if (mBody2->GetID() == body) local_anchor2_ -= delta_com;
}

void HingeJoint::UpdateAngles(Axes& axes) {
  const int n = settings_.count;
  double q1[4], q2[4], frame[4], inv[4], rel[4];
  ToQuat(mBody1->GetRotation(), q1);
  ToQuat(mBody2->GetRotation(), q2);
  mju_mulQuat(frame, q1, joint_in_parent_);  // the joint frame in the world
  mju_normalize4(frame);
  mju_negQuat(inv, frame);
  mju_mulQuat(rel, inv, q2);  // the child relative to the joint frame
  mju_normalize4(rel);
  // Gauss-Newton on rel = Rot(a1, q1) ... Rot(an, qn), in the joint frame:
  // the error rotation rel * R(q)^-1 ~ sum_k e_k dq_k, e_k = hinge k's axis
  // after the hinges before it.
  double e[kMaxHinges][3], delta[3];
  for (int iteration = 0;; ++iteration) {
    double product[4] = {1, 0, 0, 0};
    for (int k = 0; k < n; ++k) {
      mju_rotVecQuat(e[k], settings_.hinges[k].axis, product);
      double turn[4], next[4];
      mju_axisAngle2Quat(turn, settings_.hinges[k].axis, angles_[k]);
      mju_mulQuat(next, product, turn);
      mju_copy4(product, next);
    }
    double product_inv[4], error[4];
    mju_negQuat(product_inv, product);
    mju_mulQuat(error, rel, product_inv);
    if (error[0] < 0) mju_scl(error, error, -1.0, 4);
    mju_quat2Vel(delta, error, 1.0);
    if (iteration == 4 || mju_norm3(delta) < 1e-12) break;
    double g[3][3], r[3], step[3];
    for (int i = 0; i < n; ++i) {
      r[i] = mju_dot3(e[i], delta);
      for (int j = 0; j < n; ++j) g[i][j] = mju_dot3(e[i], e[j]);
    }
    SolveSymmetric(n, g, r, step);
    bool finite = true;
    for (int k = 0; k < n; ++k) finite = finite && std::isfinite(step[k]) && std::abs(step[k]) < 10.0;
    if (!finite) break;
    for (int k = 0; k < n; ++k) angles_[k] += step[k];
  }
  // World axes, their dual basis (b_k . w_j = delta_kj) in their span, and
  // the directions outside it.
  double w[kMaxHinges][3], g[3][3];
  for (int k = 0; k < n; ++k) mju_rotVecQuat(w[k], e[k], frame);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) g[i][j] = mju_dot3(w[i], w[j]);
  }
  axes.regular = true;
  for (int k = 0; k < n; ++k) {
    double unit[3] = {0, 0, 0}, coefficients[3], b[3] = {0, 0, 0};
    unit[k] = 1.0;
    axes.regular = SolveSymmetric(n, g, unit, coefficients) && axes.regular;
    for (int j = 0; j < n; ++j) mju_addToScl3(b, w[j], coefficients[j]);
    const double norm = mju_norm3(b);
    axes.scale[k] = static_cast<float>(norm);
    axes.dual[k] = norm > 0 ? ToVec(b) / static_cast<float>(norm) : ToVec(w[k]);
  }
  const JPH::Vec3 w0 = ToVec(w[0]).Normalized();
  if (n == 1) {
    axes.lock[0] = w0.GetNormalizedPerpendicular();
    axes.lock[1] = w0.Cross(axes.lock[0]);
  } else if (n == 2) {
    const JPH::Vec3 normal = w0.Cross(ToVec(w[1]));
    axes.lock[0] = normal.Length() > 1e-6f ? normal.Normalized() : w0.GetNormalizedPerpendicular();
  }
  double residual[3];
  mju_rotVecQuat(residual, delta, frame);
  axes.residual = ToVec(residual);
}

double HingeJoint::Impedance(const double* solimp, double violation) {
  // MuJoCo's impedance d(r): from d0 at r = 0 to dmax at r >= width along
  // a two-piece power curve with its midpoint at `mid`.
  const double d0 = std::clamp(solimp[0], 1e-4, 0.9999), dmax = std::clamp(solimp[1], 1e-4, 0.9999);
  const double width = solimp[2], mid = std::clamp(solimp[3], 1e-4, 1.0 - 1e-4), power = std::max(solimp[4], 1.0);
  if (width <= 1e-10 || violation >= width) return dmax;
  const double x = violation / width;
  double y;
  if (power == 1.0) {
    y = x;
  } else if (x <= mid) {
    y = std::pow(x, power) / std::pow(mid, power - 1.0);
  } else {
    y = 1.0 - std::pow(1.0 - x, power) / std::pow(1.0 - mid, power - 1.0);
  }
  return d0 + y * (dmax - d0);
}

double HingeJoint::InverseInertiaAlong(JPH::Vec3Arg axis) const {
  // Each body turning about the anchor (its inertia there: about its centre
  // of mass plus m (|r|^2 - r r^T)), as a joint's own coordinate sees it.
  double inverse = 0.0;
  const JPH::Body* bodies[2] = {mBody1, mBody2};
  const JPH::Vec3 arms[2] = {r1_, r2_};
  for (int i = 0; i < 2; ++i) {
    const JPH::Body* body = bodies[i];
    if (!body->IsDynamic()) continue;
    const JPH::MotionProperties* mp = body->GetMotionProperties();
    if (mp->GetInverseMass() <= 0.0f) continue;
    JPH::Mat44 inertia =
        mp->GetInverseInertiaForRotation(JPH::Mat44::sRotation(body->GetRotation())).Inversed3x3();
    const float mass = 1.0f / mp->GetInverseMass();
    const JPH::Vec3 r = arms[i];
    for (int a = 0; a < 3; ++a) {
      for (int b = 0; b < 3; ++b) inertia(a, b) += mass * ((a == b ? r.LengthSq() : 0.0f) - r[a] * r[b]);
    }
    inverse += axis.Dot(inertia.Inversed3x3().Multiply3x3(axis));
  }
  return inverse;
}

JPH::Vec3 HingeJoint::ParentHingeAxis() const {
  double q1[4], frame[4], axis[3];
  ToQuat(mBody1->GetRotation(), q1);
  mju_mulQuat(frame, q1, joint_in_parent_);
  mju_rotVecQuat(axis, settings_.hinges[0].axis, frame);
  return ToVec(axis).Normalized();
}

void HingeJoint::MeasureRotation(JPH::Vec3Arg before) {
  rotation_impulse_ += child_inertia_.Multiply3x3(mBody2->GetAngularVelocity() - before);
}

void HingeJoint::SetupVelocityConstraint(float dt) {
  UpdateAngles(axes_);
  const JPH::Mat44 rotation1 = JPH::Mat44::sRotation(mBody1->GetRotation());
  const JPH::Mat44 rotation2 = JPH::Mat44::sRotation(mBody2->GetRotation());
  point_.CalculateConstraintProperties(*mBody1, rotation1, local_anchor1_, *mBody2, rotation2, local_anchor2_);
  r1_ = rotation1.Multiply3x3(local_anchor1_);
  r2_ = rotation2.Multiply3x3(local_anchor2_);
  if (settings_.count == 1) {
    rotation_.CalculateConstraintProperties(*mBody1, rotation1, ParentHingeAxis(), *mBody2, rotation2,
                                            mBody2->GetRotation() * ToVec(settings_.hinges[0].axis));
    child_inertia_ = mBody2->GetMotionProperties()->GetInverseInertiaForRotation(rotation2).Inversed3x3();
    rotation_impulse_ = JPH::Vec3::sZero();
  } else {
    for (int i = 0; i < locks_; ++i) lock_[i].CalculateConstraintProperties(*mBody1, *mBody2, axes_.lock[i]);
  }
  const JPH::Vec3 relative = relative_rate_;
  for (int k = 0; k < settings_.count; ++k) {
    const HingeParams& h = settings_.hinges[k];
    if (!axes_.regular) {
      limit_[k].Deactivate();
      motor_[k].Deactivate();
      impulse_forces_[k] = 0.0;
      continue;
    }
    const double angle = angles_[k];
    const double scale = axes_.scale[k];
    const JPH::Vec3 axis = axes_.dual[k];
    if (h.limited && (angle <= h.low || angle >= h.high)) {
      const bool low = angle <= h.low;
      limit_min_[k] = low ? 0.0f : -FLT_MAX;
      limit_max_[k] = low ? FLT_MAX : 0.0f;
      const double violation = angle - (low ? h.low : h.high);
      // MuJoCo's soft constraint (its constraint model, "solver
      // parameters"): the joint's acceleration is (1 - d) of the
      // unconstrained one plus d of the reference a_ref = -b dq - k r, with
      // d the impedance of the violation r (solimp), b and k from solref.
      // In velocity form over a step, on this row (u = dq / |b_k|):
      //   u_new - u_ref / |b_k| + (1 - d) / d * A * lambda = 0,
      // u_ref the rate a_ref leads to in dt, taken implicitly (b dt is about
      // 1 at MuJoCo's default solref and timesteps: an explicit step would
      // reverse the joint where MuJoCo's RK4 slows it),
      // A the row's inverse inertia (the two bodies turning about the
      // anchor, plus the armature, as M holds it). That is a Jolt soft row
      // of softness (1 - d) / d * A and bias -u_ref / |b_k|:
      // SpringPart's stiffness 1 / (dt^2 softness) without damping gives
      // that softness, and the bias goes in directly.
      const double inverse = InverseInertiaAlong(axis);
      const double mass = (inverse > 0 ? 1.0 / inverse : 0.0) + h.armature * scale * scale;
      const double impedance = Impedance(h.solimp, std::abs(violation));
      const double dmax = std::clamp(h.solimp[1], 1e-4, 0.9999);
      double stiffness_ref, damping_ref;
      if (h.solref[0] > 0) {
        const double timeconst = std::max(h.solref[0], 2.0 * h.timestep);
        stiffness_ref = impedance / (dmax * dmax * timeconst * timeconst * h.solref[1] * h.solref[1]);
        damping_ref = 2.0 / (dmax * timeconst);
      } else {
        stiffness_ref = -h.solref[0] / (dmax * dmax);
        damping_ref = -h.solref[1] / dmax;
      }
      const double rate = scale * axis.Dot(relative);
      const double reference = (rate - dt * stiffness_ref * violation) /
                               (1.0 + dt * damping_ref + static_cast<double>(dt) * dt * stiffness_ref);
      const double bias = -reference / scale;
      const double softness = (1.0 - impedance) / impedance / std::max(mass, 1e-12);
      limit_[k].CalculateConstraintPropertiesWithStiffnessAndDamping(
          dt, *mBody1, *mBody2, axis, static_cast<float>(bias), 0.0f,
          static_cast<float>(1.0 / (static_cast<double>(dt) * dt * softness)), 0.0f);
    } else {
      limit_[k].Deactivate();
    }
    // The joint's spring and damper and its armature (a spring toward the
    // angle the step's starting rate predicts: the torque -A (v_new - v_old)
    // / dt, see HingePlan in jolt_engine.cc), on q_k: in row units the
    // stiffness and damping scale by |b_k|^2 and the error by 1 / |b_k|.
    // The actuator's torque joins them as a shift of the target (the row
    // solves A dv = dt (torque + ...) at once; applied as an impulse on the
    // light links first, it would leave the solver far from the answer).
    const double rotor = h.armature / (static_cast<double>(dt) * dt);
    const double stiffness = h.stiffness + rotor;
    impulse_forces_[k] = stiffness > 0 ? 0.0 : forces_[k];
    if (stiffness > 0 || h.damping > 0) {
      const double rate = scale * axis.Dot(relative);
      const double target =
          stiffness > 0 ? (h.stiffness * h.spring_target + rotor * (angle + dt * rate) + forces_[k]) / stiffness
                        : angle;
      motor_[k].CalculateConstraintPropertiesWithStiffnessAndDamping(
          dt, *mBody1, *mBody2, axis, 0.0f, static_cast<float>((angle - target) / scale),
          static_cast<float>(std::max(stiffness, 1e-6) * scale * scale),
          static_cast<float>(h.damping * scale * scale));
    } else {
      motor_[k].Deactivate();
    }
  }
  force_dt_ = dt;
}

void HingeJoint::ResetWarmStart() {
  point_.Deactivate();
  rotation_.Deactivate();
  for (auto& part : lock_) part.Deactivate();
  for (auto& part : limit_) part.Deactivate();
  for (auto& part : motor_) part.Deactivate();
}

void HingeJoint::WarmStartVelocityConstraint(float ratio) {
  for (int k = 0; k < settings_.count; ++k) motor_[k].WarmStart(*mBody1, *mBody2, ratio);
  point_.WarmStart(*mBody1, *mBody2, ratio);
  if (settings_.count == 1) {
    const JPH::Vec3 before = mBody2->GetAngularVelocity();
    rotation_.WarmStart(*mBody1, *mBody2, ratio);
    MeasureRotation(before);
  } else {
    for (int i = 0; i < locks_; ++i) lock_[i].WarmStart(*mBody1, *mBody2, ratio);
  }
  for (int k = 0; k < settings_.count; ++k) limit_[k].WarmStart(*mBody1, *mBody2, ratio);
  // The actuators' generalized forces, as an impulse on the dual axes.
  if (!axes_.regular) return;
  JPH::Vec3 impulse = JPH::Vec3::sZero();
  for (int k = 0; k < settings_.count; ++k) {
    impulse += static_cast<float>(force_dt_ * impulse_forces_[k] * axes_.scale[k]) * axes_.dual[k];
  }
  if (impulse.IsNearZero(0.0f)) return;
  if (mBody1->IsDynamic()) {
    JPH::MotionProperties* mp = mBody1->GetMotionProperties();
    mp->SubAngularVelocityStep(mp->MultiplyWorldSpaceInverseInertiaByVector(mBody1->GetRotation(), impulse));
  }
  if (mBody2->IsDynamic()) {
    JPH::MotionProperties* mp = mBody2->GetMotionProperties();
    mp->AddAngularVelocityStep(mp->MultiplyWorldSpaceInverseInertiaByVector(mBody2->GetRotation(), impulse));
  }
}

bool HingeJoint::SolveVelocityConstraint(float) {
  bool applied = false;
  for (int k = 0; k < settings_.count; ++k) {
    if (motor_[k].IsActive()) {
      applied |= motor_[k].SolveVelocityConstraint(*mBody1, *mBody2, axes_.dual[k], -FLT_MAX, FLT_MAX);
    }
  }
  applied |= point_.SolveVelocityConstraint(*mBody1, *mBody2);
  if (settings_.count == 1) {
    const JPH::Vec3 before = mBody2->GetAngularVelocity();
    applied |= rotation_.SolveVelocityConstraint(*mBody1, *mBody2);
    MeasureRotation(before);
  } else {
    for (int i = 0; i < locks_; ++i) {
      applied |= lock_[i].SolveVelocityConstraint(*mBody1, *mBody2, axes_.lock[i], -FLT_MAX, FLT_MAX);
    }
  }
  for (int k = 0; k < settings_.count; ++k) {
    if (limit_[k].IsActive()) {
      applied |= limit_[k].SolveVelocityConstraint(*mBody1, *mBody2, axes_.dual[k], limit_min_[k], limit_max_[k]);
    }
  }
  return applied;
}

bool HingeJoint::SolvePositionConstraint(float, float baumgarte) {
  point_.CalculateConstraintProperties(*mBody1, JPH::Mat44::sRotation(mBody1->GetRotation()), local_anchor1_, *mBody2,
                                       JPH::Mat44::sRotation(mBody2->GetRotation()), local_anchor2_);
  bool applied = point_.SolvePositionConstraint(*mBody1, *mBody2, baumgarte);
  Axes axes;
  if (settings_.count == 1) {
    const JPH::Mat44 rotation1 = JPH::Mat44::sRotation(mBody1->GetRotation());
    const JPH::Mat44 rotation2 = JPH::Mat44::sRotation(mBody2->GetRotation());
    rotation_.CalculateConstraintProperties(*mBody1, rotation1, ParentHingeAxis(), *mBody2, rotation2,
                                            mBody2->GetRotation() * ToVec(settings_.hinges[0].axis));
    applied |= rotation_.SolvePositionConstraint(*mBody1, *mBody2, baumgarte);
  }
  UpdateAngles(axes);
  for (int i = 0; i < locks_ && settings_.count > 1; ++i) {
    JPH::AngleConstraintPart part;
    part.CalculateConstraintProperties(*mBody1, *mBody2, axes.lock[i]);
    applied |= part.SolvePositionConstraint(*mBody1, *mBody2, axes.residual.Dot(axes.lock[i]), baumgarte);
  }
  // (The limits are soft, as MuJoCo's: held in velocity only.)
  return applied;
}

void HingeJoint::SaveState(JPH::StateRecorder& stream) const {
  JPH::TwoBodyConstraint::SaveState(stream);
  point_.SaveState(stream);
  rotation_.SaveState(stream);
  for (const auto& part : lock_) part.SaveState(stream);
  for (const auto& part : limit_) part.SaveState(stream);
  for (const auto& part : motor_) part.SaveState(stream);
  for (double angle : angles_) stream.Write(angle);
  for (double force : forces_) stream.Write(force);
  for (double force : impulse_forces_) stream.Write(force);
}

void HingeJoint::RestoreState(JPH::StateRecorder& stream) {
  JPH::TwoBodyConstraint::RestoreState(stream);
  point_.RestoreState(stream);
  rotation_.RestoreState(stream);
  for (auto& part : lock_) part.RestoreState(stream);
  for (auto& part : limit_) part.RestoreState(stream);
  for (auto& part : motor_) part.RestoreState(stream);
  for (double& angle : angles_) stream.Read(angle);
  for (double& force : forces_) stream.Read(force);
  for (double& force : impulse_forces_) stream.Read(force);
}

JPH::Ref<JPH::ConstraintSettings> HingeJoint::GetConstraintSettings() const {
  auto* settings = new HingeJointSettings(settings_);
  ToConstraintSettings(*settings);
  return settings;
}

JPH::Mat44 HingeJoint::GetConstraintToBody1Matrix() const {
  const JPH::Quat q(static_cast<float>(joint_in_parent_[1]), static_cast<float>(joint_in_parent_[2]),
                    static_cast<float>(joint_in_parent_[3]), static_cast<float>(joint_in_parent_[0]));
  return JPH::Mat44::sRotationTranslation(q.Normalized(), local_anchor1_);
}

JPH::Mat44 HingeJoint::GetConstraintToBody2Matrix() const {
  return JPH::Mat44::sTranslation(local_anchor2_);
}

void HingeJoint::SetAngles(const double* angles) {
  for (int k = 0; k < settings_.count; ++k) angles_[k] = angles[k];
}

void HingeJoint::SetForces(const double* forces) {
  for (int k = 0; k < settings_.count; ++k) forces_[k] = forces[k];
  relative_rate_ = mBody2->GetAngularVelocity() - mBody1->GetAngularVelocity();
}

void HingeJoint::ReadAngles(double* angles, double* rates) {
  Axes axes;
  UpdateAngles(axes);
  const JPH::Vec3 relative = mBody2->GetAngularVelocity() - mBody1->GetAngularVelocity();
  for (int k = 0; k < settings_.count; ++k) {
    angles[k] = angles_[k];
    rates[k] = static_cast<double>(axes.scale[k]) * axes.dual[k].Dot(relative);
  }
}

void HingeJoint::LimitImpulses(double* out) const {
  // A row impulse lambda along the unit dual axis is lambda / |b_k| on q_k.
  for (int k = 0; k < settings_.count; ++k) out[k] = limit_[k].GetTotalLambda() / axes_.scale[k];
}

void HingeJoint::LastImpulses(JPH::Vec3& child_linear, JPH::Vec3& child_angular, JPH::Vec3& parent_linear,
                              JPH::Vec3& parent_angular) const {
  const JPH::Vec3 point = point_.GetTotalLambda();
  JPH::Vec3 torque = settings_.count == 1 ? rotation_impulse_ : JPH::Vec3::sZero();
  for (int i = 0; i < locks_ && settings_.count > 1; ++i) torque += lock_[i].GetTotalLambda() * axes_.lock[i];
  for (int k = 0; k < settings_.count; ++k) {
    torque += (limit_[k].GetTotalLambda() + motor_[k].GetTotalLambda()) * axes_.dual[k];
    if (axes_.regular) torque += static_cast<float>(force_dt_ * impulse_forces_[k] * axes_.scale[k]) * axes_.dual[k];
  }
  child_linear = point;
  child_angular = r2_.Cross(point) + torque;
  parent_linear = -point;
  parent_angular = -(r1_.Cross(point) + torque);
}

}  // namespace joltgym
