// The DGEMM energy benchmark tuned on the OpenCL device (PoCL in CI) in samples that cover
// every value of every parameter, each configuration validated. Minutes: label long.
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

// Skips without an OpenCL device; backend_ is the device.
class DgemmEnergyTuning : public benchmark_tests::BenchmarkOnOpencl {
 protected:
  // Tunes `tests` configurations that `searcher` proposes, at 'small' (one launch each, no
  // warm-up), and expects every one to validate.
  void expect_all_validate(Searcher& searcher, std::uint64_t tests) {
    const Spec spec = load_spec(spec_path("dgemm_energy"));
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
    std::printf("[          ] dgemm_energy: %llu configurations in %.1f s (compiler %.1f s, overlapped)\n",
                static_cast<unsigned long long>(summary.tests), summary.wall_s, summary.compile_cpu_s);
  }

};

// The random searcher with a fixed seed: the same configurations every run.
TEST_F(DgemmEnergyTuning, ARandomSampleValidates) {
  const auto searcher = make_searcher("random", {.seed = kSeed});
  expect_all_validate(*searcher, 20);
}

TEST_F(DgemmEnergyTuning, ASampleWithEveryParameterValueValidates) {
  const Space space = Space::build(load_spec(spec_path("dgemm_energy")).space);
  const std::vector<ConfigIndex> sample = benchmark_tests::covering_configurations(space, kSeed);
  ListSearcher searcher(sample);
  expect_all_validate(searcher, sample.size());
}

}  // namespace
}  // namespace steer
