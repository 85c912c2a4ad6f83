#include "checks.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace joltgym::bindings {

namespace {

std::string Repr(py::handle value) { return py::repr(value).cast<std::string>(); }

std::string TypeName(py::handle value) {
  return py::str(py::type::handle_of(value).attr("__name__")).cast<std::string>();
}

bool IsBool(py::handle value) {
  return py::isinstance<py::bool_>(value) ||
         py::isinstance(value, py::module_::import("numpy").attr("bool_"));
}

bool IsInteger(py::handle value) {
  if (IsBool(value)) return false;
  return py::isinstance<py::int_>(value) ||
         py::isinstance(value, py::module_::import("numpy").attr("integer"));
}

bool IsReal(py::handle value) {
  if (IsBool(value)) return false;
  return IsInteger(value) || py::isinstance<py::float_>(value) ||
         py::isinstance(value, py::module_::import("numpy").attr("floating"));
}

double RealOrThrow(py::handle value, const std::string& what, bool allow_infinite) {
  if (!IsReal(value)) {
    throw py::type_error(what + " should be a real number, got " + TypeName(value) + " " +
                         Repr(value));
  }
  const double x = value.cast<double>();
  if (std::isnan(x) || (!allow_infinite && std::isinf(x))) {
    throw py::value_error(what + " should be a finite number, got " + Repr(value));
  }
  return x;
}

// A real parameter value (or one end of a range) within the spec's bounds;
// `end` is 0 / 1 for a range's low / high end (which may also be -inf / +inf),
// -1 otherwise.
double CheckBounds(double x, py::handle value, const std::string& what, const ParamSpec& spec,
                   int end) {
  if (end == 0 && x == -std::numeric_limits<double>::infinity()) return x;
  if (end == 1 && x == std::numeric_limits<double>::infinity()) return x;
  if (x >= spec.min_real && x <= spec.max_real) return x;
  const std::string interval = IntervalString(spec.min_real, spec.max_real);
  const std::string allowed = end == 0   ? "-inf or in " + interval
                              : end == 1 ? "in " + interval + " or inf"
                                         : "in " + interval;
  throw py::value_error(what + " should be " + allowed + ", got " + Repr(value));
}

}  // namespace

std::string IntervalString(double low, double high) {
  std::ostringstream out;
  out << "[" << low << ", " << high << "]";
  return out.str();
}

std::string ShapeString(const std::vector<py::ssize_t>& shape) {
  std::ostringstream out;
  out << "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    out << shape[i];
    if (shape.size() == 1 || i + 1 < shape.size()) out << (i + 1 < shape.size() ? ", " : ",");
  }
  out << ")";
  return out.str();
}

std::string ShapeString(const py::array& array) {
  return ShapeString(std::vector<py::ssize_t>(array.shape(), array.shape() + array.ndim()));
}

