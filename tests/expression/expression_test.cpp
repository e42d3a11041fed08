#include "expression/expression.hpp"

#include <atomic>
#include <cstdlib>
#include <gtest/gtest.h>
#include <new>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "steer/error.hpp"

// Counts global allocations, to check that Expression::evaluate makes none. Replacing
// operator new applies to the whole test program; it only counts. Not inlined, so that
// GCC does not see free() meet operator new and warn of a mismatch.
namespace {
std::atomic<std::size_t> g_allocations{0};
}  // namespace

[[gnu::noinline]] void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

using steer::ExpressionError;
using steer::Value;
using steer::expr::evaluate_list;
using steer::expr::evaluate_once;
using steer::expr::Expression;
using steer::expr::Scalar;

using Variables = std::vector<std::pair<std::string, Value>>;

// "type value" of the result, so that a test also pins the type: "int 3", "float 3.0".
std::string run(std::string_view text, const Variables& variables = {}) {
  Value v = evaluate_once(text, variables);
  return std::string(to_string(v.type())) + " " + v.to_string();
}

// The ExpressionError that evaluating `text` throws; fails the test if none is thrown.
ExpressionError error_of(std::string_view text, const Variables& variables = {}) {
  try {
    evaluate_once(text, variables);
  } catch (const ExpressionError& e) {
    return e;
  }
  ADD_FAILURE() << "no error from: " << text;
  return ExpressionError("", "");
}

ExpressionError list_error_of(std::string_view text) {
  try {
    evaluate_list(text);
  } catch (const ExpressionError& e) {
    return e;
  }
  ADD_FAILURE() << "no error from: " << text;
  return ExpressionError("", "");
}

std::vector<std::string> list(std::string_view text) {
  std::vector<std::string> out;
  for (const Value& v : evaluate_list(text)) out.push_back(std::string(to_string(v.type())) + " " + v.to_string());
  return out;
}

std::vector<std::int64_t> ints(std::string_view text) {
  std::vector<std::int64_t> out;
  for (const Value& v : evaluate_list(text)) {
    EXPECT_TRUE(v.is_int()) << v.to_string();
    out.push_back(v.as_int());
  }
  return out;
}

// ---------------------------------------------------------------------------------------

TEST(ExpressionPrecedence, FollowsPython) {
  EXPECT_EQ(run("2 + 3 * 4 ** 2"), "int 50");
  EXPECT_EQ(run("(2 + 3) * 4"), "int 20");
  EXPECT_EQ(run("10 - 4 - 3"), "int 3");       // left-associative
  EXPECT_EQ(run("2 ** 3 ** 2"), "int 512");    // right-associative
  EXPECT_EQ(run("-2**2"), "int -4");           // ** binds tighter than unary minus on its left
  EXPECT_EQ(run("(-2)**2"), "int 4");
  EXPECT_EQ(run("2**-1"), "float 0.5");        // ... but its right operand may be unary
  EXPECT_EQ(run("- -3"), "int 3");
  EXPECT_EQ(run("1 or 0 and 0"), "int 1");     // and binds tighter than or
  EXPECT_EQ(run("not 1 or 1"), "int 1");       // (not 1) or 1
  EXPECT_EQ(run("1 + 2 if 0 else 3 + 4"), "int 7");
}

TEST(ExpressionPrecedence, NotIsBelowComparisons) {
  Variables v = {{"a", 2}, {"b", 1}};
  EXPECT_EQ(run("not a == b", v), "bool 1");   // not (a == b)
  EXPECT_EQ(run("(not a) == b", v), "bool 0");
}

TEST(ExpressionPrecedence, BangBindsLikeInC) {
  Variables v = {{"a", 2}, {"b", 1}};
  EXPECT_EQ(run("!a == b", v), "bool 0");      // (!a) == b
  EXPECT_EQ(run("!(a == b)", v), "bool 1");
  EXPECT_EQ(run("a == 2 && b == 1", v), "bool 1");
  EXPECT_EQ(run("a == 0 || b == 0", v), "bool 0");
}

