// The gemm benchmarks' kernels compiled for sm_90 with NVRTC in a sample of
// configurations, and tuned on the OpenCL device (PoCL in CI) in samples that cover every
// value of every parameter, each configuration validated. Minutes: label long.
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

// Skips without an OpenCL device; backend_ is the device.
class GemmTuning : public benchmark_tests::BenchmarkOnOpencl {
 protected:
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

};

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
