// How a spec's buffers are initialised: what each initialiser fills, and that "random" buffers
// are a function of their seed alone, whatever the number of threads that fill them.
#include "tuner/kernel_problem.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "steer/error.hpp"
#include "steer/spec.hpp"

namespace steer {
namespace {

Argument random_argument(ElementType type, std::uint64_t seed, double low, double high) {
  Argument argument;
  argument.name = "in";
  argument.type = type;
  argument.is_buffer = true;
  argument.init.kind = Initialiser::Kind::Random;
  argument.init.seed = seed;
  argument.init.low = low;
  argument.init.high = high;
  return argument;
}

template <typename T>
std::vector<T> elements(const std::vector<std::byte>& bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

// Large enough (4 M elements) to be filled by several threads when given them.
constexpr std::uint64_t kLarge = std::uint64_t{1} << 22;

TEST(InitialiseBuffer, ARandomBufferIsTheSameForAnyNumberOfThreads) {
  for (ElementType type : {ElementType::F32, ElementType::F64, ElementType::I32, ElementType::U8}) {
    const Argument argument = random_argument(type, 7, 0, 100);
    const std::vector<std::byte> one = initialise_buffer(argument, kLarge, 1);
    EXPECT_EQ(initialise_buffer(argument, kLarge, 3), one) << to_string(type);
    EXPECT_EQ(initialise_buffer(argument, kLarge, 8), one) << to_string(type);
    // A shorter buffer is the start of a longer one: element i depends on the seed and i alone.
    const std::vector<std::byte> part = initialise_buffer(argument, 1000, 1);
    EXPECT_TRUE(std::equal(part.begin(), part.end(), one.begin())) << to_string(type);
  }
}

TEST(InitialiseBuffer, RandomFloatsAreUniformInLowToHighAndDifferBySeed) {
  const std::vector<float> values = elements<float>(initialise_buffer(random_argument(ElementType::F32, 1, -1, 1), kLarge));
  double sum = 0;
  std::uint64_t below_zero = 0;
  for (float v : values) {
    ASSERT_GE(v, -1.0f);
    ASSERT_LT(v, 1.0f);
    sum += v;
    below_zero += v < 0 ? 1 : 0;
  }
  // 4 M draws: the mean's standard deviation is about 3e-4, the share's about 2.5e-4.
  EXPECT_NEAR(sum / static_cast<double>(values.size()), 0.0, 3e-3);
  EXPECT_NEAR(static_cast<double>(below_zero) / static_cast<double>(values.size()), 0.5, 3e-3);

  const std::vector<float> other = elements<float>(initialise_buffer(random_argument(ElementType::F32, 2, -1, 1), 1000));
  std::uint64_t same = 0;
  for (std::size_t i = 0; i < other.size(); ++i) same += other[i] == values[i] ? 1 : 0;
  EXPECT_LT(same, 5u) << "seeds 1 and 2 draw unrelated values";
}

TEST(InitialiseBuffer, RandomFloatsNeverReachHighEvenWhereRoundingWould) {
  // [1, 1 + 2^-20): most draws round to one of 8 floats; none may be the upper bound itself.
  const double high = 1.0 + std::ldexp(1.0, -20);
  for (float v : elements<float>(initialise_buffer(random_argument(ElementType::F32, 3, 1.0, high), 100'000))) {
    ASSERT_GE(v, 1.0f);
    ASSERT_LT(v, static_cast<float>(high));
  }
}

TEST(InitialiseBuffer, RandomIntegersCoverLowToHighInclusive) {
  const std::vector<std::int32_t> values =
      elements<std::int32_t>(initialise_buffer(random_argument(ElementType::I32, 5, -3, 3), 70'000));
  std::vector<std::uint64_t> counts(7, 0);
  for (std::int32_t v : values) {
    ASSERT_GE(v, -3);
    ASSERT_LE(v, 3);
    ++counts[static_cast<std::size_t>(v + 3)];
  }
  for (std::uint64_t count : counts) EXPECT_NEAR(static_cast<double>(count), 10'000.0, 500.0);
}

TEST(InitialiseBuffer, RandomIntegersWithLowAboveHighAreASpecErrorNamingTheArgument) {
  try {
    initialise_buffer(random_argument(ElementType::I32, 1, 5, 2), 10);
    FAIL() << "expected a SpecError";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("'in'"), std::string::npos) << e.what();
  }
}

TEST(InitialiseBuffer, TheOtherInitialisersFillWhatTheySay) {
  Argument argument;
  argument.name = "x";
  argument.type = ElementType::F32;
  argument.is_buffer = true;
  argument.init.kind = Initialiser::Kind::Iota;
  const std::vector<float> iota = elements<float>(initialise_buffer(argument, kLarge, 4));
  EXPECT_EQ(iota[0], 0.0f);
  EXPECT_EQ(iota[12345], 12345.0f);
  EXPECT_EQ(iota[kLarge - 1], static_cast<float>(kLarge - 1));
  argument.init.kind = Initialiser::Kind::Constant;
  argument.init.value = 2.5;
  for (float v : elements<float>(initialise_buffer(argument, kLarge, 4))) ASSERT_EQ(v, 2.5f);
  argument.init.kind = Initialiser::Kind::Zeros;
  for (float v : elements<float>(initialise_buffer(argument, 1000))) ASSERT_EQ(v, 0.0f);
  argument.init.kind = Initialiser::Kind::Memory;
  const std::vector<std::byte> twelve(12);
  argument.init.memory = twelve;
  EXPECT_THROW(initialise_buffer(argument, 4), SpecError) << "12 bytes are not 4 floats";
}

}  // namespace
}  // namespace steer
