#include "json_value.h"

#include <cerrno>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "errors.h"

namespace joltgym::capi {

namespace {

class Parser {
 public:
  Parser(const std::string& text, const std::string& what) : s_(text), what_(what) {}

  JsonValue Document() {
    JsonValue v = Value(0);
    Space();
    if (pos_ != s_.size()) Fail("unexpected text after the value");
    return v;
  }

 private:
  [[noreturn]] void Fail(const std::string& why) const {
    throw BadValue(what_ + " is not valid JSON: " + why + " at character " + std::to_string(pos_));
  }
  void Space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' ||
                                s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Literal(const char* word) {
    const std::string w(word);
    if (s_.compare(pos_, w.size(), w) != 0) return false;
    pos_ += w.size();
    return true;
  }

  JsonValue Value(int depth) {
    if (depth > 64) Fail("nesting too deep");
    Space();
    if (pos_ >= s_.size()) Fail("expected a value");
    JsonValue v;
    const char c = s_[pos_];
    if (c == '{') return Object(depth);
    if (c == '[') return Array(depth);
    if (c == '"') {
      v.kind = JsonValue::Kind::kString;
      v.text = String();
      return v;
    }
    if (Literal("true")) {
      v.kind = JsonValue::Kind::kBool;
      v.boolean = true;
      return v;
    }
    if (Literal("false")) {
      v.kind = JsonValue::Kind::kBool;
      return v;
    }
    if (Literal("null")) return v;
    for (const char* word : {"Infinity", "inf", "-Infinity", "-inf"}) {
      if (Literal(word)) {
        v.kind = JsonValue::Kind::kNumber;
        v.number = word[0] == '-' ? -std::numeric_limits<double>::infinity()
                                  : std::numeric_limits<double>::infinity();
        v.text = word[0] == '-' ? "-inf" : "inf";
        return v;
      }
    }
    return Number();
  }

  JsonValue Number() {
    const std::size_t start = pos_;
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    const std::size_t digits = pos_;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    if (pos_ == digits) Fail("expected a value");
    if (s_[digits] == '0' && pos_ - digits > 1) {  // RFC 8259: no leading zeros
      pos_ = digits;
      Fail("a number has a leading zero (expected 0, or digits from 1 to 9 first)");
    }
    bool integer = true;
    if (pos_ < s_.size() && s_[pos_] == '.') {
      integer = false;
      ++pos_;
      const std::size_t fraction = pos_;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      if (pos_ == fraction) Fail("expected digits after '.'");
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      integer = false;
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      const std::size_t exponent = pos_;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      if (pos_ == exponent) Fail("expected digits in the exponent");
    }
    JsonValue v;
    v.kind = JsonValue::Kind::kNumber;
    v.integer = integer;
    v.text = s_.substr(start, pos_ - start);
    v.number = std::strtod(v.text.c_str(), nullptr);
    return v;
  }

  std::string String() {
    ++pos_;  // the opening quote
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) Fail("unterminated string");
      const char c = s_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) Fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) Fail("unterminated string");
      const char e = s_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          if (pos_ + 4 > s_.size()) Fail("bad \\u escape");
          unsigned code = 0;
          for (int k = 0; k < 4; ++k) {
            const char h = s_[pos_++];
            code <<= 4;
            if (h >= '0' && h <= '9') code |= static_cast<unsigned>(h - '0');
            else if (h >= 'a' && h <= 'f') code |= static_cast<unsigned>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') code |= static_cast<unsigned>(h - 'A' + 10);
            else Fail("bad \\u escape");
          }
          // UTF-8 of the code unit (surrogate pairs are not joined: names are ASCII).
          if (code < 0x80) {
            out += static_cast<char>(code);
          } else if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
          }
          break;
        }
        default:
          Fail("bad escape in a string");
      }
    }
  }

  JsonValue Array(int depth) {
    ++pos_;
    JsonValue v;
    v.kind = JsonValue::Kind::kArray;
    Space();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return v;
    }
    while (true) {
      v.items.push_back(Value(depth + 1));
      Space();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        return v;
      }
      Fail("expected ',' or ']'");
    }
  }

  JsonValue Object(int depth) {
    ++pos_;
    JsonValue v;
    v.kind = JsonValue::Kind::kObject;
    Space();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return v;
    }
    while (true) {
      Space();
      if (pos_ >= s_.size() || s_[pos_] != '"') Fail("expected a string key");
      std::string key = String();
      Space();
      if (pos_ >= s_.size() || s_[pos_] != ':') Fail("expected ':'");
      ++pos_;
      v.members.emplace_back(std::move(key), Value(depth + 1));
      Space();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        return v;
      }
      Fail("expected ',' or '}'");
    }
  }

  const std::string& s_;
  const std::string& what_;
  std::size_t pos_ = 0;
};

