// Per-world random number generator: xoshiro256** seeded through splitmix64.
//
// Each world owns one of these, seeded `seed + world_index`, so a run is
// reproducible whatever the thread count. The distributions are written out
// here (rather than taken from <random>) so that the numbers are the same on
// every standard library.
#pragma once

#include <cmath>
#include <cstdint>

namespace joltgym {

class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0) { Seed(seed); }

  void Seed(std::uint64_t seed) {
    std::uint64_t x = seed;
    for (auto& word : state_) word = SplitMix64(x);
  }

  std::uint64_t NextU64() {
    const std::uint64_t result = RotL(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = RotL(state_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double Uniform01() { return static_cast<double>(NextU64() >> 11) * 0x1.0p-53; }

  double Uniform(double low, double high) { return low + (high - low) * Uniform01(); }

  // Box-Muller without a cached second value, so the stream position depends
  // only on how many normals were drawn.
  double StandardNormal() {
    double u1 = Uniform01();
    while (u1 <= 0.0) u1 = Uniform01();
    const double u2 = Uniform01();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
  }

 private:
  static constexpr double kTwoPi = 6.283185307179586476925286766559;

  static std::uint64_t RotL(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

  static std::uint64_t SplitMix64(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  std::uint64_t state_[4];
};

}  // namespace joltgym
