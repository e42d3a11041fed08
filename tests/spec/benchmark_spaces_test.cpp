// Acceptance: each benchmark's spec builds the space whose size benchmarks.md gives.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "steer/space.hpp"
#include "steer/spec.hpp"

namespace steer {
namespace {

struct Benchmark {
  const char* name;
  std::uint64_t valid_configurations;
};

// Names the parameter in test listings (and so in ctest's test names).
void PrintTo(const Benchmark& benchmark, std::ostream* out) {
  *out << benchmark.name << ": " << benchmark.valid_configurations;
}

class BenchmarkSpace : public ::testing::TestWithParam<Benchmark> {};

TEST_P(BenchmarkSpace, HasTheDocumentedNumberOfValidConfigurations) {
  const Benchmark& benchmark = GetParam();
  Spec spec = load_spec(std::string(STEER_SOURCE_DIR) + "/kernels/" + benchmark.name + "/spec.json");
  EXPECT_EQ(spec.name, benchmark.name);
  EXPECT_FALSE(spec.default_size.empty());
  EXPECT_EQ(Space::build(spec.space).size(), benchmark.valid_configurations);
}

INSTANTIATE_TEST_SUITE_P(spec_kernels, BenchmarkSpace,
                         ::testing::Values(Benchmark{"coulomb", 210}, Benchmark{"transpose", 1'836},
                                           Benchmark{"gemm", 5'788}, Benchmark{"gemm_full", 205'216},
                                           Benchmark{"nbody", 3'136}, Benchmark{"conv", 5'248},
                                           Benchmark{"pnpoly", 4'092}),
                         [](const ::testing::TestParamInfo<Benchmark>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace steer
