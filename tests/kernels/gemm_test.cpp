// The gemm kernel (kernels/gemm/kernel.cl, which the gemm and gemm_full specs share) through
// the tuning loop on the OpenCL CPU device (PoCL) at the specs' 'small' size (240 × 208 × 200,
// a multiple of no tile, so that the edge handling is exercised too): every configuration
// tested must validate against the CPU reference. Two samples per spec, both fixed: a random
// one of at least 20 configurations, and one that holds every (parameter, value) pair.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backend/cuda/nvrtc_compiler.hpp"
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

TEST(GemmSpaces, CountsAreThoseOfTheBenchmarkDefinitions) {
  for (const auto& [name, count] : {std::pair<std::string, std::uint64_t>{"gemm", 5788}, {"gemm_full", 205216}}) {
    const Spec spec = load_spec(spec_path(name));
    EXPECT_EQ(Space::build(spec.space).size(), count) << name;
    EXPECT_EQ(cli_count(spec_path(name)), count) << name << " through `steer space --json`";
    ASSERT_TRUE(spec.kernel) << name;
    EXPECT_EQ(spec.kernel->name, "gemm");
    // One kernel source for both specs.
    EXPECT_EQ(fs::canonical(spec.kernel->sources.at(Language::OpenCL)),
              fs::canonical(fs::path(STEER_SOURCE_DIR) / "kernels" / "gemm" / "kernel.cl"));
    EXPECT_EQ(fs::canonical(spec.kernel->sources.at(Language::Cuda)),
              fs::canonical(fs::path(STEER_SOURCE_DIR) / "kernels" / "gemm" / "kernel.cu"));
  }
}

HostArgument float_buffer(const std::string& name, const std::vector<float>& values) {
  HostArgument argument{.name = name, .type = ElementType::F32};
  argument.data.resize(values.size() * sizeof(float));
  std::memcpy(argument.data.data(), values.data(), argument.data.size());
  return argument;
}

HostArgument float_scalar(const std::string& name, float value) {
  HostArgument argument{.name = name, .is_buffer = false, .type = ElementType::F32};
  argument.data.resize(sizeof value);
  std::memcpy(argument.data.data(), &value, sizeof value);
  return argument;
}

TEST(GemmReference, ComputesAlphaABPlusBetaCInTheDocumentedLayout) {
  constexpr int M = 4, N = 8, K = 3;
  std::vector<float> A(M * K), B(K * N), C(M * N);
  // Small integers: every product and sum is exact in float.
  for (int k = 0; k < K; ++k)
    for (int m = 0; m < M; ++m) A[k * M + m] = static_cast<float>(m + 10 * k);  // column-major M × K
  for (int k = 0; k < K; ++k)
    for (int n = 0; n < N; ++n) B[k * N + n] = static_cast<float>(n - k);  // row-major K × N
  for (int i = 0; i < M * N; ++i) C[i] = static_cast<float>(i);
  const std::vector<HostArgument> arguments{float_scalar("alpha", 2.0f), float_scalar("beta", 0.5f),
                                            float_buffer("A", A), float_buffer("B", B), float_buffer("C", C)};
  const ProblemSize size{.name = "test", .variables = {{"M", M}, {"N", N}, {"K", K}}};
  ReferenceOutputs outputs{std::vector<std::byte>(M * N * sizeof(float))};
  find_reference("gemm")(ReferenceInput{size, arguments}, outputs);
  std::vector<float> out(M * N);
  std::memcpy(out.data(), outputs[0].data(), outputs[0].size());
  for (int n = 0; n < N; ++n)
    for (int m = 0; m < M; ++m) {
      float sum = 0;
      for (int k = 0; k < K; ++k) sum += A[k * M + m] * B[k * N + n];
      EXPECT_EQ(out[n * M + m], 2.0f * sum + 0.5f * C[n * M + m]) << "m " << m << ", n " << n;  // column-major C
    }

  // M must be a multiple of 4 (the kernels' widest vector).
  const ProblemSize ragged{.name = "ragged", .variables = {{"M", 6}, {"N", 8}, {"K", 3}}};
  std::vector<HostArgument> ragged_arguments = arguments;
  ragged_arguments[2] = float_buffer("A", std::vector<float>(6 * 3));
  ragged_arguments[4] = float_buffer("C", std::vector<float>(6 * 8));
  ReferenceOutputs ragged_outputs{std::vector<std::byte>(6 * 8 * sizeof(float))};
  EXPECT_THROW(find_reference("gemm")(ReferenceInput{ragged, ragged_arguments}, ragged_outputs), Error);
}

TEST(GemmSamples, CoverEveryValueOfEveryParameter) {
  for (const char* name : {"gemm", "gemm_full"}) {
    const Space space = Space::build(load_spec(spec_path(name)).space);
    const std::vector<std::string> missing = benchmark_tests::values_never_taken(space);
    EXPECT_TRUE(missing.empty()) << name << ": no valid configuration has " << missing.front();
    const std::vector<ConfigIndex> sample = benchmark_tests::covering_configurations(space, kSeed);
    benchmark_tests::expect_every_value_covered(space, sample);
    EXPECT_LE(sample.size(), 8u) << name;
  }
}

}  // namespace
}  // namespace steer
