// Validation at the Python/C++ boundary. Everything a user passes is checked
// here, once, with the GIL held; the native core trusts what it receives.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <limits>
#include <map>
#include <string>
#include <vector>

#include "../params.h"

namespace joltgym::bindings {

namespace py = pybind11;

// "(64, 6)" for error messages.
std::string ShapeString(const std::vector<py::ssize_t>& shape);
std::string ShapeString(const py::array& array);

// Converts `value` to a C-contiguous float32 array of exactly `shape`,
// rejecting non-float dtypes (TypeError), wrong shapes and non-finite values
// (ValueError). `what` names the argument in messages. No copy is made when
// `value` already is such an array.
py::array_t<float, py::array::c_style> CheckFloatArray(py::handle value,
                                                       const std::vector<py::ssize_t>& shape,
                                                       const char* what);

// Same for float64 state vectors (qpos, qvel).
py::array_t<double, py::array::c_style> CheckStateArray(py::handle value, py::ssize_t size,
                                                        const char* what);

// "[-1e+06, 1e+06]" for error messages.
std::string IntervalString(double low, double high);
// Copies `count` values of an array that CheckFloatArray / CheckStateArray
// accepted (of `shape`) into native memory, raising ValueError at the first
// non-finite value *of the copy*: what the native side reads is what was
// checked, even if another thread wrote into the caller's array meanwhile.
void CopyFinite(const float* source, float* target, std::size_t count,
                const std::vector<py::ssize_t>& shape, const char* what);
void CopyFinite(const double* source, double* target, std::size_t count, const char* what);

// Converts keyword arguments to task parameters. Unknown names raise
// TypeError listing the allowed ones; wrong kinds raise TypeError; bad values
// ValueError, among them real values outside the spec's bounds (by default
// finite with |x| <= kMaxRealParam; a range's ends may also be -inf / +inf:
// see params.h), naming the parameter, the value and the allowed range.
// `owner` names the callee in messages.
Params ConvertParams(const std::vector<ParamSpec>& specs, const py::dict& kwargs,
                     const std::string& owner);

// An integer in [minimum, maximum] from a Python value (bool is not an int
// here), or TypeError / ValueError naming the value and the range.
long CheckInt(py::handle value, const char* what, long minimum,
              long maximum = std::numeric_limits<int>::max());

}  // namespace joltgym::bindings
