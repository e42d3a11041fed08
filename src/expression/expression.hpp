#pragma once
// The expression language of constraints, value lists and launch geometry: the
// Python-like syntax Kernel Tuner and KTT users write.
//
//   + - * / // % **   == != < <= > >=   and or not  && || !   ( )
//   a if cond else b   min(...) max(...) abs() int() float() ceil() floor() sqrt() log2()
//   cdiv(a, b) (divide and round up)   pow(a, b)   True False   'strings' "strings"   parameter names
//
// Semantics are Python 3's: precedence (`a if c else b` lowest, then or, and, not,
// comparisons, + -, * / // %, unary - +, ** binding tighter than a unary minus on its left:
// -2**2 == -4), chained comparisons (a < b <= c), `/` always gives a float, `//` and `%`
// floor (-7 // 2 == -4, -7 % 2 == 1), int ** negative int is a float, `and`/`or`
// short-circuit and give an operand, bools act as 0 and 1 in arithmetic, int(), ceil() and
// floor() give ints. Strings support only == and !=. Differences from Python:
//   - ints are 64-bit and wrap around on overflow;
//   - `&&` and `||` are `and` and `or`, but `!` binds like unary minus, as in C: `!a == b`
//     is `(!a) == b`, while `not a == b` is `not (a == b)`;
//   - true and false are accepted for True and False.
// Division or modulo by zero and type errors throw ExpressionError with the position of
// the operator.
//
// Parsed once into a compact postfix program; evaluate() does not allocate. Sub-expressions
// without variables are computed at parse time.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "steer/error.hpp"
#include "steer/value.hpp"

namespace steer::expr {

namespace detail {
class Compiler;
}

// A value during evaluation. Strings are interned: `id` indexes a process-wide table, so
// comparing strings is comparing ids. The empty string has id 0. truthy() is Python's
// bool(); as_double() is NaN for a string.
struct Scalar {
  enum class Kind : std::uint8_t { Int, Float, Bool, String } kind = Kind::Int;
  union {
    std::int64_t i;
    double f;
  };
  Scalar() : i(0) {}
  static Scalar of_int(std::int64_t v) { Scalar s; s.kind = Kind::Int; s.i = v; return s; }
  static Scalar of_float(double v) { Scalar s; s.kind = Kind::Float; s.f = v; return s; }
  static Scalar of_bool(bool v) { Scalar s; s.kind = Kind::Bool; s.i = v ? 1 : 0; return s; }
  static Scalar of_string_id(std::int64_t id) { Scalar s; s.kind = Kind::String; s.i = id; return s; }
  bool truthy() const noexcept;
  double as_double() const noexcept;
};

Scalar to_scalar(const Value& value);  // interns strings
Value to_value(const Scalar& scalar);
// Thread-safe. Interned strings live until the process ends.
std::int64_t intern(std::string_view text);
const std::string& interned(std::int64_t id);  // throws std::out_of_range for an unknown id

class Expression {
 public:
  Expression() = default;
  // `names[k]` is the variable bound to slot k at evaluation. An unknown name throws
  // ExpressionError naming it and its position.
  static Expression parse(std::string_view text, std::span<const std::string> names);

  // Evaluates with `slots[k]` bound to names[k]. Throws ExpressionError (with the text)
  // on division or modulo by zero, or a type error such as a string in arithmetic.
  // A default-constructed Expression evaluates to int 0.
  Scalar evaluate(std::span<const Scalar> slots) const;
  bool test(std::span<const Scalar> slots) const { return evaluate(slots).truthy(); }

  // The slots the expression reads, ascending, without repeats.
  const std::vector<std::size_t>& slots_used() const noexcept { return used_; }
  const std::string& text() const noexcept { return text_; }
  // True if the expression has no variables (its value is known after parsing).
  bool is_constant() const noexcept { return used_.empty(); }

  // One instruction of the postfix program; codes are defined in operations.hpp.
  struct Op {
    std::uint8_t code = 0;
    std::uint8_t arity = 0;
    std::uint32_t operand = 0;  // slot, constant index or jump target
    std::uint32_t position = 0; // character offset in text(), for error messages
  };

 private:
  friend class detail::Compiler;  // compiler.hpp: builds the program from the syntax tree

  std::string text_;
  std::vector<std::size_t> used_;
  std::vector<Op> program_;
  std::vector<Scalar> constants_;
  std::size_t max_stack_ = 0;
};

// Evaluates a value-list expression: "[1, 2, 4]", "range(1, 33, 2)", "(1, 2)",
// "[32*i for i in range(1, 32)]", "[2**i for i in range(6) if i != 3]", "['a', 'b']",
// "list(range(...))", "1, 2, 4", or a single scalar (a one-element list). A comprehension
// iterates over any of these list forms. Throws ExpressionError, also for a list of more
// than a million values.
std::vector<Value> evaluate_list(std::string_view text);

// The expression's tokens as written, one space between each: the same text for "A*B<=64"
// and "A * B <= 64" (what a tuning is keyed by must not change with spacing). Text that
// does not tokenize is returned as it is.
std::string normalised_text(std::string_view text);

// Evaluates an expression once with named values (launch geometry, sizes); allocates.
Value evaluate_once(std::string_view text, std::span<const std::pair<std::string, Value>> variables);

}  // namespace steer::expr
