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
#include "../validation.h"

namespace joltgym::bindings {

namespace py = pybind11;

// NumPy's flag of an array whose items sit at addresses their type's
// alignment allows. A view into a buffer at an odd offset (np.frombuffer(b,
// offset=1)) is not aligned, and reading its items in place is undefined
// behaviour: such arrays are copied (kReadable asks NumPy for an aligned
// copy) before they are read.
inline constexpr int kAlignedFlag = py::detail::npy_api::NPY_ARRAY_ALIGNED_;
inline constexpr int kReadable = py::array::c_style | py::array::forcecast | kAlignedFlag;
bool IsAligned(py::handle array);  // an ndarray's kAlignedFlag

// "(64, 6)" for error messages (the core's ShapeString, and an array's).
using joltgym::ShapeString;
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

// IntervalString and CopyFinite (copying checked input into native memory,
// checking it again as copied) are the core's: ../validation.h.

// Converts keyword arguments to task parameters through the core's
// ConvertParams (../validation.h): unknown names and wrong kinds raise
// TypeError (BadType), bad values ValueError, with the core's messages.
Params ConvertParams(const std::vector<ParamSpec>& specs, const py::dict& kwargs,
                     const std::string& owner);

// A Python integer (int, a subclass, a NumPy integer: anything
// operator.index() takes) converted once to a C integer: `overflow` is -1 or
// 1 when it does not fit in a long long (`value` is then meaningless), else 0.
// Range checks compare the C value, never through the object's own
// comparison methods (an int subclass may define them to lie).
struct CInteger {
  long long value;
  int overflow;
};
CInteger ToCInteger(py::handle value);

// A Python str as UTF-8, all of it (NUL characters included), or ValueError
// naming `what` for text UTF-8 cannot encode (a lone surrogate).
std::string Utf8(py::handle text, const char* what);

// An integer in [minimum, maximum] from a Python value (bool is not an int
// here), or TypeError / ValueError naming the value and the range.
long CheckInt(py::handle value, const char* what, long minimum,
              long maximum = std::numeric_limits<int>::max());

}  // namespace joltgym::bindings
