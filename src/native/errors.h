// Exception types that cross into Python with a matching Python class.
#pragma once

#include <stdexcept>
#include <string>

namespace joltgym {

// A model file that does not exist (Python: FileNotFoundError).
class FileNotFound : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A bad argument value (Python: ValueError). std::invalid_argument maps to
// ValueError too; this alias keeps call sites self-explanatory.
using BadValue = std::invalid_argument;

// An operation in the wrong lifecycle state, e.g. stepping before reset or
// after close (Python: RuntimeError).
class StateError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace joltgym
