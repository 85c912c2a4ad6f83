// A small JSON reader for the C API's keyword arguments, and the view of a
// JSON value the core's ConvertParams asks its questions through (so that a
// value given to the C API is checked by the very code, and with the words,
// that check a Python value).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "validation.h"

namespace joltgym::capi {

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0.0;
  bool integer = false;  // a number written without fraction or exponent
  std::string text;      // a string's value, or a number's token
  std::vector<JsonValue> items;
  std::vector<std::pair<std::string, JsonValue>> members;
};

// Parses one JSON value filling all of `text` (surrounding white space
// allowed). Also takes inf, -inf, Infinity and -Infinity as numbers. Throws
// BadValue naming `what` and the position on malformed input.
JsonValue ParseJson(const std::string& text, const std::string& what);

// A key/value argument's value: JSON if it parses, else the text as a string.
JsonValue ParseLoose(const std::string& text);

// Python's spelling of a JSON value: 'text', True, None, [1, 2.5].
std::string PythonRepr(const JsonValue& value);

class JsonParamInput final : public ParamInput {
 public:
  explicit JsonParamInput(const JsonValue& value) : value_(value) {}
  bool IsNone() const override { return value_.kind == JsonValue::Kind::kNull; }
  bool IsBool() const override { return value_.kind == JsonValue::Kind::kBool; }
  bool IsInteger() const override;
  bool IsReal() const override;
  bool IsText() const override { return value_.kind == JsonValue::Kind::kString; }
  bool IsPath() const override { return IsText(); }
  bool IsSequence() const override { return value_.kind == JsonValue::Kind::kArray; }
  std::size_t Length() const override { return value_.items.size(); }
  std::unique_ptr<ParamInput> Item(std::size_t i) const override {
    return std::make_unique<JsonParamInput>(value_.items.at(i));
  }
  double Real() const override;
  bool Bool() const override { return value_.boolean; }
  int CompareInt(long bound) const override;
  long Int() const override;
  std::string Text() const override { return value_.text; }
  std::string Repr() const override { return ClipMiddle(PythonRepr(value_)); }
  std::string TypeName() const override;

 private:
  const JsonValue& value_;
};

}  // namespace joltgym::capi
