// What each operation of the expression language computes.
#include "expression/operations.hpp"

#include <cmath>
#include <compare>
#include <fmt/core.h>
#include <limits>
#include <utility>

namespace steer::expr::detail {

// How an operation is written, for error messages.
const char* spelling(Code code) {
  switch (code) {
    case kNeg: case kSub: return "-";
    case kPos: case kAdd: return "+";
    case kNot: return "not";
    case kMul: return "*";
    case kDiv: return "/";
    case kFloorDiv: return "//";
    case kMod: return "%";
    case kPow: return "**";
    case kEq: return "==";
    case kNe: return "!=";
    case kLt: return "<";
    case kLe: return "<=";
    case kGt: return ">";
    case kGe: return ">=";
    case kMin: return "min";
    case kMax: return "max";
    case kAbs: return "abs";
    case kInt: return "int";
    case kFloat: return "float";
    case kCeil: return "ceil";
    case kFloor: return "floor";
    case kSqrt: return "sqrt";
    case kLog2: return "log2";
    case kCdiv: return "cdiv";
    default: return "?";
  }
}

const char* type_name(const Scalar& s) {
  switch (s.kind) {
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::Bool: return "bool";
    case Kind::String: return "string";
  }
  return "?";
}

namespace {

using Kind = Scalar::Kind;

// ---------------------------------------------------------------------------------------
// Operations, with Python 3 semantics. Bools act as the ints 0 and 1. Int arithmetic wraps
// around on overflow (two's complement) instead of growing as Python ints do.



bool is_string(const Scalar& s) { return s.kind == Kind::String; }
bool is_float(const Scalar& s) { return s.kind == Kind::Float; }


bool is_function(Code code) { return code >= kMin; }

void require_numbers(Code code, const Scalar& a, const Scalar& b, const Site& site) {
  if (!is_string(a) && !is_string(b)) return;
  std::string what = is_function(code) ? fmt::format("{}()", spelling(code)) : fmt::format("operator '{}'", spelling(code));
  const char* hint = code >= kLt && code <= kGe ? " (strings support only == and !=)" : "";
  site.fail(fmt::format("{} needs numbers, got {} and {}{}", what, type_name(a), type_name(b), hint));
}

void require_number(Code code, const Scalar& a, const Site& site) {
  if (!is_string(a)) return;
  if (is_function(code)) site.fail(fmt::format("{}() needs a number, got string", spelling(code)));
  site.fail(fmt::format("operator '{}' needs a number, got string", spelling(code)));
}

// int(), ceil(), floor() of a float that has already been rounded to an integral value.
Scalar integral_to_int(double rounded, Code code, const Site& site) {
  constexpr double kLimit = 9223372036854775808.0;  // 2^63
  if (std::isnan(rounded) || rounded < -kLimit || rounded >= kLimit)
    site.fail(fmt::format("{}() of {} does not fit in a 64-bit integer", spelling(code), rounded));
  return Scalar::of_int(static_cast<std::int64_t>(rounded));
}

// Exact comparison of numbers of any kinds: long double holds every int64 and every double
// where it has a 64-bit mantissa (x86-64, AArch64 Linux). Unordered when a NaN is involved.
static_assert(std::numeric_limits<long double>::digits >= 64,
              "exact int/float comparison needs a long double with a 64-bit mantissa");
std::partial_ordering compare_numbers(const Scalar& a, const Scalar& b) {
  if (!is_float(a) && !is_float(b)) return a.i <=> b.i;
  auto widen = [](const Scalar& s) { return is_float(s) ? static_cast<long double>(s.f) : static_cast<long double>(s.i); };
  return widen(a) <=> widen(b);
}

bool equal(const Scalar& a, const Scalar& b) {
  if (is_string(a) || is_string(b)) return is_string(a) && is_string(b) && a.i == b.i;
  return compare_numbers(a, b) == 0;
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  if (b == -1) return wrap(0 - bits(a));  // INT64_MIN // -1 overflows
  std::int64_t q = a / b;
  if (a % b != 0 && (a < 0) != (b < 0)) --q;
  return q;
}

std::int64_t floor_mod(std::int64_t a, std::int64_t b) {
  if (b == -1) return 0;
  std::int64_t r = a % b;
  if (r != 0 && (r < 0) != (b < 0)) r += b;
  return r;
}

// Python's float divmod: the remainder takes the divisor's sign, the quotient is floored.
std::pair<double, double> float_divmod(double a, double b) {
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0.0) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, b);
  }
  double floordiv;
  if (div != 0.0) {
    floordiv = std::floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
  } else {
    floordiv = std::copysign(0.0, a / b);
  }
  return {floordiv, mod};
}

}  // namespace

