// The work rate of a launch (steer::throughput): what tune and profile print as GFLOP/s and
// GB/s, from a size's `flops` and `bytes`.
#include <gtest/gtest.h>

#include <limits>
#include <optional>

#include "steer/spec.hpp"

namespace steer {
namespace {

ProblemSize size_with(std::optional<double> flops, std::optional<double> bytes) {
  ProblemSize size;
  size.name = "h200";
  size.flops = flops;
  size.bytes = bytes;
  return size;
}

TEST(Throughput, IsTheWorkPerLaunchOverTheMedianTime) {
  // gemm at 4096³ in 3.661 ms: 2·4096³ FLOP and 4·4·4096² bytes.
  const Throughput rate = throughput(size_with(2.0 * 4096 * 4096 * 4096, 16.0 * 4096 * 4096), 3.661);
  ASSERT_TRUE(rate.gflop_per_s && rate.gb_per_s);
  EXPECT_NEAR(*rate.gflop_per_s, 37541.4, 0.1);
  EXPECT_NEAR(*rate.gb_per_s, 73.3, 0.05);
}

TEST(Throughput, IsAbsentWhereTheSpecGivesNoCountOrZero) {
  // transpose: `flops` is 0, a copy does no floating-point work; GB/s remains.
  const Throughput transpose = throughput(size_with(0.0, 8.0 * 16384 * 32768), 1.070);
  EXPECT_FALSE(transpose.gflop_per_s);
  ASSERT_TRUE(transpose.gb_per_s);
  EXPECT_NEAR(*transpose.gb_per_s, 4014.0, 0.1);
  const Throughput none = throughput(size_with(std::nullopt, std::nullopt), 1.0);
  EXPECT_FALSE(none.gflop_per_s);
  EXPECT_FALSE(none.gb_per_s);
}

TEST(Throughput, IsAbsentWithoutAPositiveTime) {
  for (double ms : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN()}) {
    const Throughput rate = throughput(size_with(1e9, 1e9), ms);
    EXPECT_FALSE(rate.gflop_per_s) << ms;
    EXPECT_FALSE(rate.gb_per_s) << ms;
  }
}

}  // namespace
}  // namespace steer