TEST(ExpressionComparisons, ChainAsInPython) {
  EXPECT_EQ(run("1 < 2 < 3"), "bool 1");
  EXPECT_EQ(run("1 < 3 < 2"), "bool 0");
  EXPECT_EQ(run("3 > 2 == 2"), "bool 1");      // 3 > 2 and 2 == 2, not (3 > 2) == 2
  for (int x : {0, 1, 4, 5}) {
    bool expected = 1 <= x && x < 5;
    EXPECT_EQ(evaluate_once("1 <= X < 5", Variables{{"X", x}}).as_bool(), expected) << x;
  }
}

TEST(ExpressionComparisons, NumbersCompareAcrossTypes) {
  EXPECT_EQ(run("2 == 2.0"), "bool 1");
  EXPECT_EQ(run("True == 1"), "bool 1");
  EXPECT_EQ(run("1 < 1.5 <= 2"), "bool 1");
  EXPECT_EQ(run("2 != 2"), "bool 0");
}

TEST(ExpressionArithmetic, TrueDivisionGivesFloats) {
  EXPECT_EQ(run("7 / 2"), "float 3.5");
  EXPECT_EQ(run("4 / 2"), "float 2.0");
  EXPECT_EQ(run("1 + 2.5"), "float 3.5");
  EXPECT_EQ(run("3 * 2"), "int 6");
}

TEST(ExpressionArithmetic, FloorDivisionAndModuloFollowTheDivisorSign) {
  EXPECT_EQ(run("7 // 2"), "int 3");
  EXPECT_EQ(run("-7 // 2"), "int -4");
  EXPECT_EQ(run("7 // -2"), "int -4");
  EXPECT_EQ(run("-7 % 2"), "int 1");
  EXPECT_EQ(run("7 % -2"), "int -1");
  EXPECT_EQ(run("-7 % -2"), "int -1");
  EXPECT_EQ(run("-7.5 // 2"), "float -4.0");
  EXPECT_EQ(run("-7.5 % 2"), "float 0.5");
  EXPECT_EQ(run("7 % -2.0"), "float -1.0");
}

TEST(ExpressionArithmetic, Powers) {
  EXPECT_EQ(run("2 ** 10"), "int 1024");
  EXPECT_EQ(run("2 ** -2"), "float 0.25");
  EXPECT_EQ(run("2.0 ** 2"), "float 4.0");
  EXPECT_EQ(run("pow(3, 2)"), "int 9");
}

TEST(ExpressionArithmetic, BoolsAreZeroAndOne) {
  EXPECT_EQ(run("True + True"), "int 2");
  EXPECT_EQ(run("-True"), "int -1");
  EXPECT_EQ(run("true * 5"), "int 5");
  EXPECT_EQ(run("false"), "bool 0");
}

TEST(ExpressionArithmetic, IntsWrapAroundOnOverflow) {
  EXPECT_EQ(run("9223372036854775807 + 1"), "int -9223372036854775808");
  EXPECT_EQ(run("2 ** 64"), "int 0");
}

TEST(ExpressionFunctions, MinMaxAreNaryAndKeepTheOperandType) {
  EXPECT_EQ(run("min(3, 1, 2)"), "int 1");
  EXPECT_EQ(run("max(3, 1, 2, 0)"), "int 3");
  EXPECT_EQ(run("max(3, 1.5)"), "int 3");
  EXPECT_EQ(run("min(2, 2.0)"), "int 2");   // the first of equal values, as in Python
  EXPECT_EQ(run("min(7)"), "int 7");
}

TEST(ExpressionFunctions, Rounding) {
  EXPECT_EQ(run("int(2.7)"), "int 2");
  EXPECT_EQ(run("int(-2.7)"), "int -2");    // toward zero
  EXPECT_EQ(run("int(True)"), "int 1");
  EXPECT_EQ(run("ceil(2.1)"), "int 3");
  EXPECT_EQ(run("floor(-2.1)"), "int -3");
  EXPECT_EQ(run("float(3)"), "float 3.0");
  EXPECT_EQ(run("abs(-3)"), "int 3");
  EXPECT_EQ(run("abs(-2.5)"), "float 2.5");
}

TEST(ExpressionFunctions, CeilingDivision) {
  EXPECT_EQ(run("cdiv(10, 4)"), "int 3");
  EXPECT_EQ(run("cdiv(8, 4)"), "int 2");
  EXPECT_EQ(run("cdiv(-10, 4)"), "int -2");
  EXPECT_EQ(run("cdiv(0, 4)"), "int 0");
}

