// Building a space too large to enumerate in time or memory: progress, the bound, and an
// estimate of its size by sampling (BuildLimits, SpaceBuildStopped).
#include <gtest/gtest.h>

#include <array>
#include <cmath>

#include "space/benchmark_space_definitions.hpp"
#include "steer/space.hpp"

namespace steer {
namespace {

// How much slower a sanitizer build runs: time limits that must let the search and the
// estimate get somewhere are stretched by it.
#if defined(__SANITIZE_ADDRESS__)
constexpr double kSlowdown = 5;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr double kSlowdown = 5;
#else
constexpr double kSlowdown = 1;
#endif
#else
constexpr double kSlowdown = 1;
#endif

using test_spaces::int_range;

// Twelve digits whose sum is 54: 10^12 combinations, and the constraint reads all twelve,
// so the search can cut nothing off before the last digit. Enumerating it takes hours.
SpaceDefinition twelve_digits_summing_to_54() {
  SpaceDefinition d;
  std::string sum;
  for (char name = 'A'; name <= 'L'; ++name) {
    d.add_parameter(std::string(1, name), int_range(0, 9));
    sum += (sum.empty() ? "" : " + ") + std::string(1, name);
  }
  d.add_constraint(sum + " == 54");
  return d;
}

double sequences_of_twelve_digits_summing_to_54() {
  std::array<double, 109> ways{};
  ways[0] = 1;
  for (int digit = 0; digit < 12; ++digit) {
    std::array<double, 109> next{};
    for (int sum = 0; sum < 109; ++sum) {
      for (int d = 0; d <= 9 && sum + d < 109; ++d) next[sum + d] += ways[sum];
    }
    ways = next;
  }
  return ways[54];
}

TEST(BuildLimits, ATimeLimitStopsTheBuildSayingHowFarItGotWithAnEstimateOfTheSize) {
  SpaceDefinition d = twelve_digits_summing_to_54();
  d.add_parameter("X", int_range(1, 3));  // an independent second group of two valid rows
  d.add_constraint("X != 2");
  const double exact = 2 * sequences_of_twelve_digits_summing_to_54();  // 2.3e11
  BuildLimits limits;
  limits.seconds = 0.5 * kSlowdown;
  // Time for the default 100,000 descents, shared by the two groups: the estimate is then the
  // same in every run (Knuth's estimator is heavy-tailed, and its interval from fewer descents
  // misses the true count more often than 1 in 20).
  limits.estimate_seconds = 2 * kSlowdown;
  try {
    Space::build(d, limits);
    FAIL() << "built 10^12 combinations in half a second";
  } catch (const SpaceBuildStopped& stopped) {
    EXPECT_EQ(stopped.reason, SpaceBuildStopped::Reason::Time);
    EXPECT_EQ(stopped.progress.group, 0u);
    EXPECT_EQ(stopped.progress.groups, 2u);
    EXPECT_EQ(stopped.progress.group_parameters, 12u);
    EXPECT_EQ(stopped.progress.group_combinations, 1e12);
    EXPECT_GT(stopped.progress.searched, 0.0);
    EXPECT_LT(stopped.progress.searched, 1e-3);
    EXPECT_GT(stopped.progress.rows, 0u);
    EXPECT_GE(stopped.progress.seconds, 0.5 * kSlowdown);
    EXPECT_NE(std::string(stopped.what()).find("time limit"), std::string::npos) << stopped.what();
    const SizeEstimate& e = stopped.estimate;
    EXPECT_TRUE(e.reliable);
    EXPECT_EQ(e.weakest_group, 0u) << "every descent through the second group reaches one of its two rows";
    EXPECT_GT(e.weakest_valid, 100u);
    EXPECT_GT(e.probes, e.weakest_probes);
    EXPECT_LE(e.low, exact);
    EXPECT_GE(e.high, exact);
    EXPECT_NEAR(e.count / exact, 1.0, 0.15) << e.count << " against " << exact;
    EXPECT_EQ(e.at_least, 0) << "the second group was not reached: it might have had no rows";
    EXPECT_EQ(stopped.stats.cross_product, 3'000'000'000'000u);
    ASSERT_EQ(stopped.stats.constraints.size(), 2u);
    EXPECT_GT(stopped.stats.constraints[0].rejected, 0u);
  }
}

// The time set aside for the estimate is shared by the group that stopped and the groups
// after it: however slowly the first group's descents go, the second gets its own.
TEST(BuildLimits, EveryGroupSampledGetsItsShareOfTheEstimateTime) {
  SpaceDefinition d = twelve_digits_summing_to_54();
  d.add_parameter("X", int_range(1, 3));
  d.add_constraint("X != 2");
  const double exact = 2 * sequences_of_twelve_digits_summing_to_54();
  BuildLimits limits;
  limits.seconds = 0.2 * kSlowdown;
  limits.estimate_seconds = 0.4 * kSlowdown;
  limits.estimate_probes = std::uint64_t{1} << 40;  // the first group's descents alone would fill the time
  try {
    Space::build(d, limits);
    FAIL() << "built 10^12 combinations in 0.2 s";
  } catch (const SpaceBuildStopped& stopped) {
    const SizeEstimate& e = stopped.estimate;
    EXPECT_GT(e.probes, e.weakest_probes) << "both groups were sampled";
    EXPECT_TRUE(e.reliable);
    EXPECT_NEAR(e.count / exact, 1.0, 0.15) << e.count << " against " << exact;
  }
}

TEST(BuildLimits, AnEstimateThatFewDescentsSupportIsMarkedUnreliable) {
  SpaceDefinition d;
  std::string sum;
  for (char name = 'A'; name <= 'L'; ++name) {
    d.add_parameter(std::string(1, name), int_range(0, 9));
    sum += (sum.empty() ? "" : " + ") + std::string(1, name);
  }
  d.add_constraint(sum + " == 107");  // twelve digits: only the 12 ways with one 8 and eleven 9s
  BuildLimits limits;
  limits.seconds = 0.2;
  limits.estimate_seconds = 0.2;
  try {
    Space::build(d, limits);
    FAIL() << "built 10^12 combinations in 0.2 s";
  } catch (const SpaceBuildStopped& stopped) {
    EXPECT_FALSE(stopped.estimate.reliable);
    EXPECT_LT(stopped.estimate.weakest_valid, 10u);
    EXPECT_GT(stopped.estimate.weakest_probes, 1000u);
  }
}

TEST(BuildLimits, ReportsProgressAsTheSearchAdvances) {
  BuildLimits limits;
  limits.seconds = 0.4;
  limits.estimate_seconds = 0.05;
  limits.progress_interval_s = 0.05;
  std::vector<BuildProgress> reports;
  limits.on_progress = [&](const BuildProgress& p) { reports.push_back(p); };
  EXPECT_THROW(Space::build(twelve_digits_summing_to_54(), limits), SpaceBuildStopped);
  ASSERT_GE(reports.size(), 3u);
  for (std::size_t i = 1; i < reports.size(); ++i) {
    EXPECT_GT(reports[i].searched, reports[i - 1].searched);
    EXPECT_GE(reports[i].rows, reports[i - 1].rows);
    EXPECT_GT(reports[i].seconds, reports[i - 1].seconds);
  }
}

TEST(BuildLimits, AMemoryLimitStopsABuildWhoseRowsWouldNotFit) {
  SpaceDefinition d;
  for (const char* name : {"A", "B", "C", "D"}) d.add_parameter(name, int_range(0, 31));
  d.add_constraint("A + B + C + D >= 0");  // every one of the 32^4 rows is valid
  BuildLimits limits;
  limits.memory_bytes = 256 << 10;
  // A count of descents, not a time, so that the interval is the same on a slower build (its
  // 95 % coverage is checked here for this seed and count).
  limits.estimate_probes = 100'000;
  limits.estimate_seconds = 60;
  try {
    Space::build(d, limits);
    FAIL() << "built 4 MiB of rows under a 256 KiB limit";
  } catch (const SpaceBuildStopped& stopped) {
    EXPECT_EQ(stopped.reason, SpaceBuildStopped::Reason::Memory);
    EXPECT_LT(stopped.progress.rows, 1u << 20);
    EXPECT_NEAR(stopped.estimate.count / (1 << 20), 1.0, 0.02);
    EXPECT_LE(stopped.estimate.low, 1 << 20);
    EXPECT_GE(stopped.estimate.high, 1 << 20);
  }
}

TEST(BuildLimits, BoundsThatAreNotReachedChangeNothing) {
  BuildLimits limits;
  limits.seconds = 60;
  limits.memory_bytes = std::size_t{1} << 30;
  int reports = 0;
  limits.on_progress = [&](const BuildProgress&) { ++reports; };
  const Space bounded = Space::build(test_spaces::gemm(false), limits);
  const Space free = Space::build(test_spaces::gemm(false));
  ASSERT_EQ(bounded.size(), free.size());
  for (ConfigIndex i = 0; i < free.size(); i += 97) EXPECT_EQ(bounded.value_indices(i), free.value_indices(i));
}

}  // namespace
}  // namespace steer