std::string QuoteLikePython(const std::string& text) {
  const bool single = text.find('\'') == std::string::npos || text.find('"') != std::string::npos;
  const char quote = single ? '\'' : '"';
  std::string out(1, quote);
  for (const char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == quote) out += std::string("\\") + quote;
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else out += c;
  }
  return out + quote;
}

std::string NumberRepr(const JsonValue& v) {
  if (v.integer) {
    // Python prints ints without leading zeros or "-0".
    std::string digits = v.text;
    const bool negative = !digits.empty() && digits[0] == '-';
    if (negative) digits.erase(0, 1);
    const std::size_t first = digits.find_first_not_of('0');
    digits = first == std::string::npos ? "0" : digits.substr(first);
    return (negative && digits != "0" ? "-" : "") + digits;
  }
  if (std::isinf(v.number)) return v.number > 0 ? "inf" : "-inf";
  if (std::isnan(v.number)) return "nan";
  // Python's repr: the shortest digits that read back the same, in fixed
  // notation for decimal exponents in [-4, 16), else as d.ddde+XX.
  char buffer[64];
  int precision = 0;
  for (; precision < 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*e", precision, v.number);
    if (std::strtod(buffer, nullptr) == v.number) break;
  }
  const std::string text(buffer);
  const std::size_t e = text.find('e');
  std::string mantissa = text.substr(0, e);
  const int exponent = std::atoi(text.c_str() + e + 1);
  const bool negative = mantissa[0] == '-';
  if (negative) mantissa.erase(0, 1);
  std::string digits;
  for (const char c : mantissa) {
    if (c != '.') digits += c;
  }
  std::string out;
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out = "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
    } else if (static_cast<std::size_t>(exponent) + 1 >= digits.size()) {
      out = digits + std::string(static_cast<std::size_t>(exponent) + 1 - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, static_cast<std::size_t>(exponent) + 1) + "." +
            digits.substr(static_cast<std::size_t>(exponent) + 1);
    }
  } else {
    out = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "");
    char exp[16];
    std::snprintf(exp, sizeof(exp), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    out += exp;
  }
  return (negative ? "-" : "") + out;
}

}  // namespace

JsonValue ParseJson(const std::string& text, const std::string& what) {
  return Parser(text, what).Document();
}

JsonValue ParseLoose(const std::string& text) {
  try {
    return ParseJson(text, "value");
  } catch (const BadValue&) {
    JsonValue v;
    v.kind = JsonValue::Kind::kString;
    v.text = text;
    return v;
  }
}

std::string PythonRepr(const JsonValue& value) {
  switch (value.kind) {
    case JsonValue::Kind::kNull:
      return "None";
    case JsonValue::Kind::kBool:
      return value.boolean ? "True" : "False";
    case JsonValue::Kind::kNumber:
      return NumberRepr(value);
    case JsonValue::Kind::kString:
      return QuoteLikePython(value.text);
    case JsonValue::Kind::kArray: {
      std::string out = "[";
      for (std::size_t i = 0; i < value.items.size(); ++i) {
        out += (i ? ", " : "") + PythonRepr(value.items[i]);
      }
      return out + "]";
    }
    case JsonValue::Kind::kObject: {
      std::string out = "{";
      for (std::size_t i = 0; i < value.members.size(); ++i) {
        out += (i ? ", " : "") + QuoteLikePython(value.members[i].first) + ": " +
               PythonRepr(value.members[i].second);
      }
      return out + "}";
    }
  }
  return "None";
}

bool JsonParamInput::IsInteger() const {
  return value_.kind == JsonValue::Kind::kNumber && value_.integer;
}

bool JsonParamInput::IsReal() const { return value_.kind == JsonValue::Kind::kNumber; }

double JsonParamInput::Real() const { return value_.number; }

int JsonParamInput::CompareInt(long bound) const {
  errno = 0;
  const long long v = std::strtoll(value_.text.c_str(), nullptr, 10);
  if (errno == ERANGE) return value_.text[0] == '-' ? -1 : 1;
  return v < bound ? -1 : v > bound ? 1 : 0;
}

long JsonParamInput::Int() const { return std::strtol(value_.text.c_str(), nullptr, 10); }

std::string JsonParamInput::TypeName() const {
  switch (value_.kind) {
    case JsonValue::Kind::kNull:
      return "NoneType";
    case JsonValue::Kind::kBool:
      return "bool";
    case JsonValue::Kind::kNumber:
      return value_.integer ? "int" : "float";
    case JsonValue::Kind::kString:
      return "str";
    case JsonValue::Kind::kArray:
      return "list";
    case JsonValue::Kind::kObject:
      return "dict";
  }
  return "object";
}

}  // namespace joltgym::capi
