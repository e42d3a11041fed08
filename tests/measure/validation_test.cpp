#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "measure/validation.hpp"
#include "steer/error.hpp"

namespace steer {
namespace {

template <typename T>
std::vector<std::byte> bytes_of(const std::vector<T>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

ValidationResult check_floats(const std::vector<float>& actual, const std::vector<float>& expected, double abs,
                              double rel) {
  return validate_output(ElementType::F32, bytes_of(actual), bytes_of(expected), abs, rel);
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(Validation, IdenticalBuffersPass) {
  const ValidationResult result = check_floats({1, 2, 3}, {1, 2, 3}, 0, 0);
  EXPECT_TRUE(result.ok);
  EXPECT_EQ(result.elements, 3u);
  EXPECT_EQ(result.mismatches, 0u);
  EXPECT_EQ(result.max_abs_error, 0);
  EXPECT_FALSE(result.first_mismatch);
  EXPECT_TRUE(result.message.empty());
}

TEST(Validation, AbsoluteToleranceBoundaryIsInclusive) {
  // 0.25 and 0.5 are exact in binary, so the boundary is exact too.
  EXPECT_TRUE(check_floats({1.25f}, {1.0f}, 0.25, 0).ok);
  EXPECT_FALSE(check_floats({1.2500001f}, {1.0f}, 0.25, 0).ok);
  EXPECT_TRUE(check_floats({0.75f}, {1.0f}, 0.25, 0).ok);
}

TEST(Validation, RelativeToleranceScalesWithTheExpectedValue) {
  EXPECT_TRUE(check_floats({104.0f}, {100.0f}, 0, 0.04).ok);
  EXPECT_FALSE(check_floats({104.5f}, {100.0f}, 0, 0.04).ok);
  EXPECT_TRUE(check_floats({-104.0f}, {-100.0f}, 0, 0.04).ok);  // |expected|
  // abs and rel add up: 1 + 0.5 * 2 = 2.
  EXPECT_TRUE(check_floats({4.0f}, {2.0f}, 1, 0.5).ok);
  EXPECT_FALSE(check_floats({4.5f}, {2.0f}, 1, 0.5).ok);
}

TEST(Validation, NaNNeverPasses) {
  EXPECT_FALSE(check_floats({kNaN}, {1.0f}, 1e9, 1e9).ok);
  EXPECT_FALSE(check_floats({1.0f}, {kNaN}, 1e9, 1e9).ok);
  EXPECT_FALSE(check_floats({kNaN}, {kNaN}, 1e9, 1e9).ok);
}

TEST(Validation, NaNIsReportedButLeftOutOfTheMaximumError) {
  const ValidationResult result = check_floats({kNaN, 3.0f}, {1.0f, 1.0f}, 0, 0);
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.mismatches, 2u);
  ASSERT_TRUE(result.first_mismatch);
  EXPECT_EQ(result.first_mismatch->index, 0u);
  EXPECT_TRUE(std::isnan(result.first_mismatch->actual));
  EXPECT_EQ(result.max_abs_error, 2.0);
}

TEST(Validation, EqualInfinitiesPassDifferentOnesDoNot) {
  EXPECT_TRUE(check_floats({kInf, -kInf}, {kInf, -kInf}, 0, 0).ok);
  EXPECT_FALSE(check_floats({kInf}, {-kInf}, 0, 0).ok);
  const ValidationResult result = check_floats({kInf}, {1.0f}, 1e30, 0);
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.max_abs_error, std::numeric_limits<double>::infinity());
}

TEST(Validation, ReportsTheFirstMismatchTheCountAndTheMaximumError) {
  // Spread over several internal blocks: mismatches at 5000 and 9000.
  std::vector<float> expected(10000, 1.0f), actual = expected;
  actual[9000] = 4.0f;
  actual[5000] = 1.5f;
  const ValidationResult result = check_floats(actual, expected, 0.1, 0);
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.elements, 10000u);
  EXPECT_EQ(result.mismatches, 2u);
  ASSERT_TRUE(result.first_mismatch);
  EXPECT_EQ(result.first_mismatch->index, 5000u);
  EXPECT_EQ(result.first_mismatch->actual, 1.5);
  EXPECT_EQ(result.first_mismatch->expected, 1.0);
  EXPECT_EQ(result.max_abs_error, 3.0);
  EXPECT_NE(result.message.find("2 of 10000"), std::string::npos) << result.message;
  EXPECT_NE(result.message.find("index 5000"), std::string::npos) << result.message;
}

TEST(Validation, LargeOutputsSplitOverThreadsReportLikeOneScan) {
  // Large enough for several threads; mismatches in the later parts, the first one last.
  const std::size_t n = (std::size_t{3} << 22) + 5;
  std::vector<float> expected(n, 2.0f), actual = expected;
  actual[n - 1] = 10.0f;
  actual[n / 2] = kNaN;
  actual[n / 2 + 1] = 3.0f;
  const ValidationResult result = check_floats(actual, expected, 0, 0);
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.elements, n);
  EXPECT_EQ(result.mismatches, 3u);
  ASSERT_TRUE(result.first_mismatch);
  EXPECT_EQ(result.first_mismatch->index, n / 2);
  EXPECT_EQ(result.max_abs_error, 8.0);
}

TEST(Validation, MaximumErrorCountsElementsWithinTolerance) {
  const ValidationResult result = check_floats({1.0f, 2.5f}, {1.0f, 2.0f}, 1, 0);
  EXPECT_TRUE(result.ok);
  EXPECT_EQ(result.max_abs_error, 0.5);
}

