#include "steer/value.hpp"

#include <charconv>
#include <cmath>
#include <compare>
#include <fmt/core.h>
#include <limits>

#include "steer/error.hpp"

namespace steer {

// Mixed int/float comparison converts both sides to long double, which holds every
// int64 and every double exactly where it has a 64-bit mantissa (x86-64, AArch64 Linux).
static_assert(std::numeric_limits<long double>::digits >= 64,
              "exact int/float comparison needs a long double with a 64-bit mantissa");

const char* to_string(ValueType type) noexcept {
  switch (type) {
    case ValueType::Int: return "int";
    case ValueType::Float: return "float";
    case ValueType::Bool: return "bool";
    case ValueType::String: return "string";
  }
  return "unknown";
}

namespace {

// "int 32", "string 'abc'": what a value is, for error messages.
std::string describe(const Value& value) {
  if (value.is_string()) return fmt::format("string '{}'", value.as_string());
  return fmt::format("{} {}", to_string(value.type()), value.to_string());
}

// Numeric values as an integer or a double: bools count as the integers 0 and 1.
struct Number {
  bool is_float;
  std::int64_t i;
  double f;
};

Number number_of(const Value& value) {
  if (value.is_float()) return {true, 0, value.as_double()};
  return {false, value.as_int(), 0.0};
}

// Orders numbers by value, exactly across int and float. NaN is placed after every
// number and is equivalent to itself, so that this is a total order.
std::strong_ordering compare_numbers(const Number& a, const Number& b) {
  if (!a.is_float && !b.is_float) return a.i <=> b.i;
  bool a_nan = a.is_float && std::isnan(a.f);
  bool b_nan = b.is_float && std::isnan(b.f);
  if (a_nan || b_nan) return a_nan <=> b_nan;
  long double x = a.is_float ? a.f : static_cast<long double>(a.i);
  long double y = b.is_float ? b.f : static_cast<long double>(b.i);
  if (x < y) return std::strong_ordering::less;
  if (y < x) return std::strong_ordering::greater;
  return std::strong_ordering::equal;
}

// Numbers before strings; numbers by value; strings by bytes.
std::strong_ordering compare(const Value& a, const Value& b) {
  if (a.is_string() != b.is_string()) return a.is_string() ? std::strong_ordering::greater : std::strong_ordering::less;
  if (a.is_string()) return a.as_string().compare(b.as_string()) <=> 0;
  return compare_numbers(number_of(a), number_of(b));
}

}  // namespace

std::int64_t Value::as_int() const {
  switch (type()) {
    case ValueType::Int: return std::get<std::int64_t>(v_);
    case ValueType::Bool: return std::get<bool>(v_) ? 1 : 0;
    case ValueType::Float: {
      double f = std::get<double>(v_);
      // 2^63 is exactly representable; every integral double in [-2^63, 2^63) fits.
      constexpr double kLimit = 9223372036854775808.0;
      if (std::trunc(f) == f && f >= -kLimit && f < kLimit) return static_cast<std::int64_t>(f);
      throw Error(fmt::format("expected an integer, got {}", describe(*this)));
    }
    case ValueType::String: break;
  }
  throw Error(fmt::format("expected an integer, got {}", describe(*this)));
}

double Value::as_double() const {
  switch (type()) {
    case ValueType::Int: return static_cast<double>(std::get<std::int64_t>(v_));
    case ValueType::Float: return std::get<double>(v_);
    case ValueType::Bool: return std::get<bool>(v_) ? 1.0 : 0.0;
    case ValueType::String: break;
  }
  throw Error(fmt::format("expected a number, got {}", describe(*this)));
}

bool Value::as_bool() const {
  if (is_string()) throw Error(fmt::format("expected a number or bool, got {}", describe(*this)));
  return as_double() != 0.0;
}

const std::string& Value::as_string() const {
  if (!is_string()) throw Error(fmt::format("expected a string, got {}", describe(*this)));
  return std::get<std::string>(v_);
}

std::string Value::to_string() const {
  switch (type()) {
    case ValueType::Int: return std::to_string(std::get<std::int64_t>(v_));
    case ValueType::Bool: return std::get<bool>(v_) ? "1" : "0";
    case ValueType::String: return std::get<std::string>(v_);
    case ValueType::Float: {
      char buffer[64];
      auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, std::get<double>(v_));
      std::string text(buffer, end);
      // Shortest round-trip form, but "2.0" rather than "2" so the text still reads as a float.
      if (text.find_first_not_of("-0123456789") == std::string::npos) text += ".0";
      return text;
    }
  }
  return {};
}

bool operator==(const Value& a, const Value& b) noexcept { return compare(a, b) == 0; }

bool operator<(const Value& a, const Value& b) noexcept { return compare(a, b) < 0; }

}  // namespace steer
