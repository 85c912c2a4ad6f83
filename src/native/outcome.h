// The result of a competitive episode for one agent, shared by every game
// that has winners and losers. Written into the info record as an
// InfoKind::kLabel field, which the Python side decodes to an IntEnum member
// (joltgym_marl.Outcome: the code, with its label); the same names are
// exported as _core.Outcome.
#pragma once

#include <string>
#include <vector>

namespace joltgym {

enum class Outcome { kOngoing = 0, kWin = 1, kLoss = 2, kDraw = 3 };

// The label of each Outcome, indexed by its value.
inline const std::vector<std::string>& OutcomeLabels() {
  static const std::vector<std::string> labels{"ongoing", "win", "loss", "draw"};
  return labels;
}

inline double OutcomeCode(Outcome outcome) { return static_cast<double>(outcome); }

}  // namespace joltgym
