#include "steer/value.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <gtest/gtest.h>
#include <limits>
#include <string>
#include <vector>

#include "expression/expression.hpp"
#include "steer/error.hpp"

namespace {

using steer::Value;
using steer::ValueType;

// The message of the steer::Error that `f` throws, or "" if it throws none.
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const steer::Error& e) {
    return e.what();
  }
  return "";
}

TEST(ValueType, NamesEachType) {
  EXPECT_STREQ(to_string(ValueType::Int), "int");
  EXPECT_STREQ(to_string(ValueType::Float), "float");
  EXPECT_STREQ(to_string(ValueType::Bool), "bool");
  EXPECT_STREQ(to_string(ValueType::String), "string");
}

TEST(ValueAccessors, IntAcceptsIntsBoolsAndIntegralFloats) {
  EXPECT_EQ(Value(32).as_int(), 32);
  EXPECT_EQ(Value(true).as_int(), 1);
  EXPECT_EQ(Value(2.0).as_int(), 2);
  EXPECT_EQ(Value(-3.0).as_int(), -3);
  EXPECT_EQ(error_of([] { Value(2.5).as_int(); }), "expected an integer, got float 2.5");
  EXPECT_EQ(error_of([] { Value(1e300).as_int(); }), "expected an integer, got float 1e+300");
  EXPECT_EQ(error_of([] { Value("abc").as_int(); }), "expected an integer, got string 'abc'");
}

TEST(ValueAccessors, DoubleAndBoolAcceptAnyNumber) {
  EXPECT_EQ(Value(3).as_double(), 3.0);
  EXPECT_EQ(Value(0.5).as_double(), 0.5);
  EXPECT_EQ(Value(true).as_double(), 1.0);
  EXPECT_TRUE(Value(0.5).as_bool());
  EXPECT_FALSE(Value(0).as_bool());
  EXPECT_TRUE(Value(true).as_bool());
  EXPECT_EQ(error_of([] { Value("x").as_double(); }), "expected a number, got string 'x'");
  EXPECT_EQ(error_of([] { Value("x").as_bool(); }), "expected a number or bool, got string 'x'");
}

TEST(ValueAccessors, StringOnlyForStrings) {
  EXPECT_EQ(Value("abc").as_string(), "abc");
  EXPECT_EQ(error_of([] { Value(32).as_string(); }), "expected a string, got int 32");
}

TEST(ValueToString, IsAPreprocessorAndCsvToken) {
  EXPECT_EQ(Value(32).to_string(), "32");
  EXPECT_EQ(Value(-5).to_string(), "-5");
  EXPECT_EQ(Value(true).to_string(), "1");
  EXPECT_EQ(Value(false).to_string(), "0");
  EXPECT_EQ(Value("abc").to_string(), "abc");
}

TEST(ValueToString, FloatsAreShortestRoundTripAndStayFloats) {
  EXPECT_EQ(Value(0.5).to_string(), "0.5");
  EXPECT_EQ(Value(0.1).to_string(), "0.1");
  EXPECT_EQ(Value(2.0).to_string(), "2.0");
  EXPECT_EQ(Value(-0.0).to_string(), "-0.0");
  EXPECT_EQ(Value(1e-05).to_string(), "1e-05");
  EXPECT_EQ(Value(1e20).to_string(), "1e+20");
  EXPECT_EQ(Value(1.0 / 3).to_string(), "0.3333333333333333");
}

TEST(ValueToString, FloatTextReadsBackAsTheSameFloat) {
  for (double x : {0.1, 2.0, 1e-05, 1e20, 1.0 / 3, -7.25, 123456789.0}) {
    std::vector<Value> back = steer::expr::evaluate_list(Value(x).to_string());
    ASSERT_EQ(back.size(), 1u);
    EXPECT_TRUE(back[0].is_float()) << x;
    EXPECT_EQ(back[0].as_double(), x);
  }
}

TEST(ValueEquality, NumbersCompareByValueAsInPython) {
  EXPECT_EQ(Value(2), Value(2.0));
  EXPECT_EQ(Value(true), Value(1));
  EXPECT_EQ(Value(false), Value(0.0));
  EXPECT_NE(Value(2), Value(3));
  EXPECT_NE(Value(2), Value(2.5));
}

TEST(ValueEquality, IntAndFloatCompareExactly) {
  // 2^53 + 1 is not a double: converting the int to double would call these equal.
  std::int64_t big = (std::int64_t{1} << 53) + 1;
  EXPECT_NE(Value(big), Value(9007199254740992.0));
  EXPECT_TRUE(Value(9007199254740992.0) < Value(big));
}

TEST(ValueEquality, StringsEqualOnlyStrings) {
  EXPECT_EQ(Value("a"), Value(std::string("a")));
  EXPECT_NE(Value("a"), Value("b"));
  EXPECT_NE(Value("2"), Value(2));
}

TEST(ValueEquality, NanEqualsItselfSoEqualityIsAnEquivalence) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(Value(nan), Value(nan));
  EXPECT_NE(Value(nan), Value(0.0));
}

TEST(ValueOrder, NumbersByValueThenStrings) {
  double inf = std::numeric_limits<double>::infinity();
  double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<Value> values = {Value("b"), Value(3), Value(nan), Value(1.5), Value(true), Value("a"), Value(-1), Value(inf)};
  std::sort(values.begin(), values.end());
  std::vector<std::string> text;
  for (const Value& v : values) text.push_back(v.to_string());
  EXPECT_EQ(text, (std::vector<std::string>{"-1", "1", "1.5", "3", "inf", "nan", "a", "b"}));
}

TEST(ValueOrder, EqualValuesAreNotOrdered) {
  EXPECT_FALSE(Value(2) < Value(2.0));
  EXPECT_FALSE(Value(2.0) < Value(2));
  EXPECT_FALSE(Value(true) < Value(1));
  EXPECT_TRUE(Value(1) < Value(1.5));
  EXPECT_TRUE(Value(1e300) < Value(""));
}

}  // namespace
