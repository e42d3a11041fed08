#pragma once
// The expression language of constraints, value lists and launch geometry: the
// Python-like syntax Kernel Tuner and KTT users write.
//
//   + - * / // % **   == != < <= > >=   and or not  && || !   ( )
//   a if cond else b   min(...) max(...) abs() int() float() ceil() floor() sqrt() log2()
//   cdiv(a, b) (divide and round up)   True False   'strings' "strings"   parameter names
//
// Parsed once into a compact postfix program; evaluate() does not allocate.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "steer/error.hpp"
#include "steer/value.hpp"

namespace steer::expr {

// A value during evaluation. Strings are interned: `id` indexes a process-wide table, so
// comparing strings is comparing ids.
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
std::int64_t intern(std::string_view text);
const std::string& interned(std::int64_t id);

class Expression {
 public:
  Expression() = default;
  // `names[k]` is the variable bound to slot k at evaluation. An unknown name throws
  // ExpressionError naming it and its position.
  static Expression parse(std::string_view text, std::span<const std::string> names);

  // Evaluates with `slots[k]` bound to names[k]. Throws ExpressionError (with the text)
  // on division or modulo by zero, or a type error such as a string in arithmetic.
  Scalar evaluate(std::span<const Scalar> slots) const;
  bool test(std::span<const Scalar> slots) const { return evaluate(slots).truthy(); }

  // The slots the expression reads, ascending, without repeats.
  const std::vector<std::size_t>& slots_used() const noexcept { return used_; }
  const std::string& text() const noexcept { return text_; }
  // True if the expression has no variables (its value is known after parsing).
  bool is_constant() const noexcept { return used_.empty(); }

  // One instruction of the postfix program; codes are defined in expression.cpp.
  struct Op {
    std::uint8_t code = 0;
    std::uint8_t arity = 0;
    std::uint32_t operand = 0;  // slot, constant index or jump target
    std::uint32_t position = 0; // character offset in text(), for error messages
  };

 private:
  std::string text_;
  std::vector<std::size_t> used_;
  std::vector<Op> program_;
  std::vector<Scalar> constants_;
  std::size_t max_stack_ = 0;
};

// Evaluates a value-list expression: "[1, 2, 4]", "range(1, 33, 2)", "(1, 2)",
// "[32*i for i in range(1, 32)]", "[2**i for i in range(6) if i != 3]", "['a', 'b']",
// "list(range(...))", or a single scalar. Throws ExpressionError.
std::vector<Value> evaluate_list(std::string_view text);

// Evaluates an expression once with named values (launch geometry, sizes); allocates.
Value evaluate_once(std::string_view text, std::span<const std::pair<std::string, Value>> variables);

}  // namespace steer::expr
