#include <gtest/gtest.h>

#include "steer/result.hpp"

namespace steer {
namespace {

TEST(TimingStats, SummarisesOddCount) {
  const TimingStats stats = TimingStats::from_samples({3.0, 1.0, 2.0});
  EXPECT_EQ(stats.repetitions, 3);
  EXPECT_DOUBLE_EQ(stats.median_ms, 2.0);
  EXPECT_DOUBLE_EQ(stats.min_ms, 1.0);
  EXPECT_DOUBLE_EQ(stats.max_ms, 3.0);
  EXPECT_DOUBLE_EQ(stats.mean_ms, 2.0);
  EXPECT_DOUBLE_EQ(stats.stddev_ms, 1.0);  // sample standard deviation (n - 1)
  EXPECT_EQ(stats.samples_ms, (std::vector<double>{3.0, 1.0, 2.0}));  // launch order kept
}

TEST(TimingStats, MedianOfEvenCountIsTheMiddlePairsMean) {
  const TimingStats stats = TimingStats::from_samples({4.0, 1.0, 10.0, 2.0});
  EXPECT_DOUBLE_EQ(stats.median_ms, 3.0);
  EXPECT_DOUBLE_EQ(stats.mean_ms, 4.25);
}

TEST(TimingStats, SingleSampleHasNoSpread) {
  const TimingStats stats = TimingStats::from_samples({0.5});
  EXPECT_EQ(stats.repetitions, 1);
  EXPECT_DOUBLE_EQ(stats.median_ms, 0.5);
  EXPECT_DOUBLE_EQ(stats.min_ms, 0.5);
  EXPECT_DOUBLE_EQ(stats.max_ms, 0.5);
  EXPECT_DOUBLE_EQ(stats.stddev_ms, 0.0);
}

TEST(TimingStats, NoSamplesIsAllZero) {
  const TimingStats stats = TimingStats::from_samples({});
  EXPECT_EQ(stats.repetitions, 0);
  EXPECT_EQ(stats.median_ms, 0.0);
  EXPECT_EQ(stats.stddev_ms, 0.0);
  EXPECT_TRUE(stats.samples_ms.empty());
}

}  // namespace
}  // namespace steer