Scalar power(const Scalar& a, const Scalar& b, const Site& site) {
  if (!is_float(a) && !is_float(b)) {
    std::int64_t exponent = b.i;
    if (exponent < 0) {
      if (a.i == 0) site.fail("zero cannot be raised to a negative power");
      return Scalar::of_float(std::pow(static_cast<double>(a.i), static_cast<double>(exponent)));
    }
    std::uint64_t result = 1, base = bits(a.i);
    for (; exponent != 0; exponent >>= 1, base *= base)
      if (exponent & 1) result *= base;
    return Scalar::of_int(wrap(result));
  }
  double x = a.as_double(), y = b.as_double();
  if (x == 0.0 && y < 0.0) site.fail("zero cannot be raised to a negative power");
  if (x < 0.0 && std::isfinite(y) && std::trunc(y) != y)
    site.fail("a negative number cannot be raised to a fractional power");
  return Scalar::of_float(std::pow(x, y));
}

Scalar unary(Code code, const Scalar& a, const Site& site) {
  if (code == kNot) return Scalar::of_bool(!a.truthy());
  require_number(code, a, site);
  switch (code) {
    case kNeg: return is_float(a) ? Scalar::of_float(-a.f) : Scalar::of_int(wrap(0 - bits(a.i)));
    case kPos:
    case kAbs:
      if (is_float(a)) return Scalar::of_float(code == kAbs ? std::fabs(a.f) : a.f);
      return Scalar::of_int(code == kAbs && a.i < 0 ? wrap(0 - bits(a.i)) : a.i);
    case kInt: return is_float(a) ? integral_to_int(std::trunc(a.f), code, site) : Scalar::of_int(a.i);
    case kCeil: return is_float(a) ? integral_to_int(std::ceil(a.f), code, site) : Scalar::of_int(a.i);
    case kFloor: return is_float(a) ? integral_to_int(std::floor(a.f), code, site) : Scalar::of_int(a.i);
    case kFloat: return Scalar::of_float(a.as_double());
    case kSqrt:
      if (a.as_double() < 0.0) site.fail(fmt::format("sqrt() of a negative number ({})", a.as_double()));
      return Scalar::of_float(std::sqrt(a.as_double()));
    case kLog2:
      if (a.as_double() <= 0.0) site.fail(fmt::format("log2() of a number that is not positive ({})", a.as_double()));
      return Scalar::of_float(std::log2(a.as_double()));
    default: site.fail("internal error: unknown unary operation");
  }
}

Scalar binary(Code code, const Scalar& a, const Scalar& b, const Site& site) {
  if (code == kEq) return Scalar::of_bool(equal(a, b));
  if (code == kNe) return Scalar::of_bool(!equal(a, b));
  require_numbers(code, a, b, site);
  if (code == kMin || code == kMax) {
    // Python returns the first of equal extremes, and the operand itself (min(2, 3.0) is 2).
    return compare_numbers(b, a) == (code == kMin ? std::partial_ordering::less : std::partial_ordering::greater) ? b : a;
  }
  bool floats = is_float(a) || is_float(b);
  switch (code) {
    case kAdd: return floats ? Scalar::of_float(a.as_double() + b.as_double()) : Scalar::of_int(wrap(bits(a.i) + bits(b.i)));
    case kSub: return floats ? Scalar::of_float(a.as_double() - b.as_double()) : Scalar::of_int(wrap(bits(a.i) - bits(b.i)));
    case kMul: return floats ? Scalar::of_float(a.as_double() * b.as_double()) : Scalar::of_int(wrap(bits(a.i) * bits(b.i)));
    case kDiv:
      if (b.as_double() == 0.0) site.fail("division by zero");
      return Scalar::of_float(a.as_double() / b.as_double());
    case kFloorDiv:
    case kMod:
      if (b.as_double() == 0.0) site.fail("division by zero");
      if (floats) {
        auto [quotient, remainder] = float_divmod(a.as_double(), b.as_double());
        return Scalar::of_float(code == kMod ? remainder : quotient);
      }
      return Scalar::of_int(code == kMod ? floor_mod(a.i, b.i) : floor_div(a.i, b.i));
    case kCdiv: {
      if (floats) site.fail(fmt::format("cdiv() needs integers, got {} and {}", type_name(a), type_name(b)));
      if (b.i == 0) site.fail("division by zero");
      return Scalar::of_int(wrap(0 - bits(floor_div(wrap(0 - bits(a.i)), b.i))));  // -(-a // b)
    }
    case kPow: return power(a, b, site);
    case kLt: return Scalar::of_bool(compare_numbers(a, b) < 0);
    case kLe: return Scalar::of_bool(compare_numbers(a, b) <= 0);
    case kGt: return Scalar::of_bool(compare_numbers(a, b) > 0);
    case kGe: return Scalar::of_bool(compare_numbers(a, b) >= 0);
    default: site.fail("internal error: unknown binary operation");
  }
}

}  // namespace steer::expr::detail
