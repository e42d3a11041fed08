// The conv benchmark's OpenCL kernel tuned on the OpenCL device (PoCL in CI) at the
// 'small' size, every configuration validated (configurations beyond the device's
// work-group or local-memory limits must fail to launch instead). Minutes: label long.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "benchmark_tuning.hpp"
#include "steer/reference.hpp"

namespace steer {
namespace {

class ConvOnOpencl : public benchmark_tests::BenchmarkOnOpencl {};

TEST_F(ConvOnOpencl, ValidatesInARandomSample) {
  auto searcher = make_searcher("random", {.seed = 20261130});
  tune_and_check("conv", "small", *searcher, 48);
}

TEST_F(ConvOnOpencl, ValidatesWithEveryValueOfEveryParameter) {
  const Space space = Space::build(load_spec(benchmark_tests::spec_path("conv")).space);
  const std::vector<ConfigIndex> configurations = benchmark_tests::covering_configurations(space, 20261130);
  benchmark_tests::expect_every_value_covered(space, configurations);
  benchmark_tests::ListSearcher searcher(configurations);
  tune_and_check("conv", "small", searcher, configurations.size());
}

}  // namespace
}  // namespace steer
