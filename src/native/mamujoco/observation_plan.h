// MaMuJoCo's observations as an index plan: a flat list of reads from mjData
// (with the few transforms MaMuJoCo applies: clipping, sin/cos, differences,
// a dense entry of the sparse tendon Jacobian), compiled once per env by the
// Python side from the scenario's joint graph and applied per step here.
#pragma once

#include <mujoco/mujoco.h>

#include <vector>

namespace joltgym::mamujoco {

// The mjData array an entry reads (its flat index; cinert is [nbody, 10],
// cvel and cfrc_ext [nbody, 6], xpos [nbody, 3], flattened row-major).
enum class Source : int {
  kQpos = 0,
  kQvel = 1,
  kCinert = 2,
  kCvel = 3,
  kCfrcExt = 4,
  kQfrcActuator = 5,
  kTenLength = 6,
  kTenVelocity = 7,
  kXpos = 8,
  kQfrcConstraint = 9,
  kTenJ = 10,  // dense (tendon = index, dof = index2) of the sparse ten_J
};
inline constexpr int kNumSources = 11;

enum class Op : int {
  kCopy = 0,  // x
  kClip = 1,  // min(max(x, low), high), as np.clip
  kSin = 2,
  kCos = 3,
  kDiff = 4,  // x[index] - x[index2], same source
};
inline constexpr int kNumOps = 5;

struct PlanEntry {
  Op op;
  Source source;
  int index;
  int index2;
  double low;
  double high;
};

class ObservationPlan {
 public:
  // Throws BadValue naming the entry if an op, source or index is out of
  // range for `model`.
  ObservationPlan(std::vector<PlanEntry> entries, const mjModel* model);

  int size() const { return static_cast<int>(entries_.size()); }
  // Writes size() doubles. The plan was checked against this model.
  void Apply(const mjModel* m, const mjData* d, double* out) const;

 private:
  std::vector<PlanEntry> entries_;
};

// The number of values `source` holds for `model` (flattened).
int SourceSize(const mjModel* model, Source source);

}  // namespace joltgym::mamujoco
