// The statistics steer report draws of a recorded space: the runtime histogram's bins and
// the time-energy Pareto front, checked on values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "steer/error.hpp"
#include "steer/eval.hpp"

namespace steer {
namespace {

TEST(RuntimeHistogram, EqualWidthBinsFromTheFastestToTheSlowest) {
  // 1..5 ms in 2 bins: [1, 3) holds 1 and 2; [3, 5], closed at the maximum, 3, 4 and 5.
  Histogram h = runtime_histogram({5, 1, 4, 2, 3}, 2);
  EXPECT_FALSE(h.logarithmic);
  ASSERT_EQ(h.edges.size(), 3u);
  EXPECT_EQ(h.edges[0], 1);
  EXPECT_EQ(h.edges[1], 3);
  EXPECT_EQ(h.edges[2], 5);
  EXPECT_EQ(h.counts, (std::vector<std::uint64_t>{2, 3}));
}

TEST(RuntimeHistogram, LogarithmicBinsWhenTheRuntimesSpanMoreThanAFactorOfTen) {
  // 1, 3, 30 and 100 ms in 2 bins: edges 1, 10, 100 (equal in log10).
  Histogram h = runtime_histogram({1, 30, 100, 3}, 2);
  EXPECT_TRUE(h.logarithmic);
  ASSERT_EQ(h.edges.size(), 3u);
  EXPECT_EQ(h.edges[0], 1);
  EXPECT_NEAR(h.edges[1], 10, 1e-12);
  EXPECT_EQ(h.edges[2], 100);
  EXPECT_EQ(h.counts, (std::vector<std::uint64_t>{2, 2}));
}

TEST(RuntimeHistogram, DefaultBinsAreTheSquareRootOfTheCountWithinFiveToSixty) {
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i * 0.01 + 1);
  EXPECT_EQ(runtime_histogram(hundred).counts.size(), 10u);                  // sqrt(100)
  EXPECT_EQ(runtime_histogram({1, 2, 3, 4, 5, 6, 7, 8}).counts.size(), 5u);  // at least 5
  EXPECT_EQ(runtime_histogram({1, 2, 3}).counts.size(), 3u);                 // never more bins than values
  std::vector<double> many(10000);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = 1 + static_cast<double>(i) * 1e-4;
  Histogram h = runtime_histogram(many);
  EXPECT_EQ(h.counts.size(), 60u);  // at most 60
  std::uint64_t total = 0;
  for (auto c : h.counts) total += c;
  EXPECT_EQ(total, 10000u);
}

TEST(RuntimeHistogram, IgnoresNaNAndKeepsEqualValuesInOneBin) {
  Histogram h = runtime_histogram({2, NAN, 2, 2});
  EXPECT_EQ(h.edges, (std::vector<double>{2, 2}));
  EXPECT_EQ(h.counts, (std::vector<std::uint64_t>{3}));
  EXPECT_THROW(runtime_histogram({NAN}), Error);
}

}  // namespace
}  // namespace steer
