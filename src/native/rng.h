// Per-world random number generator: NumPy's default generator, drawn
// natively.
//
// Gymnasium's envs draw reset noise from `np.random.Generator(PCG64(
// SeedSequence(seed)))`; this class produces exactly the same numbers, so a
// world seeded `s` starts its episodes in the states Gymnasium's env seeded
// `s` does. It is written from the published algorithms:
//   - SeedSequence (O'Neill's seed_seq hash, as NumPy specifies it): the seed
//     is taken as the little-endian 32-bit words of a non-negative integer of
//     any size, mixed into a 4-word pool, expanded into four 64-bit words;
//   - PCG64: a 128-bit LCG (PCG's default multiplier) with the XSL-RR output,
//     seeded by PCG's (initstate, initseq) procedure from those four words;
//   - Generator.random / uniform: 53-bit doubles, `low + (high - low) * u`;
//   - Generator.standard_normal: NumPy's 256-layer ziggurat (tables in rng.cc).
// Each world owns one of these, seeded `seed + world_index`, so a run is
// reproducible whatever the thread count. Nothing here allocates or locks
// except Seed().
#pragma once

#include <cstdint>
#include <vector>

#ifndef __SIZEOF_INT128__
#error "joltgym's Rng needs a compiler with unsigned __int128 (GCC or Clang)"
#endif

namespace joltgym {

// A non-negative integer of any size as little-endian 32-bit words (the form
// NumPy's SeedSequence takes its entropy in).
using SeedWords = std::vector<std::uint32_t>;

// The words of `value`.
SeedWords SeedFromU64(std::uint64_t value);
// `seed + offset` (world i of a pool seeded `seed` gets SeedPlus(seed, i)).
SeedWords SeedPlus(const SeedWords& seed, std::uint64_t offset);

class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0) { Seed(seed); }

  // As `np.random.default_rng(seed)`: PCG64 seeded from SeedSequence(seed).
  void Seed(const SeedWords& seed);
  void Seed(std::uint64_t seed) { Seed(SeedFromU64(seed)); }

  // PCG64's 128-bit (state, increment), as NumPy's PCG64.state holds them
  // ("state", "inc"): a generator's stream handed over and back.
  struct State {
    std::uint64_t state_high, state_low, inc_high, inc_low;
  };
  State GetState() const {
    return {static_cast<std::uint64_t>(state_ >> 64), static_cast<std::uint64_t>(state_),
            static_cast<std::uint64_t>(increment_ >> 64), static_cast<std::uint64_t>(increment_)};
  }
  void SetState(const State& s) {
    state_ = (static_cast<U128>(s.state_high) << 64) | s.state_low;
    increment_ = (static_cast<U128>(s.inc_high) << 64) | s.inc_low;
  }

  // PCG64's next output (`PCG64.random_raw()`).
  std::uint64_t NextU64() {
    state_ = state_ * Multiplier() + increment_;
    const auto high = static_cast<std::uint64_t>(state_ >> 64);
    const auto low = static_cast<std::uint64_t>(state_);
    const auto rotation = static_cast<unsigned>(state_ >> 122);
    const std::uint64_t x = high ^ low;
    return (x >> rotation) | (x << ((64u - rotation) & 63u));
  }

  // Uniform in [0, 1) with 53 random bits (`Generator.random()`).
  double Uniform01() { return static_cast<double>(NextU64() >> 11) * (1.0 / 9007199254740992.0); }

  // `Generator.uniform(low, high)`.
  double Uniform(double low, double high) {
    const double range = high - low;
    return low + range * Uniform01();
  }

  // `Generator.standard_normal()`: the ziggurat's first layer test inline
  // (taken about 99.3% of the time), the rest out of line.
  double StandardNormal() {
    const std::uint64_t r = NextU64();
    const int layer = static_cast<int>(r & 0xff);
    const std::uint64_t rest = r >> 8;
    const std::uint64_t magnitude = (rest >> 1) & 0x000fffffffffffffULL;
    const double x = static_cast<double>(magnitude) * kZigguratWidth[layer];
    if (magnitude < kZigguratRatio[layer]) return (rest & 1) ? -x : x;
    return NormalSlowPath(layer, magnitude, (rest & 1) ? -x : x);
  }

 private:
  __extension__ typedef unsigned __int128 U128;

  static constexpr U128 Multiplier() {
    return (static_cast<U128>(0x2360ED051FC65DA4ULL) << 64) | 0x4385DF649FCCF645ULL;
  }

  // The ziggurat's layers (NumPy's published tables): for layer i, an
  // accepted 52-bit magnitude m gives m * kZigguratWidth[i]; m below
  // kZigguratRatio[i] is inside the layer's rectangle for sure; the density
  // at the layer's edges is kZigguratDensity[i - 1], kZigguratDensity[i].
  static const std::uint64_t kZigguratRatio[256];
  static const double kZigguratWidth[256];
  static const double kZigguratDensity[256];

  // The rejection step of the ziggurat (and the tail for layer 0); loops back
  // to a fresh draw on rejection, as NumPy does.
  double NormalSlowPath(int layer, std::uint64_t magnitude, double x);

  U128 state_ = 0;
  U128 increment_ = 1;
};

}  // namespace joltgym