TEST(ExpressionFunctions, SquareRootAndLogarithm) {
  EXPECT_EQ(run("sqrt(16)"), "float 4.0");
  EXPECT_EQ(run("log2(1024)"), "float 10.0");
}

TEST(ExpressionTernary, PicksOneBranchLazily) {
  EXPECT_EQ(run("X if X > 0 else -X", {{"X", -3}}), "int 3");
  EXPECT_EQ(run("'big' if X > 10 else 'small'", {{"X", 30}}), "string big");
  EXPECT_EQ(run("1 if X == 0 else 10 // X", {{"X", 0}}), "int 1");
  EXPECT_EQ(run("1 if X else 2 if Y else 3", {{"X", 0}, {"Y", 0}}), "int 3");  // right-associative
}

TEST(ExpressionShortCircuit, SkipsTheRightOperand) {
  EXPECT_EQ(run("X != 0 and 10 / X > 1", {{"X", 0}}), "bool 0");
  EXPECT_EQ(run("X == 0 or 10 / X > 1", {{"X", 0}}), "bool 1");
  EXPECT_EQ(run("X != 0 && 10 % X == 0", {{"X", 0}}), "bool 0");
  EXPECT_EQ(run("X > 0 or 1 / 0", {{"X", 1}}), "bool 1");  // a failing constant is not folded
}

TEST(ExpressionShortCircuit, GivesAnOperandAsInPython) {
  EXPECT_EQ(run("0 and 5"), "int 0");
  EXPECT_EQ(run("3 and 5"), "int 5");
  EXPECT_EQ(run("0 or 'a'"), "string a");
  EXPECT_EQ(run("'' or 2.5"), "float 2.5");  // the empty string is falsy
}

TEST(ExpressionStrings, CompareByInternedId) {
  Variables v = {{"LAYOUT", "row"}};
  EXPECT_EQ(run("LAYOUT == 'row'", v), "bool 1");
  EXPECT_EQ(run("LAYOUT != \"col\"", v), "bool 1");
  EXPECT_EQ(run("LAYOUT == 1", v), "bool 0");     // a string never equals a number
  EXPECT_EQ(run("'it\\'s' == \"it's\""), "bool 1");

  std::int64_t id = steer::expr::intern("tiled");
  EXPECT_EQ(steer::expr::intern(std::string("til") + "ed"), id);
  EXPECT_NE(steer::expr::intern("Tiled"), id);
  EXPECT_EQ(steer::expr::interned(id), "tiled");
  EXPECT_EQ(steer::expr::intern(""), 0);
}

TEST(ExpressionStrings, InterningIsThreadSafe) {
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 2000; ++k) {
        std::string text = "thread-string-" + std::to_string((k * 7 + t) % 300);
        std::int64_t id = steer::expr::intern(text);
        if (steer::expr::interned(id) != text) ++mismatches;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(steer::expr::interned(steer::expr::intern("thread-string-5")), "thread-string-5");
}

TEST(ExpressionProgram, ReportsTheSlotsItReads) {
  std::vector<std::string> names = {"A", "B", "C"};
  Expression e = Expression::parse("C + A * A", names);
  EXPECT_EQ(e.slots_used(), (std::vector<std::size_t>{0, 2}));
  EXPECT_FALSE(e.is_constant());
  EXPECT_EQ(e.text(), "C + A * A");
  std::vector<Scalar> slots = {Scalar::of_int(3), Scalar::of_int(100), Scalar::of_int(1)};
  EXPECT_EQ(e.evaluate(slots).i, 10);

  Expression constant = Expression::parse("2 * 3 + min(4, 1)", names);
  EXPECT_TRUE(constant.is_constant());
  EXPECT_EQ(constant.evaluate({}).i, 7);
}