TEST(Validation, IntegerTypes) {
  EXPECT_TRUE(validate_output(ElementType::I32, bytes_of<std::int32_t>({-5, 7}), bytes_of<std::int32_t>({-5, 7}), 0, 0).ok);
  const ValidationResult result =
      validate_output(ElementType::U8, bytes_of<std::uint8_t>({0, 255}), bytes_of<std::uint8_t>({0, 250}), 0, 0);
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.max_abs_error, 5.0);
  EXPECT_TRUE(validate_output(ElementType::I64, bytes_of<std::int64_t>({1LL << 60}), bytes_of<std::int64_t>({1LL << 60}),
                              0, 0)
                  .ok);
  EXPECT_TRUE(validate_output(ElementType::F64, bytes_of<double>({1.0 + 1e-12}), bytes_of<double>({1.0}), 1e-9, 0).ok);
}

TEST(Validation, UnalignedBuffersWork) {
  const std::vector<std::byte> expected = bytes_of<float>({1, 2, 3, 4});
  std::vector<std::byte> shifted(expected.size() + 1);
  std::memcpy(shifted.data() + 1, expected.data(), expected.size());
  EXPECT_TRUE(validate_output(ElementType::F32, std::span(shifted).subspan(1), expected, 0, 0).ok);
}

Comparison within_ulps(std::uint64_t ulps) { return Comparison{.kind = Comparison::Kind::Ulps, .ulps = ulps}; }

TEST(Validation, UlpsCountTheRepresentableValuesBetween) {
  const float one = 1.0f, next = std::nextafter(one, 2.0f), third = std::nextafter(std::nextafter(next, 2.0f), 2.0f);
  const auto check = [](float actual, float expected, std::uint64_t ulps) {
    return validate_output(ElementType::F32, bytes_of<float>({actual}), bytes_of<float>({expected}), within_ulps(ulps)).ok;
  };
  EXPECT_TRUE(check(one, one, 0));
  EXPECT_FALSE(check(next, one, 0));
  EXPECT_TRUE(check(next, one, 1));
  EXPECT_FALSE(check(third, one, 2));
  EXPECT_TRUE(check(third, one, 3));
  // Across zero: the smallest positive and negative denormals are two apart, +0 and -0 none.
  const float tiny = std::numeric_limits<float>::denorm_min();
  EXPECT_TRUE(check(tiny, -tiny, 2));
  EXPECT_FALSE(check(tiny, -tiny, 1));
  EXPECT_TRUE(check(0.0f, -0.0f, 0));
  EXPECT_FALSE(check(kNaN, kNaN, 1000));
  EXPECT_TRUE(check(kInf, kInf, 0));
}

TEST(Validation, UlpsOfDoublesAndIntegers) {
  const double one = 1.0, next = std::nextafter(one, 2.0);
  EXPECT_TRUE(validate_output(ElementType::F64, bytes_of<double>({next}), bytes_of<double>({one}), within_ulps(1)).ok);
  EXPECT_FALSE(validate_output(ElementType::F64, bytes_of<double>({-next}), bytes_of<double>({one}), within_ulps(1)).ok);
  // Integers are their difference apart.
  EXPECT_TRUE(validate_output(ElementType::I32, bytes_of<std::int32_t>({-3}), bytes_of<std::int32_t>({-1}), within_ulps(2)).ok);
  const ValidationResult result =
      validate_output(ElementType::I32, bytes_of<std::int32_t>({-4}), bytes_of<std::int32_t>({-1}), within_ulps(2));
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.message.find("differ by more than 2 ULPs"), std::string::npos) << result.message;
  // The extremes are their true difference apart, 2^32 - 1, not an overflow.
  const std::int32_t low = std::numeric_limits<std::int32_t>::min(), high = std::numeric_limits<std::int32_t>::max();
  EXPECT_TRUE(validate_output(ElementType::I32, bytes_of<std::int32_t>({high}), bytes_of<std::int32_t>({low}),
                              within_ulps(0xFFFFFFFFull)).ok);
  EXPECT_FALSE(validate_output(ElementType::I32, bytes_of<std::int32_t>({low}), bytes_of<std::int32_t>({high}),
                               within_ulps(0xFFFFFFFEull)).ok);
  const std::int64_t low64 = std::numeric_limits<std::int64_t>::min(), high64 = std::numeric_limits<std::int64_t>::max();
  EXPECT_TRUE(validate_output(ElementType::I64, bytes_of<std::int64_t>({high64}), bytes_of<std::int64_t>({low64}),
                              within_ulps(~std::uint64_t{0})).ok);
}

TEST(Validation, IgnoredOutputsAlwaysPass) {
  EXPECT_TRUE(validate_output(ElementType::F32, bytes_of<float>({kNaN}), bytes_of<float>({1}),
                              Comparison{.kind = Comparison::Kind::Ignore})
                  .ok);
}

TEST(Validation, SizeMismatchThrows) {
  EXPECT_THROW(validate_output(ElementType::F32, bytes_of<float>({1, 2}), bytes_of<float>({1}), 0, 0), Error);
  EXPECT_THROW(validate_output(ElementType::F32, std::vector<std::byte>(6), std::vector<std::byte>(6), 0, 0), Error);
}

TEST(Validation, EmptyBuffersPass) {
  EXPECT_TRUE(validate_output(ElementType::F32, {}, {}, 0, 0).ok);
}

}  // namespace
}  // namespace steer
