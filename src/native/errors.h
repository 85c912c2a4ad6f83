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

// An index out of range, e.g. a world id past num_envs (Python: IndexError,
// which pybind11 makes of std::out_of_range).
using BadIndex = std::out_of_range;

// An argument of the wrong type or name, e.g. an unknown keyword argument
// (Python: TypeError).
class BadType : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// An operation in the wrong lifecycle state, e.g. stepping before reset or
// after close (Python: RuntimeError).
class StateError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// MuJoCo raised an error (mju_error) during a call: Python MemoryError when
// it ran out of memory, joltgym_marl.MujocoError (a RuntimeError) otherwise.
class MujocoError : public std::runtime_error {
 public:
  MujocoError(const std::string& message, bool out_of_memory)
      : std::runtime_error(message), out_of_memory_(out_of_memory) {}
  bool out_of_memory() const { return out_of_memory_; }

 private:
  bool out_of_memory_;
};

}  // namespace joltgym
