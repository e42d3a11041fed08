// The coulomb benchmark's OpenCL kernel tuned on the OpenCL device (PoCL in CI), every
// configuration tested validated. Minutes: label long.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

#include "benchmark_tuning.hpp"
#include "steer/reference.hpp"

namespace steer {
namespace {

class CoulombOnOpencl : public benchmark_tests::BenchmarkOnOpencl {};

TEST_F(CoulombOnOpencl, ValidatesInARandomSample) {
  auto searcher = make_searcher("random", {.seed = 20261130});
  tune_and_check("coulomb", "small", *searcher, 60);
}

TEST_F(CoulombOnOpencl, ValidatesWithEveryValueOfEveryParameter) {
  const Space space = Space::build(load_spec(benchmark_tests::spec_path("coulomb")).space);
  const std::vector<ConfigIndex> configurations = benchmark_tests::covering_configurations(space, 20261130);
  benchmark_tests::expect_every_value_covered(space, configurations);
  benchmark_tests::ListSearcher searcher(configurations);
  tune_and_check("coulomb", "small", searcher, configurations.size());
}

}  // namespace
}  // namespace steer
