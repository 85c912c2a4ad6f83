// Exception types that cross into Python with a matching Python class.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace joltgym {

// `text` with every byte that is not part of valid UTF-8 written as \xNN: a
// message quoting a path whose name is not UTF-8 stays valid text (Python
// decodes messages strictly; an invalid byte would replace the error with a
// UnicodeDecodeError).
inline std::string ValidUtf8(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  const auto byte = [&text](std::size_t i) { return i < text.size() ? static_cast<unsigned char>(text[i]) : 0; };
  const auto in = [](unsigned char c, unsigned char low, unsigned char high) { return c >= low && c <= high; };
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = byte(i);
    std::size_t length = 0;  // of a valid sequence starting at i (RFC 3629), or 0
    if (c < 0x80) {
      length = 1;
    } else if (in(c, 0xC2, 0xDF)) {
      length = in(byte(i + 1), 0x80, 0xBF) ? 2 : 0;
    } else if (in(c, 0xE0, 0xEF)) {
      const unsigned char low = c == 0xE0 ? 0xA0 : 0x80, high = c == 0xED ? 0x9F : 0xBF;
      length = in(byte(i + 1), low, high) && in(byte(i + 2), 0x80, 0xBF) ? 3 : 0;
    } else if (in(c, 0xF0, 0xF4)) {
      const unsigned char low = c == 0xF0 ? 0x90 : 0x80, high = c == 0xF4 ? 0x8F : 0xBF;
      length = in(byte(i + 1), low, high) && in(byte(i + 2), 0x80, 0xBF) && in(byte(i + 3), 0x80, 0xBF) ? 4 : 0;
    }
    if (length == 0) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++i;
    } else {
      out.append(text, i, length);
      i += length;
    }
  }
  return out;
}

// A double as a message shows a caller's value: the shortest text that
// reads back as the same double, with ".0" on whole numbers, as Python's
// repr ("-1.0", "0.1", "1e+300", "nan"), not std::to_string's "-1.000000".
inline std::string FloatText(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char text[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof(text), "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  std::string out = text;
  if (out.find_first_of(".e") == std::string::npos) out += ".0";
  return out;
}

// `text` cut to about `limit` bytes for quoting a caller's input in a message
// (a 20 MB path must not make a 20 MB message): its head and tail are kept,
// cut at UTF-8 character boundaries, around a note of how much was left out;
// bytes that are not UTF-8 are written as \xNN (ValidUtf8), and NUL as \x00.
inline std::string ClipMiddle(const std::string& raw, std::size_t limit = 240) {
  std::string text = ValidUtf8(raw);
  if (text.size() > limit) {
    auto boundary = [&text](std::size_t at) {  // back to the start of a character
      while (at > 0 && at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;
      return at;
    };
    const std::size_t head = boundary(limit * 2 / 3);
    const std::size_t tail = boundary(text.size() - limit / 3);
    text = text.substr(0, head) + "...(" + std::to_string(tail - head) + " bytes cut)..." + text.substr(tail);
  }
  // A NUL would end the message where Python receives it (a C string): shown as \x00.
  for (std::size_t at = text.find('\0'); at != std::string::npos; at = text.find('\0', at + 4)) {
    text.replace(at, 1, "\\x00");
  }
  return text;
}

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
