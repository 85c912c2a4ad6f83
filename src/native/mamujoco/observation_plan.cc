#include "observation_plan.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "../errors.h"

namespace joltgym::mamujoco {

namespace {

const char* SourceName(Source s) {
  static const char* names[kNumSources] = {"qpos",      "qvel",          "cinert",
                                           "cvel",      "cfrc_ext",      "qfrc_actuator",
                                           "ten_length", "ten_velocity", "xpos",
                                           "qfrc_constraint", "ten_J"};
  return names[static_cast<int>(s)];
}

const mjtNum* SourceArray(const mjData* d, Source s) {
  switch (s) {
    case Source::kQpos:
      return d->qpos;
    case Source::kQvel:
      return d->qvel;
    case Source::kCinert:
      return d->cinert;
    case Source::kCvel:
      return d->cvel;
    case Source::kCfrcExt:
      return d->cfrc_ext;
    case Source::kQfrcActuator:
      return d->qfrc_actuator;
    case Source::kTenLength:
      return d->ten_length;
    case Source::kTenVelocity:
      return d->ten_velocity;
    case Source::kXpos:
      return d->xpos;
    case Source::kQfrcConstraint:
      return d->qfrc_constraint;
    case Source::kTenJ:
      return d->ten_J;
  }
  return nullptr;
}

// ten_J is stored sparse (row-compressed, the pattern in mjModel): the dense
// entry (tendon, dof) is the stored value if the dof is in the row, else 0.
double DenseTendonJacobian(const mjModel* m, const mjData* d, int tendon, int dof) {
  const int start = m->ten_J_rowadr[tendon];
  const int count = m->ten_J_rownnz[tendon];
  for (int k = start; k < start + count; ++k) {
    if (m->ten_J_colind[k] == dof) return d->ten_J[k];
  }
  return 0.0;
}

}  // namespace

int SourceSize(const mjModel* m, Source source) {
  switch (source) {
    case Source::kQpos:
      return static_cast<int>(m->nq);
    case Source::kQvel:
    case Source::kQfrcActuator:
    case Source::kQfrcConstraint:
      return static_cast<int>(m->nv);
    case Source::kCinert:
      return static_cast<int>(m->nbody) * 10;
    case Source::kCvel:
    case Source::kCfrcExt:
      return static_cast<int>(m->nbody) * 6;
    case Source::kXpos:
      return static_cast<int>(m->nbody) * 3;
    case Source::kTenLength:
    case Source::kTenVelocity:
      return static_cast<int>(m->ntendon);
    case Source::kTenJ:
      return static_cast<int>(m->ntendon) * static_cast<int>(m->nv);
  }
  return 0;
}

ObservationPlan::ObservationPlan(std::vector<PlanEntry> entries, const mjModel* m)
    : entries_(std::move(entries)) {
  for (std::size_t k = 0; k < entries_.size(); ++k) {
    const PlanEntry& e = entries_[k];
    const std::string where = "observation plan entry " + std::to_string(k);
    const int op = static_cast<int>(e.op), source = static_cast<int>(e.source);
    if (op < 0 || op >= kNumOps) {
      throw BadValue(where + ": op should be in [0, " + std::to_string(kNumOps) + "), got " +
                     std::to_string(op));
    }
    if (source < 0 || source >= kNumSources) {
      throw BadValue(where + ": source should be in [0, " + std::to_string(kNumSources) +
                     "), got " + std::to_string(source));
    }
    if (e.source == Source::kTenJ) {
      if (e.index < 0 || e.index >= m->ntendon || e.index2 < 0 || e.index2 >= m->nv) {
        throw BadValue(where + ": ten_J entry (tendon " + std::to_string(e.index) + ", dof " +
                       std::to_string(e.index2) + ") should be within the model's " +
                       std::to_string(m->ntendon) + " tendons x " + std::to_string(m->nv) + " dofs");
      }
      if (e.op != Op::kCopy) throw BadValue(where + ": ten_J entries are copied only");
      continue;
    }
    if (e.op == Op::kClip && !(e.low <= e.high)) {  // (false for a NaN bound too)
      throw BadValue(where + ": clip bounds should be numbers with low <= high, got [" +
                     std::to_string(e.low) + ", " + std::to_string(e.high) + "]");
    }
    const int size = SourceSize(m, e.source);
    const bool second = e.op == Op::kDiff;
    if (e.index < 0 || e.index >= size || (second && (e.index2 < 0 || e.index2 >= size))) {
      throw BadValue(where + ": index " + std::to_string(second ? e.index2 : e.index) + " of " +
                     SourceName(e.source) + " should be in [0, " + std::to_string(size) + ")");
    }
  }
}

void ObservationPlan::Apply(const mjModel* m, const mjData* d, double* out) const {
  for (const PlanEntry& e : entries_) {
    if (e.source == Source::kTenJ) {
      *out++ = DenseTendonJacobian(m, d, e.index, e.index2);
      continue;
    }
    const mjtNum* x = SourceArray(d, e.source);
    const double v = x[e.index];
    switch (e.op) {
      case Op::kCopy:
        *out++ = v;
        break;
      case Op::kClip:
        *out++ = std::min(std::max(v, e.low), e.high);
        break;
      case Op::kSin:
        *out++ = std::sin(v);
        break;
      case Op::kCos:
        *out++ = std::cos(v);
        break;
      case Op::kDiff:
        *out++ = v - x[e.index2];
        break;
    }
  }
}

}  // namespace joltgym::mamujoco
