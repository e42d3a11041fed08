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

class GemmTuning : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!opencl_backend_built()) GTEST_SKIP() << "the OpenCL backend was not built";
    try {
      backend_ = make_opencl_backend({});
    } catch (const BackendError& error) {
      GTEST_SKIP() << "no OpenCL device: " << error.what();
    }
  }

  // Tunes `tests` configurations of the spec that `searcher` proposes, at 'small' (one launch
  // each, no warm-up), and expects every one to validate.
  void expect_all_validate(const std::string& name, Searcher& searcher, std::uint64_t tests) {
    const Spec spec = load_spec(spec_path(name));
    const Space space = Space::build(spec.space);
    TuneOptions options;
    options.size = "small";
    options.stop.tests = tests;
    options.run.warmup = 0;
    options.run.repetitions = 1;
    // PoCL compiles the work-group function at the first launch: several seconds for the
    // larger unrolled configurations on a loaded machine.
    options.run.timeout_ms = 120'000;
    const TuneSummary summary = tune(spec, space, *backend_, searcher, nullptr, options);
    EXPECT_EQ(summary.tests, tests);
    EXPECT_EQ(summary.valid, tests) << "every configuration tested must validate";
    for (const Result& result : summary.results) {
      if (!result.ok())
        ADD_FAILURE() << result.key() << ": " << to_string(result.status) << ": " << result.message.substr(0, 3000);
    }
    std::printf("[          ] %s: %llu configurations in %.1f s (compiler %.1f s, overlapped)\n", name.c_str(),
                static_cast<unsigned long long>(summary.tests), summary.wall_s, summary.compile_cpu_s);
  }

  std::unique_ptr<Backend> backend_;
};

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

// tests/kernels/nvrtc_compile_test.cpp compiles the kernels/*/kernel.cu it finds; gemm_full's
// spec uses gemm's kernel.cu over a larger space (128-wide tiles, KWG 16, KWI 8, STRM/STRN),
// so its configurations are compiled here: a fixed random sample and the covering sample.
TEST(GemmFullNvrtc, CompilesForSm90InASampleOfConfigurations) {
  if (!cuda_backend_built()) GTEST_SKIP() << "the CUDA backend (NVRTC) was not built";
  const Spec spec = load_spec(spec_path("gemm_full"));
  const Space space = Space::build(spec.space);
  const fs::path source = spec.kernel->sources.at(Language::Cuda);
  Program program;
  program.language = Language::Cuda;
  std::ifstream in(source, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  program.source = text.str();
  program.source_name = source.filename().string();
  program.kernel_name = spec.kernel->name;
  program.compiler_options = spec.kernel->compiler_options;
  program.include_dirs.push_back(source.parent_path().string());

  std::mt19937_64 rng(kSeed);
  std::vector<ConfigIndex> sample = space.sample(rng, 50);
  for (ConfigIndex config : benchmark_tests::covering_configurations(space, kSeed)) sample.push_back(config);
  std::atomic<std::size_t> next{0};
  std::mutex failures_mutex;
  std::vector<std::string> failures;
  auto work = [&] {
    for (std::size_t i = next++; i < sample.size(); i = next++) {
      KernelInstance instance;
      instance.config_index = sample[i];
      const std::vector<Value> values = space.values(sample[i]);
      for (std::size_t p = 0; p < values.size(); ++p)
        instance.defines.emplace_back(space.parameters()[p].name, values[p].to_string());
      try {
        const std::vector<char> image = cuda::nvrtc_compile_cubin(program, instance, 9, 0);
        if (image.size() < 4 || image[0] != 0x7F || image[1] != 'E') throw Error("not an ELF cubin");
      } catch (const Error& error) {
        std::lock_guard lock(failures_mutex);
        failures.push_back(space.key(sample[i]) + ": " + error.what());
      }
    }
  };
  {
    std::vector<std::jthread> workers(std::max(1u, std::thread::hardware_concurrency()));
    for (std::jthread& worker : workers) worker = std::jthread(work);
  }
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << sample.size()
                                << " configurations failed to compile; the first:\n" << failures.front();
}

// The random searcher with a fixed seed: the same configurations every run.
TEST_F(GemmTuning, ARandomSampleOfTheReducedSpaceValidates) {
  const auto searcher = make_searcher("random", {.seed = kSeed});
  expect_all_validate("gemm", *searcher, 24);
}

TEST_F(GemmTuning, ASampleOfTheReducedSpaceWithEveryParameterValueValidates) {
  const Space space = Space::build(load_spec(spec_path("gemm")).space);
  const std::vector<ConfigIndex> sample = benchmark_tests::covering_configurations(space, kSeed);
  ListSearcher searcher(sample);
  expect_all_validate("gemm", searcher, sample.size());
}

TEST_F(GemmTuning, ARandomSampleOfTheFullSpaceValidates) {
  const auto searcher = make_searcher("random", {.seed = kSeed});
  expect_all_validate("gemm_full", *searcher, 20);
}

TEST_F(GemmTuning, ASampleOfTheFullSpaceWithEveryParameterValueValidates) {
  const Space space = Space::build(load_spec(spec_path("gemm_full")).space);
  const std::vector<ConfigIndex> sample = benchmark_tests::covering_configurations(space, kSeed);
  ListSearcher searcher(sample);
  expect_all_validate("gemm_full", searcher, sample.size());
}

}  // namespace
}  // namespace steer
