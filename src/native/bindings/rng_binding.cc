#include "rng_binding.h"

#include <pybind11/numpy.h>

#include <cstdint>
#include <string>

#include "../rng.h"
#include "checks.h"
#include "common.h"

namespace joltgym::bindings {

void DefineRng(py::module_& m) {
  m.def(
      "_rng_raw",
      [](const py::object& seed, py::handle count) {
        const SeedWords words = SeedOrRandom(seed);
        const auto n = static_cast<py::ssize_t>(CheckInt(count, "count", 0));
        Rng rng;
        rng.Seed(words);
        py::array_t<std::uint64_t> out(n);
        for (py::ssize_t i = 0; i < n; ++i) out.mutable_data()[i] = rng.NextU64();
        return out;
      },
      py::arg("seed"), py::arg("count"),
      "Test hook: the first `count` outputs of the generator seeded `seed` "
      "(NumPy: PCG64(seed).random_raw(count)).");
  m.def(
      "_rng_draws",
      [](const py::object& seed, const std::string& kinds, double low, double high) {
        const size_t bad = kinds.find_first_not_of("urn");
        if (bad != std::string::npos) {
          throw py::value_error("kinds should be made of 'u', 'r' and 'n', got '" +
                                kinds.substr(bad, 1) + "'");
        }
        const SeedWords words = SeedOrRandom(seed);
        Rng rng;
        rng.Seed(words);
        py::array_t<double> out(static_cast<py::ssize_t>(kinds.size()));
        double* p = out.mutable_data();
        for (const char kind : kinds) {
          *p++ = kind == 'u'   ? rng.Uniform(low, high)
                 : kind == 'r' ? rng.Uniform01()
                               : rng.StandardNormal();
        }
        return out;
      },
      py::arg("seed"), py::arg("kinds"), py::arg("low") = -0.1, py::arg("high") = 0.1,
      "Test hook: one draw per character of `kinds` from the generator seeded `seed`: "
      "'u' uniform(low, high), 'r' random(), 'n' standard_normal() (NumPy: "
      "default_rng(seed) making the same calls).");
}

}  // namespace joltgym::bindings
