#pragma once
// The operations of the expression language: the postfix program's instruction set, the
// functions, the limits, and what each operation computes (Python 3 semantics).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "expression/expression.hpp"

namespace steer::expr::detail {

using Kind = Scalar::Kind;

// The instruction set of the postfix program.
enum Code : std::uint8_t {
  kConst,             // push constants_[operand]
  kSlot,              // push slots[operand]
  kJump,              // go to operand
  kJumpIfFalseOrPop,  // `and`: keep a falsy top and go to operand, else pop it
  kJumpIfTrueOrPop,   // `or`: keep a truthy top and go to operand, else pop it
  kPopJumpIfFalse,    // ternary: pop the condition, go to operand if falsy
  // Operations pop `arity` values and push one.
  kNeg, kPos, kNot,
  kAdd, kSub, kMul, kDiv, kFloorDiv, kMod, kPow,
  kEq, kNe, kLt, kLe, kGt, kGe,
  kMin, kMax, kAbs, kInt, kFloat, kCeil, kFloor, kSqrt, kLog2, kCdiv,
};

// How an operation is written, for error messages.
const char* spelling(Code code);

struct Function {
  std::string_view name;
  Code code;
  std::size_t min_args, max_args;
};

// pow(a, b) is a ** b; min and max are n-ary and compile to a chain of pairwise ops.
inline constexpr Function kFunctions[] = {
    {"min", kMin, 1, SIZE_MAX}, {"max", kMax, 1, SIZE_MAX}, {"abs", kAbs, 1, 1},
    {"int", kInt, 1, 1},        {"float", kFloat, 1, 1},    {"ceil", kCeil, 1, 1},
    {"floor", kFloor, 1, 1},    {"sqrt", kSqrt, 1, 1},      {"log2", kLog2, 1, 1},
    {"cdiv", kCdiv, 2, 2},      {"pow", kPow, 2, 2},
};

// Limits that keep evaluate() on a fixed stack, the parser's recursion shallow, and the
// program short (a chained comparison compiles its middle operand twice, so nested chains
// could otherwise grow it exponentially).
inline constexpr std::size_t kMaxStack = 64;
inline constexpr int kMaxNesting = 100;
inline constexpr std::size_t kMaxProgram = 4096;
// A value list longer than this is a mistake (range(10**9)), not a tuning parameter.
inline constexpr std::uint64_t kMaxListLength = 1'000'000;

const char* type_name(const Scalar& s);

// Where an operation is, to report its failure.
struct Site {
  const std::string& text;
  std::uint32_t position;
  [[noreturn]] void fail(std::string message) const { throw ExpressionError(std::move(message), text, position); }
};

// Int arithmetic wraps around (two's complement): through unsigned, where it is defined.
inline std::int64_t wrap(std::uint64_t x) { return static_cast<std::int64_t>(x); }
inline std::uint64_t bits(std::int64_t x) { return static_cast<std::uint64_t>(x); }

// Applies a one- or two-operand operation; fails at `site` for operands it does not take.
Scalar unary(Code code, const Scalar& a, const Site& site);
Scalar binary(Code code, const Scalar& a, const Scalar& b, const Site& site);
Scalar power(const Scalar& a, const Scalar& b, const Site& site);

}  // namespace steer::expr::detail
