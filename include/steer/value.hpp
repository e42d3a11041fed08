#pragma once
// A tuning-parameter value: int, float, bool or string.
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace steer {

enum class ValueType { Int, Float, Bool, String };

const char* to_string(ValueType type) noexcept;

class Value {
 public:
  Value() : v_(std::int64_t{0}) {}
  Value(int x) : v_(std::int64_t{x}) {}
  Value(std::int64_t x) : v_(x) {}
  Value(double x) : v_(x) {}
  Value(bool x) : v_(x) {}
  Value(std::string x) : v_(std::move(x)) {}
  Value(const char* x) : v_(std::string(x)) {}

  ValueType type() const noexcept { return static_cast<ValueType>(v_.index()); }
  bool is_int() const noexcept { return type() == ValueType::Int; }
  bool is_float() const noexcept { return type() == ValueType::Float; }
  bool is_bool() const noexcept { return type() == ValueType::Bool; }
  bool is_string() const noexcept { return type() == ValueType::String; }
  bool is_numeric() const noexcept { return !is_string(); }

  // The accessors throw steer::Error naming the value when it has the wrong type.
  std::int64_t as_int() const;        // int, bool; float only if integral; throws otherwise
  double as_double() const;           // any numeric
  bool as_bool() const;               // numeric != 0
  const std::string& as_string() const;  // strings only

  // Text as a C preprocessor / CSV / JSON-key token: 32, 0.5, 1e-05, 2.0 (an integral
  // float keeps its ".0" so it reads back as a float), 1 (true), 0 (false), abc (strings
  // unquoted). Floats are in the shortest form that reads back to the same double.
  std::string to_string() const;

  // Numbers compare by value across types, as in Python: 2 == 2.0, true == 1. A string
  // never equals a number. Unlike IEEE, NaN == NaN, so that == is an equivalence.
  friend bool operator==(const Value& a, const Value& b) noexcept;
  // Total order for sorting, consistent with ==: numbers by value (NaN last), then strings
  // by bytes.
  friend bool operator<(const Value& a, const Value& b) noexcept;

 private:
  std::variant<std::int64_t, double, bool, std::string> v_;
};

// A configuration: each tuning parameter's name and value, in definition order.
using Configuration = std::vector<std::pair<std::string, Value>>;

}  // namespace steer