py::array_t<float, py::array::c_style> CheckFloatArray(py::handle value,
                                                       const std::vector<py::ssize_t>& shape,
                                                       const char* what) {
  // Fast path: already a C-contiguous float32 array of the right shape (what
  // the vector envs and most policies pass): check values, no conversion.
  using Float32C = py::array_t<float, py::array::c_style>;
  if (py::isinstance<Float32C>(value)) {
    auto floats = py::reinterpret_borrow<Float32C>(value);
    bool same_shape = floats.ndim() == static_cast<py::ssize_t>(shape.size());
    for (size_t i = 0; same_shape && i < shape.size(); ++i) same_shape = floats.shape(i) == shape[i];
    if (same_shape) {
      const float* data = floats.data();
      bool finite = true;
      for (py::ssize_t i = 0; i < floats.size(); ++i) finite &= std::isfinite(data[i]);
      if (finite) return floats;
    }
    // Otherwise the general path below reports the problem.
  }
  py::array array;
  try {
    array = py::array::ensure(value);
  } catch (py::error_already_set&) {
  }
  if (!array) {
    PyErr_Clear();
    throw py::type_error(std::string(what) + " should be a float32 array of shape " +
                         ShapeString(shape) + ", got " + TypeName(value));
  }
  const char kind = array.dtype().kind();
  if (kind != 'f') {
    throw py::type_error(std::string(what) + " should have a floating-point dtype (float32 or " +
                         "float64), got " + py::str(array.dtype()).cast<std::string>());
  }
  bool same_shape = array.ndim() == static_cast<py::ssize_t>(shape.size());
  for (size_t i = 0; same_shape && i < shape.size(); ++i) same_shape = array.shape(i) == shape[i];
  if (!same_shape) {
    throw py::value_error(std::string(what) + " should have shape " + ShapeString(shape) +
                          ", got " + ShapeString(array));
  }
  auto index_of = [&shape](py::ssize_t flat) {
    std::vector<py::ssize_t> index(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
      index[d] = flat % shape[d];
      flat /= shape[d];
    }
    return ShapeString(index);
  };
  auto reject = [&](double x, py::ssize_t flat, const char* why) {
    std::ostringstream msg;
    msg << what << " should be finite, got " << x << " at index " << index_of(flat)
        << why;
    throw py::value_error(msg.str());
  };
  const bool is_float32 = array.dtype().is(py::dtype::of<float>());
  if (is_float32) {
    // The common case: no copy unless the layout is not C-contiguous.
    auto floats = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(array);
    if (!floats) throw py::error_already_set();
    const float* data = floats.data();
    for (py::ssize_t i = 0; i < floats.size(); ++i) {
      if (!std::isfinite(data[i])) reject(data[i], i, "");
    }
    return floats;
  }
  // Other float dtypes go through float64 (exact for float16/32/64), and are
  // narrowed here, after a range check, so that NumPy never warns on a cast.
  auto doubles = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(array);
  if (!doubles) throw py::error_already_set();
  const double* data = doubles.data();
  constexpr double kMax = 3.4028234663852886e38;  // FLT_MAX
  for (py::ssize_t i = 0; i < doubles.size(); ++i) {
    if (!std::isfinite(data[i])) reject(data[i], i, "");
    if (std::fabs(data[i]) > kMax) reject(data[i], i, " (out of float32 range)");
  }
  py::array_t<float, py::array::c_style> floats(std::vector<py::ssize_t>(shape.begin(), shape.end()));
  float* out = floats.mutable_data();
  for (py::ssize_t i = 0; i < doubles.size(); ++i) out[i] = static_cast<float>(data[i]);
  return floats;
}

py::array_t<double, py::array::c_style> CheckStateArray(py::handle value, py::ssize_t size,
                                                        const char* what) {
  py::array array;
  try {
    array = py::array::ensure(value);
  } catch (py::error_already_set&) {
  }
  if (!array) PyErr_Clear();
  if (!array || (array.dtype().kind() != 'f' && array.dtype().kind() != 'i' &&
                 array.dtype().kind() != 'u')) {
    throw py::type_error(std::string(what) + " should be a real array of shape (" +
                         std::to_string(size) + ",), got " +
                         (array ? py::str(array.dtype()).cast<std::string>() : TypeName(value)));
  }
  if (array.ndim() != 1 || array.shape(0) != size) {
    throw py::value_error(std::string(what) + " should have shape (" + std::to_string(size) +
                          ",), got " + ShapeString(array));
  }
  auto doubles = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(array);
  if (!doubles) throw py::error_already_set();
  for (py::ssize_t i = 0; i < size; ++i) {
    if (!std::isfinite(doubles.data()[i])) {
      throw py::value_error(std::string(what) + " should be finite, got " +
                            std::to_string(doubles.data()[i]) + " at index " + std::to_string(i));
    }
  }
  return doubles;
}

long CheckInt(py::handle value, const char* what, long minimum, long maximum) {
  if (!IsInteger(value)) {
    throw py::type_error(std::string(what) + " should be an int, got " + TypeName(value) + " " +
                         Repr(value));
  }
  // Compare as Python ints first: the value may not fit in a C long.
  const py::int_ v(py::reinterpret_borrow<py::object>(value));
  const bool too_small = v < py::int_(minimum);
  if (too_small || v > py::int_(maximum)) {
    // ">= min" reads best for the usual mistake; a value over the (large)
    // maximum gets the full range.
    std::string range = too_small && maximum >= std::numeric_limits<int>::max()
                            ? ">= " + std::to_string(minimum)
                            : "in [" + std::to_string(minimum) + ", " + std::to_string(maximum) + "]";
    throw py::value_error(std::string(what) + " should be " + range + ", got " + Repr(value));
  }
  return v.cast<long>();
}

