// Task configuration: the keyword arguments a task accepts, with their kinds
// and defaults, and the validated values a task is built from.
//
// The binding converts Python keyword arguments into `Params` once, at
// construction; tasks then read typed values and never see Python.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace joltgym {

enum class ParamKind {
  kFloat,    // a real number
  kInt,      // an integer
  kBool,     // True / False
  kRange,    // a (low, high) pair of reals, low <= high
  kString,   // a str
  kBodyRef,  // a body given by index (int) or by name (str)
  kOptionalFloat,  // a real number or None (stored as NaN)
};

struct ParamValue {
  std::vector<double> numbers;  // one number, or two for ranges
  std::string text;             // for strings, and body references by name
  bool is_text = false;
};

// The default bound of a real-valued parameter: every kFloat, kOptionalFloat
// and each end of a kRange is finite with |x| <= kMaxRealParam, unless its
// spec declares other bounds. 1e6 is far beyond any sensible weight, reward,
// noise scale or length (the defaults are at most 1e3), and keeps every product
// a task forms finite (a weight times a velocity, or times a squared contact
// force clipped to 1e6): values like 1e308 used to pass and give inf/NaN
// rewards and observations. A range's low end may also be -inf and its high
// end +inf, "no bound on that side", as Gymnasium's defaults use (Hopper's
// healthy_z_range=(0.7, inf), Humanoid's contact_cost_range=(-inf, 10)).
// Checked at the binding (bindings/checks.cc, ConvertParams); tasks keep their
// own finer checks (reset_noise_scale >= 0, spawn_distance < ring_radius).
inline constexpr double kMaxRealParam = 1e6;
// The most mj_step calls one env step may take (frame_skip): Gymnasium's
// tasks use 2 to 5, and one step of 1000 already simulates seconds. A larger
// value makes a single step, which cannot be interrupted, run for minutes.
inline constexpr long kMaxFrameSkip = 1000;

struct ParamSpec {
  std::string name;
  ParamKind kind;
  ParamValue default_value;
  std::string doc;
  long min_int = -(1L << 30);  // bounds of an kInt value
  long max_int = 1L << 30;
  double min_real = -kMaxRealParam;  // bounds of a kFloat or kOptionalFloat value, and of each
  double max_real = kMaxRealParam;   // end of a kRange (whose ends may also be -inf / +inf)
};

// A real-valued parameter (kFloat, kOptionalFloat, kRange) with its bounds.
inline ParamSpec RealParamSpec(std::string name, ParamKind kind, std::vector<double> value,
                               std::string doc, double min_value, double max_value) {
  ParamSpec spec{std::move(name), kind, {std::move(value), {}, false}, std::move(doc)};
  spec.min_real = min_value;
  spec.max_real = max_value;
  return spec;
}

inline ParamSpec FloatParam(std::string name, double value, std::string doc,
                            double min_value = -kMaxRealParam, double max_value = kMaxRealParam) {
  return RealParamSpec(std::move(name), ParamKind::kFloat, {value}, std::move(doc), min_value,
                       max_value);
}
inline ParamSpec IntParam(std::string name, int value, std::string doc, long min_value = -(1L << 30),
                          long max_value = 1L << 30) {
  return {std::move(name), ParamKind::kInt, {{static_cast<double>(value)}, {}, false},
          std::move(doc), min_value, max_value};
}
inline ParamSpec BoolParam(std::string name, bool value, std::string doc) {
  return {std::move(name), ParamKind::kBool, {{value ? 1.0 : 0.0}, {}, false}, std::move(doc)};
}
inline ParamSpec RangeParam(std::string name, double low, double high, std::string doc,
                            double min_value = -kMaxRealParam, double max_value = kMaxRealParam) {
  return RealParamSpec(std::move(name), ParamKind::kRange, {low, high}, std::move(doc), min_value,
                       max_value);
}
inline ParamSpec StringParam(std::string name, std::string value, std::string doc) {
  return {std::move(name), ParamKind::kString, {{}, std::move(value), true}, std::move(doc)};
}
inline ParamSpec OptionalFloatParam(std::string name, double value, std::string doc,
                                    double min_value = -kMaxRealParam,
                                    double max_value = kMaxRealParam) {
  return RealParamSpec(std::move(name), ParamKind::kOptionalFloat, {value}, std::move(doc),
                       min_value, max_value);
}
inline ParamSpec BodyRefParam(std::string name, int index, std::string doc) {
  return {std::move(name), ParamKind::kBodyRef, {{static_cast<double>(index)}, {}, false},
          std::move(doc)};
}

// Validated keyword arguments: every declared parameter has a value (the
// default unless given).
class Params {
 public:
  Params() = default;
  Params(const std::vector<ParamSpec>& specs, std::map<std::string, ParamValue> given) {
    for (const auto& spec : specs) values_[spec.name] = spec.default_value;
    for (auto& [name, value] : given) {
      if (values_.find(name) == values_.end()) {
        throw std::invalid_argument("unknown parameter '" + name + "'");
      }
      values_[name] = std::move(value);
    }
  }

  bool Has(const std::string& name) const { return values_.count(name) != 0; }
  double Float(const std::string& name) const { return Get(name).numbers.at(0); }
  int Int(const std::string& name) const { return static_cast<int>(Get(name).numbers.at(0)); }
  bool Bool(const std::string& name) const { return Get(name).numbers.at(0) != 0.0; }
  std::pair<double, double> Range(const std::string& name) const {
    const auto& v = Get(name).numbers;
    return {v.at(0), v.at(1)};
  }
  const std::string& String(const std::string& name) const { return Get(name).text; }
  const ParamValue& Get(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end()) throw std::logic_error("task read undeclared parameter " + name);
    return it->second;
  }

 private:
  std::map<std::string, ParamValue> values_;
};

}  // namespace joltgym