TEST(ExpressionProgram, TestIsTruthiness) {
  std::vector<std::string> names = {"TILE", "VEC"};
  Expression e = Expression::parse("TILE % VEC == 0 and TILE * VEC <= 64", names);
  std::vector<Scalar> ok = {Scalar::of_int(16), Scalar::of_int(4)};
  std::vector<Scalar> too_big = {Scalar::of_int(32), Scalar::of_int(4)};
  std::vector<Scalar> not_multiple = {Scalar::of_int(6), Scalar::of_int(4)};
  EXPECT_TRUE(e.test(ok));
  EXPECT_FALSE(e.test(too_big));
  EXPECT_FALSE(e.test(not_multiple));
}

TEST(ExpressionProgram, EvaluateDoesNotAllocate) {
  std::vector<std::string> names = {"TILE", "VEC", "LAYOUT", "SCALE"};
  Expression e = Expression::parse(
      "TILE % VEC == 0 and 1 <= TILE * VEC <= 64 and (min(TILE, VEC, 8) > 1 or LAYOUT == 'row') "
      "and cdiv(1000, TILE) ** 2 / SCALE > 0.5 if SCALE != 0 else not LAYOUT != 'col'",
      names);
  std::vector<Scalar> slots = {Scalar::of_int(16), Scalar::of_int(4), steer::expr::to_scalar(Value("row")),
                               Scalar::of_float(2.5)};
  ASSERT_TRUE(e.test(slots));
  std::size_t before = g_allocations.load();
  int accepted = 0;
  for (int k = 0; k < 1000; ++k) {
    slots[0] = Scalar::of_int(4 << (k % 4));  // TILE 4, 8, 16, 32: only 32 * 4 is above 64
    accepted += e.test(slots) ? 1 : 0;
  }
  EXPECT_EQ(g_allocations.load(), before);
  EXPECT_EQ(accepted, 750);

  Expression copy = e;  // the counter does see allocations
  EXPECT_GT(g_allocations.load(), before);
}

TEST(ExpressionErrors, UnknownNameWithItsPosition) {
  std::vector<std::string> names = {"TILE", "VEC"};
  try {
    Expression::parse("TILE % VEC == 0 and FOO > 1", names);
    FAIL() << "no error";
  } catch (const ExpressionError& e) {
    EXPECT_STREQ(e.what(), "unknown parameter 'FOO'");
    EXPECT_EQ(e.expression(), "TILE % VEC == 0 and FOO > 1");
    EXPECT_EQ(e.position(), 20u);
    EXPECT_EQ(e.detailed(),
              "unknown parameter 'FOO'\n"
              "  TILE % VEC == 0 and FOO > 1\n"
              "                      ^");
  }
}

TEST(ExpressionErrors, UnknownFunctionAndWrongArgumentCount) {
  ExpressionError unknown = error_of("1 + foo(2)");
  EXPECT_STREQ(unknown.what(), "unknown function 'foo'");
  EXPECT_EQ(unknown.position(), 4u);
  EXPECT_STREQ(error_of("abs(1, 2)").what(), "abs() takes 1 argument, got 2");
  EXPECT_STREQ(error_of("cdiv(1)").what(), "cdiv() takes 2 arguments, got 1");
  EXPECT_STREQ(error_of("min()").what(), "min() takes at least 1 argument, got 0");
}

TEST(ExpressionErrors, DivisionByZeroAtTheOperator) {
  Variables v = {{"A", 7}, {"B", 0}};
  for (std::string op : {"/", "//", "%"}) {
    ExpressionError e = error_of("A " + op + " B", v);
    EXPECT_STREQ(e.what(), "division by zero") << op;
    EXPECT_EQ(e.position(), 2u) << op;
  }
  EXPECT_STREQ(error_of("A / 0.0", v).what(), "division by zero");
  EXPECT_STREQ(error_of("cdiv(A, B)", v).what(), "division by zero");
  EXPECT_STREQ(error_of("0 ** -1").what(), "zero cannot be raised to a negative power");
}

TEST(ExpressionErrors, ConstantDivisionByZeroFailsWhenEvaluated) {
  Expression e = Expression::parse("1 / 0", {});
  EXPECT_THROW(e.evaluate({}), ExpressionError);
}

