// The dgemm_energy kernel (kernels/dgemm_energy/kernel.cl) through the tuning loop on the
// OpenCL CPU device (PoCL) at the spec's 'small' size (240 × 208 × 200, a multiple of no tile,
// so that the edge handling is exercised too): every configuration tested must validate
// against the CPU reference. Two fixed samples: a random one of 20 configurations, and one
// that holds every (parameter, value) pair.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "steer/backend.hpp"
#include "steer/reference.hpp"
#include "steer/searcher.hpp"
#include "steer/space.hpp"
#include "steer/spec.hpp"
#include "steer/tuner.hpp"
#include "benchmark_tuning.hpp"

namespace steer {
namespace {

namespace fs = std::filesystem;
using benchmark_tests::cli_count;
using benchmark_tests::ListSearcher;
using benchmark_tests::spec_path;

constexpr std::uint64_t kSeed = 20261130;  // fixed samples: a failure reproduces

TEST(DgemmEnergySpace, HasTheCountOfItsValueLists) {
  const Spec spec = load_spec(spec_path("dgemm_energy"));
  EXPECT_EQ(Space::build(spec.space).size(), 26140u);
  EXPECT_EQ(cli_count(spec_path("dgemm_energy")), 26140u) << "through `steer space --json`";
  ASSERT_TRUE(spec.kernel);
  EXPECT_EQ(spec.kernel->name, "dgemm_energy");
  EXPECT_EQ(spec.reference.cpu_function, "dgemm_energy");
}

HostArgument double_buffer(const std::string& name, const std::vector<double>& values) {
  HostArgument argument{.name = name, .type = ElementType::F64};
  argument.data.resize(values.size() * sizeof(double));
  std::memcpy(argument.data.data(), values.data(), argument.data.size());
  return argument;
}

HostArgument double_scalar(const std::string& name, double value) {
  HostArgument argument{.name = name, .is_buffer = false, .type = ElementType::F64};
  argument.data.resize(sizeof value);
  std::memcpy(argument.data.data(), &value, sizeof value);
  return argument;
}

TEST(DgemmEnergyReference, ComputesAlphaABPlusBetaCColumnMajor) {
  constexpr int M = 5, N = 3, K = 7;  // sizes need not be multiples of anything
  std::vector<double> A(M * K), B(K * N), C(M * N);
  for (int k = 0; k < K; ++k)
    for (int m = 0; m < M; ++m) A[k * M + m] = m + 10.0 * k;  // M × K column-major
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k) B[n * K + k] = n - 2.0 * k;  // K × N column-major
  for (int i = 0; i < M * N; ++i) C[i] = i;
  const std::vector<HostArgument> arguments{double_scalar("alpha", 1.5), double_scalar("beta", -0.5),
                                            double_buffer("A", A), double_buffer("B", B), double_buffer("C", C)};
  const ProblemSize size{.name = "test", .variables = {{"M", M}, {"N", N}, {"K", K}}};
  ReferenceOutputs outputs{std::vector<std::byte>(M * N * sizeof(double))};
  find_reference("dgemm_energy")(ReferenceInput{size, arguments}, outputs);
  std::vector<double> out(M * N);
  std::memcpy(out.data(), outputs[0].data(), outputs[0].size());
  for (int n = 0; n < N; ++n)
    for (int m = 0; m < M; ++m) {
      double sum = 0;
      for (int k = 0; k < K; ++k) sum += A[k * M + m] * B[n * K + k];
      EXPECT_EQ(out[n * M + m], 1.5 * sum - 0.5 * C[n * M + m]) << "m " << m << ", n " << n;  // exact: small integers
    }
}

TEST(DgemmEnergySample, CoversEveryValueOfEveryParameter) {
  const Space space = Space::build(load_spec(spec_path("dgemm_energy")).space);
  const std::vector<std::string> missing = benchmark_tests::values_never_taken(space);
  EXPECT_TRUE(missing.empty()) << "no valid configuration has " << missing.front();
  const std::vector<ConfigIndex> sample = benchmark_tests::covering_configurations(space, kSeed);
  benchmark_tests::expect_every_value_covered(space, sample);
  EXPECT_LE(sample.size(), 10u);
}

}  // namespace
}  // namespace steer
