#include "checks.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "../errors.h"

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

}  // namespace

std::string Utf8(py::handle text, const char* what) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(text.ptr(), &size);
  if (data == nullptr) {  // a lone surrogate ('\ud800') has no UTF-8 form
    PyErr_Clear();
    throw py::value_error(std::string(what) + " should be text that UTF-8 can encode, got " +
                          ClipRepr(py::repr(text).cast<std::string>()));
  }
  return std::string(data, static_cast<std::size_t>(size));
}

bool IsAligned(py::handle array) {
  return (py::reinterpret_borrow<py::array>(array).flags() & kAlignedFlag) != 0;
}

CInteger ToCInteger(py::handle value) {
  // operator.index() gives an exact int (CPython >= 3.10), whatever
  // comparisons or conversions an int subclass defines; from there on the
  // value is a C integer and every comparison is C++'s.
  const py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
  if (!index) throw py::error_already_set();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  return {v, overflow};
}

namespace {

// A Python keyword-argument value as the core's ConvertParams sees it.
class PyParamInput final : public ParamInput {
 public:
  explicit PyParamInput(py::handle value) : value_(py::reinterpret_borrow<py::object>(value)) {}
  bool IsNone() const override { return value_.is_none(); }
  bool IsBool() const override { return bindings::IsBool(value_); }
  bool IsInteger() const override { return bindings::IsInteger(value_); }
  bool IsReal() const override { return bindings::IsReal(value_); }
  bool IsText() const override { return py::isinstance<py::str>(value_); }
  bool IsPath() const override {
    return IsText() || py::isinstance(value_, py::module_::import("os").attr("PathLike"));
  }
  bool IsSequence() const override {
    return py::isinstance<py::sequence>(value_) && !py::isinstance<py::str>(value_);
  }
  std::size_t Length() const override { return py::len(value_); }
  std::unique_ptr<ParamInput> Item(std::size_t i) const override {
    const py::object item = py::reinterpret_borrow<py::sequence>(value_)[i];
    return std::make_unique<PyParamInput>(item);
  }
  double Real() const override { return value_.cast<double>(); }
  bool Bool() const override { return value_.cast<bool>(); }
  int CompareInt(long bound) const override {
    const CInteger v = ToCInteger(value_);
    if (v.overflow != 0) return v.overflow;
    return v.value < bound ? -1 : v.value > bound ? 1 : 0;
  }
  long Int() const override { return static_cast<long>(ToCInteger(value_).value); }
  std::string Text() const override {
    // os.fsencode: a path's bytes as the file system has them (a name that
    // is not UTF-8 arrives with surrogate escapes, which UTF-8 cannot encode).
    py::object bytes;
    try {
      bytes = py::module_::import("os").attr("fsencode")(value_);
    } catch (py::error_already_set& e) {
      if (!e.matches(PyExc_UnicodeError)) throw;
      throw py::value_error("a path should be encodable in the file system's encoding, got " +
                            Repr());
    }
    return bytes.cast<std::string>();
  }
  std::string Repr() const override { return ClipMiddle(bindings::Repr(value_)); }
  std::string TypeName() const override { return bindings::TypeName(value_); }

 private:
  py::object value_;
};

}  // namespace

std::string ShapeString(const py::array& array) {
  return ShapeString(std::vector<py::ssize_t>(array.shape(), array.shape() + array.ndim()));
}

py::array_t<float, py::array::c_style> CheckFloatArray(py::handle value,
                                                       const std::vector<py::ssize_t>& shape,
                                                       const char* what) {
  // Fast path: already a C-contiguous float32 array of the right shape (what
  // the vector envs and most policies pass): check values, no conversion.
  using Float32C = py::array_t<float, py::array::c_style>;
  if (py::isinstance<Float32C>(value) && IsAligned(value)) {
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
    auto floats = py::array_t<float, kReadable>::ensure(array);
    if (!floats) throw py::error_already_set();
    const float* data = floats.data();
    for (py::ssize_t i = 0; i < floats.size(); ++i) {
      if (!std::isfinite(data[i])) reject(data[i], i, "");
    }
    return floats;
  }
  // Other float dtypes go through float64 (exact for float16/32/64), and are
  // narrowed here, after a range check, so that NumPy never warns on a cast.
  auto doubles = py::array_t<double, kReadable>::ensure(array);
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
  auto doubles = py::array_t<double, kReadable>::ensure(array);
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
  try {
    return joltgym::CheckInt(PyParamInput(value), what, minimum, maximum);
  } catch (const BadType& e) {
    throw py::type_error(e.what());
  } catch (const BadValue& e) {
    throw py::value_error(e.what());
  }
}

Params ConvertParams(const std::vector<ParamSpec>& specs, const py::dict& kwargs,
                     const std::string& owner) {
  std::vector<PyParamInput> inputs;
  std::vector<std::string> names;
  inputs.reserve(py::len(kwargs));
  for (auto item : kwargs) {
    if (!py::isinstance<py::str>(item.first)) {
      throw py::type_error(owner + " keyword names should be str, got " + ClipMiddle(Repr(item.first)));
    }
    names.push_back(Utf8(item.first, "a keyword argument name"));
    inputs.emplace_back(item.second);
  }
  std::vector<std::pair<std::string, const ParamInput*>> given;
  for (std::size_t i = 0; i < inputs.size(); ++i) given.emplace_back(names[i], &inputs[i]);
  return joltgym::ConvertParams(specs, given, owner);
}

}  // namespace joltgym::bindings