TEST(ExpressionErrors, SyntaxErrorsNameWhatWasExpected) {
  ExpressionError missing_operand = error_of("2 +");
  EXPECT_STREQ(missing_operand.what(), "expected a value, a name or '(', found the end of the expression");
  EXPECT_EQ(missing_operand.position(), 3u);

  ExpressionError extra = error_of("1 2");
  EXPECT_STREQ(extra.what(), "expected an operator or the end of the expression, found '2'");
  EXPECT_EQ(extra.position(), 2u);

  EXPECT_STREQ(error_of("(1 + 2").what(), "expected ')', found the end of the expression");
  EXPECT_STREQ(error_of("1 if 2").what(), "expected 'else' after the condition of 'if', found the end of the expression");
  EXPECT_STREQ(error_of("min(1 2)").what(), "expected ',' or ')' in the arguments of min(), found '2'");
  EXPECT_STREQ(error_of("1 + * 2").what(), "expected a value, a name or '(', found '*'");
  EXPECT_STREQ(error_of("and").what(), "expected a value, a name or '(', found 'and'");
  EXPECT_STREQ(error_of("").what(), "empty expression");
  EXPECT_STREQ(error_of("A = 1").what(), "'=' is not a comparison; write '==' to test equality");
  EXPECT_STREQ(error_of("2 & 1").what(), "unexpected character '&'");
  EXPECT_STREQ(error_of("3x").what(), "invalid number '3x'");
  EXPECT_STREQ(error_of("012").what(), "leading zeros are not allowed in the integer '012'");
  EXPECT_STREQ(error_of("99999999999999999999").what(), "the integer 99999999999999999999 does not fit in 64 bits");

  ExpressionError unterminated = error_of("1 == 'abc");
  EXPECT_STREQ(unterminated.what(), "unterminated string");
  EXPECT_EQ(unterminated.position(), 5u);
}

TEST(ExpressionErrors, StringsInArithmeticNameTheOperator) {
  Variables v = {{"S", "row"}};
  ExpressionError plus = error_of("1 + S + 1", v);
  EXPECT_STREQ(plus.what(), "operator '+' needs numbers, got int and string");
  EXPECT_EQ(plus.position(), 2u);
  EXPECT_STREQ(error_of("S < 'b'", v).what(), "operator '<' needs numbers, got string and string (strings support only == and !=)");
  EXPECT_STREQ(error_of("-S", v).what(), "operator '-' needs a number, got string");
  EXPECT_STREQ(error_of("abs(S)", v).what(), "abs() needs a number, got string");
  EXPECT_STREQ(error_of("max(1, S)", v).what(), "max() needs numbers, got int and string");
}

TEST(ExpressionErrors, DomainErrors) {
  EXPECT_STREQ(error_of("sqrt(-1)").what(), "sqrt() of a negative number (-1)");
  EXPECT_STREQ(error_of("log2(0)").what(), "log2() of a number that is not positive (0)");
  EXPECT_STREQ(error_of("cdiv(1.5, 2)").what(), "cdiv() needs integers, got float and int");
  EXPECT_STREQ(error_of("int(1e300)").what(), "int() of 1e+300 does not fit in a 64-bit integer");
  EXPECT_STREQ(error_of("(-8) ** 0.5").what(), "a negative number cannot be raised to a fractional power");
}

TEST(ExpressionErrors, LimitsOfSize) {
  std::string nested = std::string(200, '(') + "1" + std::string(200, ')');
  EXPECT_STREQ(error_of(nested).what(), "expression nested more than 100 deep");

  std::string deep = "X";
  for (int k = 0; k < 70; ++k) deep = "X + (" + deep + ")";
  EXPECT_STREQ(error_of(deep, {{"X", 1}}).what(), "expression too large: it needs 71 stack entries, the limit is 64");

  // Each chain compiles its middle operand twice: nesting chains doubles the program.
  std::string chains = "X";
  for (int k = 0; k < 40; ++k) chains = "X < (" + chains + ") < X";
  EXPECT_STREQ(error_of(chains, {{"X", 1}}).what(), "expression too large: more than 4096 instructions");

  // Flat chains far longer than any program: an error, not a stack overflow while compiling.
  const auto chain = [](const std::string& term, const std::string& joint, int terms) {
    std::string text = term;
    for (int k = 1; k < terms; ++k) text += joint + term;
    return text;
  };
  const char* long_chain = "expression too large: a chain of more than 4096 operations";
  EXPECT_STREQ(error_of(chain("X", " + ", 33000), {{"X", 1}}).what(), long_chain);
  EXPECT_STREQ(error_of(chain("X > 0", " and ", 33000), {{"X", 1}}).what(), long_chain);
  EXPECT_STREQ(error_of("min(" + chain("X", ", ", 40000) + ")", {{"X", 1}}).what(), long_chain);
  EXPECT_STREQ(error_of(chain("1", " + ", 33000)).what(), long_chain) << "constant chains too";
}