Params ConvertParams(const std::vector<ParamSpec>& specs, const py::dict& kwargs,
                     const std::string& owner) {
  std::map<std::string, ParamValue> given;
  for (auto item : kwargs) {
    const std::string name = py::str(item.first).cast<std::string>();
    const ParamSpec* spec = nullptr;
    for (const auto& s : specs) {
      if (s.name == name) spec = &s;
    }
    if (spec == nullptr) {
      std::ostringstream msg;
      msg << owner << " got an unexpected keyword argument '" << name << "'; allowed:";
      for (size_t i = 0; i < specs.size(); ++i) msg << (i ? ", " : " ") << specs[i].name;
      throw py::type_error(msg.str());
    }
    py::handle value = item.second;
    ParamValue out;
    switch (spec->kind) {
      case ParamKind::kFloat:
        out.numbers = {CheckBounds(RealOrThrow(value, name, false), value, name, *spec, -1)};
        break;
      case ParamKind::kOptionalFloat:
        out.numbers = {value.is_none()
                           ? std::nan("")
                           : CheckBounds(RealOrThrow(value, name, false), value, name, *spec, -1)};
        break;
      case ParamKind::kInt:
        out.numbers = {static_cast<double>(CheckInt(value, name.c_str(), spec->min_int, spec->max_int))};
        break;
      case ParamKind::kBool:
        if (!IsBool(value)) {
          throw py::type_error(name + " should be a bool, got " + TypeName(value) + " " +
                               Repr(value));
        }
        out.numbers = {value.cast<bool>() ? 1.0 : 0.0};
        break;
      case ParamKind::kRange: {
        if (!py::isinstance<py::sequence>(value) || py::isinstance<py::str>(value) ||
            py::len(value) != 2) {
          throw py::type_error(name + " should be a (low, high) pair of numbers, got " +
                               Repr(value));
        }
        auto seq = py::reinterpret_borrow<py::sequence>(value);
        const py::object first = seq[0], second = seq[1];
        const double low =
            CheckBounds(RealOrThrow(first, name + "[0]", true), first, name + "[0]", *spec, 0);
        const double high =
            CheckBounds(RealOrThrow(second, name + "[1]", true), second, name + "[1]", *spec, 1);
        if (!(low <= high)) {
          throw py::value_error(name + " should have low <= high, got " + Repr(value));
        }
        out.numbers = {low, high};
        break;
      }
      case ParamKind::kString: {
        py::object os = py::module_::import("os");
        if (!py::isinstance<py::str>(value) && !py::isinstance(value, os.attr("PathLike"))) {
          throw py::type_error(name + " should be a str or path, got " + TypeName(value) + " " +
                               Repr(value));
        }
        out.text = py::str(os.attr("fspath")(value)).cast<std::string>();
        out.is_text = true;
        break;
      }
      case ParamKind::kBodyRef:
        if (py::isinstance<py::str>(value)) {
          out.text = value.cast<std::string>();
          out.is_text = true;
        } else if (IsInteger(value)) {
          out.numbers = {static_cast<double>(CheckInt(value, name.c_str(), -(1L << 30), 1L << 30))};
        } else {
          throw py::type_error(name + " should be a body index (int) or name (str), got " +
                               TypeName(value) + " " + Repr(value));
        }
        break;
    }
    given[name] = std::move(out);
  }
  return Params(specs, std::move(given));
}

void CopyFinite(const float* source, float* target, std::size_t count,
                const std::vector<py::ssize_t>& shape, const char* what) {
  std::copy(source, source + count, target);
  for (std::size_t k = 0; k < count; ++k) {
    if (std::isfinite(target[k])) continue;
    std::vector<py::ssize_t> index(shape.size());
    auto flat = static_cast<py::ssize_t>(k);
    for (std::size_t d = shape.size(); d-- > 0;) {
      index[d] = flat % shape[d];
      flat /= shape[d];
    }
    std::ostringstream msg;
    msg << what << " should be finite, got " << target[k] << " at index " << ShapeString(index);
    throw py::value_error(msg.str());
  }
}

void CopyFinite(const double* source, double* target, std::size_t count, const char* what) {
  std::copy(source, source + count, target);
  for (std::size_t k = 0; k < count; ++k) {
    if (!std::isfinite(target[k])) {
      throw py::value_error(std::string(what) + " should be finite, got " +
                            std::to_string(target[k]) + " at index " + std::to_string(k));
    }
  }
}

}  // namespace joltgym::bindings