TEST(ExpressionErrors, TooFewValues) {
  std::vector<std::string> names = {"A", "B"};
  Expression e = Expression::parse("B + 1", names);
  std::vector<Scalar> one = {Scalar::of_int(1)};
  EXPECT_THROW(e.evaluate(one), ExpressionError);
}

TEST(ExpressionError, DetailedPutsACaretUnderThePosition) {
  EXPECT_EQ(ExpressionError("bad", "a + b", 4).detailed(), "bad\n  a + b\n      ^");
  EXPECT_EQ(ExpressionError("bad", "a +", 3).detailed(), "bad\n  a +\n     ^");   // at the end
  EXPECT_EQ(ExpressionError("bad", "a + b").detailed(), "bad\n  a + b");            // position unknown
  EXPECT_EQ(ExpressionError("bad", "").detailed(), "bad");
  EXPECT_EQ(ExpressionError("bad", "a and\n  b + c", 10).detailed(), "bad\n    b + c\n      ^");  // its line only
}

TEST(ExpressionEvaluateOnce, UsesNamedValues) {
  EXPECT_EQ(run("cdiv(N, TILE) * TILE", {{"N", 1000}, {"TILE", 32}}), "int 1024");
  EXPECT_EQ(run("N / 2", {{"N", 5}}), "float 2.5");
  EXPECT_EQ(run("SCALE * 2", {{"SCALE", 0.25}}), "float 0.5");
}

// ---------------------------------------------------------------------------------------

TEST(ExpressionList, Literals) {
  EXPECT_EQ(ints("[1, 2, 4]"), (std::vector<std::int64_t>{1, 2, 4}));
  EXPECT_EQ(ints("[1, 2, 4,]"), (std::vector<std::int64_t>{1, 2, 4}));
  EXPECT_EQ(ints("(8, 16)"), (std::vector<std::int64_t>{8, 16}));
  EXPECT_EQ(ints("1, 2, 4"), (std::vector<std::int64_t>{1, 2, 4}));
  EXPECT_EQ(ints("[2 * 3, 10 // 3, 2 ** 5]"), (std::vector<std::int64_t>{6, 3, 32}));
  EXPECT_TRUE(evaluate_list("[]").empty());
  EXPECT_TRUE(evaluate_list("()").empty());
  EXPECT_EQ(list("['a', \"b\"]"), (std::vector<std::string>{"string a", "string b"}));
  EXPECT_EQ(list("[True, False]"), (std::vector<std::string>{"bool 1", "bool 0"}));
  EXPECT_EQ(list("[0.5, 1e-05, 2.0]"), (std::vector<std::string>{"float 0.5", "float 1e-05", "float 2.0"}));
}

TEST(ExpressionList, ABareScalarIsOneValue) {
  EXPECT_EQ(ints("32"), (std::vector<std::int64_t>{32}));
  EXPECT_EQ(ints("2 ** 5"), (std::vector<std::int64_t>{32}));
  EXPECT_EQ(ints("(1 + 2) * 3"), (std::vector<std::int64_t>{9}));
  EXPECT_EQ(ints("(7)"), (std::vector<std::int64_t>{7}));
  EXPECT_EQ(list("'abc'"), (std::vector<std::string>{"string abc"}));
}

TEST(ExpressionList, Ranges) {
  EXPECT_EQ(ints("range(4)"), (std::vector<std::int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(ints("range(1, 33, 8)"), (std::vector<std::int64_t>{1, 9, 17, 25}));
  EXPECT_EQ(ints("range(10, 0, -3)"), (std::vector<std::int64_t>{10, 7, 4, 1}));
  EXPECT_EQ(ints("range(-2, 2)"), (std::vector<std::int64_t>{-2, -1, 0, 1}));
  EXPECT_TRUE(evaluate_list("range(5, 1)").empty());
  EXPECT_EQ(ints("list(range(3))"), (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(ints("range(2 ** 2)"), (std::vector<std::int64_t>{0, 1, 2, 3}));

  std::vector<std::int64_t> one_to_32 = ints("range(1, 33)");
  ASSERT_EQ(one_to_32.size(), 32u);
  EXPECT_EQ(one_to_32.front(), 1);
  EXPECT_EQ(one_to_32.back(), 32);
}

TEST(ExpressionList, Comprehensions) {
  std::vector<std::int64_t> multiples = ints("[32*i for i in range(1, 32)]");
  ASSERT_EQ(multiples.size(), 31u);
  for (std::size_t k = 0; k < multiples.size(); ++k) EXPECT_EQ(multiples[k], 32 * static_cast<std::int64_t>(k + 1));
  EXPECT_EQ(multiples.back(), 992);

  EXPECT_EQ(ints("[2**i for i in range(6) if i != 3]"), (std::vector<std::int64_t>{1, 2, 4, 16, 32}));
  EXPECT_EQ(ints("[x for x in (8, 16, 32) if x > 8]"), (std::vector<std::int64_t>{16, 32}));
  EXPECT_EQ(ints("[x + 1 for x in [1, 2]]"), (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(ints("[i if i > 2 else 0 for i in range(5)]"), (std::vector<std::int64_t>{0, 0, 0, 3, 4}));
  EXPECT_EQ(ints("[x * 2 for x in list(range(3))]"), (std::vector<std::int64_t>{0, 2, 4}));
  EXPECT_EQ(ints("[x for x in [y * y for y in range(4)] if x % 2 == 0]"), (std::vector<std::int64_t>{0, 4}));
  EXPECT_EQ(list("[i / 2 for i in range(1, 3)]"), (std::vector<std::string>{"float 0.5", "float 1.0"}));
  EXPECT_EQ(list("[s for s in ['a', 'b'] if s != 'a']"), (std::vector<std::string>{"string b"}));
}

TEST(ExpressionList, Errors) {
  EXPECT_STREQ(list_error_of("").what(), "empty value list");
  EXPECT_STREQ(list_error_of("range(1.5)").what(), "range() needs integers, got float");
  EXPECT_STREQ(list_error_of("range()").what(), "range() takes 1 to 3 arguments, got 0");
  EXPECT_STREQ(list_error_of("range(1, 10, 0)").what(), "range() step must not be zero");
  EXPECT_STREQ(list_error_of("range(10 ** 9)").what(),
               "range() gives 1000000000 values; a value list may have at most 1000000");
  EXPECT_STREQ(list_error_of("[1, 2").what(), "expected ',' or ']', found the end of the expression");
  EXPECT_STREQ(list_error_of("[1, 2] + [3]").what(), "expected an operator or the end of the expression, found '+'");
  EXPECT_STREQ(list_error_of("[x for x in 5]").what(), "expected a list, a tuple, range(...) or list(...), found '5'");
  EXPECT_STREQ(list_error_of("[x for 1 in range(3)]").what(), "expected a variable name after 'for', found '1'");

  ExpressionError unknown = list_error_of("[i for j in range(3)]");
  EXPECT_STREQ(unknown.what(), "unknown parameter 'i'");
  EXPECT_EQ(unknown.position(), 1u);
  EXPECT_STREQ(list_error_of("[1 // 0]").what(), "division by zero");
  ExpressionError late = list_error_of("[1, 2, 3 // 0]");
  EXPECT_EQ(late.expression(), "[1, 2, 3 // 0]") << "the whole list, for the caret";
  EXPECT_EQ(late.position(), 9u);
}

TEST(ExpressionList, LongLiteralListsAreReadInLinearTime) {
  // 200,000 elements: each element once, not the whole text once per element (minutes).
  std::string text = "[0";
  for (int k = 1; k < 200000; ++k) text += ", " + std::to_string(k % 2 == 0 ? k : -k);
  text += "]";
  const std::vector<Value> values = evaluate_list(text);
  ASSERT_EQ(values.size(), 200000u);
  EXPECT_EQ(values[199999].to_string(), "-199999");
  EXPECT_EQ(values[199998].to_string(), "199998");
}

}  // namespace
