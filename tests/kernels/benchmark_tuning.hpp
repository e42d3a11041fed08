#pragma once
// Shared by the benchmark kernel tests (coulomb, nbody, conv, gemm, dgemm_energy): run the tuning loop on the
// OpenCL device (PoCL in CI) over chosen configurations and check that every one the
// device can launch validates against the CPU reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "steer/backend.hpp"
#include "steer/result.hpp"
#include "steer/searcher.hpp"
#include "steer/space.hpp"
#include "steer/spec.hpp"
#include "steer/tuner.hpp"
#include "tuner/kernel_problem.hpp"

namespace steer::benchmark_tests {

inline std::filesystem::path spec_path(const std::string& benchmark) {
  return std::filesystem::path(STEER_SOURCE_DIR) / "kernels" / benchmark / "spec.json";
}

// Proposes a fixed list of configurations, in order.
class ListSearcher final : public Searcher {
 public:
  explicit ListSearcher(std::vector<ConfigIndex> configurations) : configurations_(std::move(configurations)) {}
  std::string name() const override { return "list"; }
  void start(const Space&) override { next_ = 0; }
  std::vector<Proposal> propose(std::size_t max) override {
    std::vector<Proposal> out;
    while (out.size() < max && next_ < configurations_.size()) out.push_back({configurations_[next_++], {}});
    return out;
  }
  void observe(const Result&) override {}

 private:
  std::vector<ConfigIndex> configurations_;
  std::size_t next_ = 0;
};

// A deterministic set of configurations in which every value of every parameter appears at
// least once: greedy set cover over (parameter, value) pairs, scanning the space in a fixed
// random order and taking, each round, the configuration that covers the most pairs not yet
// covered (the first such in that order).
inline std::vector<ConfigIndex> covering_configurations(const Space& space, std::uint64_t seed) {
  std::vector<ConfigIndex> order(space.size());
  std::iota(order.begin(), order.end(), ConfigIndex{0});
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);

  const std::size_t parameters = space.parameters().size();
  std::vector<std::vector<bool>> covered(parameters);
  std::size_t uncovered = 0;
  for (std::size_t p = 0; p < parameters; ++p) {
    covered[p].assign(space.parameters()[p].values.size(), false);
    uncovered += covered[p].size();
  }
  // Values no valid configuration takes (conv's TBX_XL = 9, say) can never be covered.
  std::vector<std::vector<bool>> possible(parameters);
  for (std::size_t p = 0; p < parameters; ++p) possible[p].assign(covered[p].size(), false);
  for (ConfigIndex c = 0; c < space.size(); ++c) {
    const ValueIndices values = space.value_indices(c);
    for (std::size_t p = 0; p < parameters; ++p) possible[p][values[p]] = true;
  }
  for (std::size_t p = 0; p < parameters; ++p)
    uncovered -= static_cast<std::size_t>(std::count(possible[p].begin(), possible[p].end(), false));

  std::vector<ConfigIndex> chosen;
  while (uncovered > 0) {
    ConfigIndex best = order.front();
    std::size_t best_gain = 0;
    for (ConfigIndex c : order) {
      const ValueIndices values = space.value_indices(c);
      std::size_t gain = 0;
      for (std::size_t p = 0; p < parameters; ++p) gain += covered[p][values[p]] ? 0 : 1;
      if (gain > best_gain) best = c, best_gain = gain;
    }
    const ValueIndices values = space.value_indices(best);
    for (std::size_t p = 0; p < parameters; ++p) {
      if (!covered[p][values[p]]) covered[p][values[p]] = true, --uncovered;
    }
    chosen.push_back(best);
  }
  return chosen;
}

// Every (parameter, value) pair that some valid configuration takes is in `configurations`.
inline void expect_every_value_covered(const Space& space, const std::vector<ConfigIndex>& configurations) {
  const std::size_t parameters = space.parameters().size();
  std::vector<std::set<std::uint32_t>> seen(parameters), possible(parameters);
  for (ConfigIndex c : configurations) {
    const ValueIndices values = space.value_indices(c);
    for (std::size_t p = 0; p < parameters; ++p) seen[p].insert(values[p]);
  }
  for (ConfigIndex c = 0; c < space.size(); ++c) {
    const ValueIndices values = space.value_indices(c);
    for (std::size_t p = 0; p < parameters; ++p) possible[p].insert(values[p]);
  }
  for (std::size_t p = 0; p < parameters; ++p)
    EXPECT_EQ(seen[p], possible[p]) << "not every value of " << space.parameters()[p].name << " is covered";
}

// "NAME=VALUE" for each value of a parameter that no valid configuration takes.
inline std::vector<std::string> values_never_taken(const Space& space) {
  const auto& parameters = space.parameters();
  std::vector<std::vector<bool>> taken(parameters.size());
  for (std::size_t p = 0; p < parameters.size(); ++p) taken[p].assign(parameters[p].values.size(), false);
  for (ConfigIndex c = 0; c < space.size(); ++c) {
    const ValueIndices values = space.value_indices(c);
    for (std::size_t p = 0; p < parameters.size(); ++p) taken[p][values[p]] = true;
  }
  std::vector<std::string> never;
  for (std::size_t p = 0; p < parameters.size(); ++p)
    for (std::size_t v = 0; v < taken[p].size(); ++v)
      if (!taken[p][v]) never.push_back(parameters[p].name + "=" + parameters[p].values[v].to_string());
  return never;
}

// The CLI's count of valid configurations (`steer space SPEC --json`); 0 on failure.
inline std::uint64_t cli_count(const std::filesystem::path& spec) {
  const std::string command = std::string(STEER_BINARY) + " space " + spec.string() + " --json 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return 0;
  std::string text;
  char buffer[4096];
  while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) text.append(buffer, n);
  const int status = pclose(pipe);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 0;
  return nlohmann::json::parse(text).at("count").get<std::uint64_t>();
}

// Whether the device can launch a configuration: threads per work-group and local memory
// within its limits (conv's space holds configurations that no GPU can launch).
inline bool fits_device(const KernelInstance& instance, const DeviceInfo& device) {
  const std::uint64_t threads = instance.block[0] * instance.block[1] * instance.block[2];
  return threads <= static_cast<std::uint64_t>(device.max_threads_per_block) &&
         instance.shared_memory_bytes <= device.max_shared_memory_per_block;
}

class BenchmarkOnOpencl : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!opencl_backend_built()) GTEST_SKIP() << "the OpenCL backend was not built";
    try {
      backend_ = make_opencl_backend({});
    } catch (const BackendError& error) {
      GTEST_SKIP() << "no OpenCL device: " << error.what();
    }
  }

  // Tunes `benchmark` at `size` with `searcher` for `tests` tests (one timed launch each, no
  // warm-up) and checks every result: ok where the device can launch the configuration, a
  // launch error where it cannot. Returns the results.
  std::vector<Result> tune_and_check(const std::string& benchmark, const std::string& size, Searcher& searcher,
                                     std::uint64_t tests) {
    const Spec spec = load_spec(spec_path(benchmark));
    const Space space = Space::build(spec.space);
    TuneOptions options;
    options.size = size;
    options.stop.tests = tests;
    options.run.warmup = 0;
    options.run.repetitions = 1;
    const auto start = std::chrono::steady_clock::now();
    const TuneSummary summary = tune(spec, space, *backend_, searcher, nullptr, options);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    const KernelProblem problem(spec, space, spec.size(size), Language::OpenCL);
    const DeviceInfo device = backend_->device();
    std::size_t launchable = 0;
    double max_error = 0;
    for (const Result& result : summary.results) {
      const bool fits = fits_device(problem.instance(result.config_index), device);
      launchable += fits ? 1 : 0;
      if (fits) {
        EXPECT_EQ(result.status, Status::Ok) << benchmark << " " << result.key() << ": " << to_string(result.status)
                                             << ": " << result.message;
        max_error = std::max(max_error, result.max_abs_error);
      } else {
        EXPECT_EQ(result.status, Status::LaunchError) << benchmark << " " << result.key() << " exceeds the device's "
                                                      << "limits, yet: " << to_string(result.status);
      }
    }
    EXPECT_EQ(summary.results.size(), tests);
    std::printf("[          ] %s: %zu configurations (%zu launchable) in %.1f s, %zu valid; largest |error| %.3g\n",
                benchmark.c_str(), summary.results.size(), launchable, seconds,
                static_cast<std::size_t>(summary.valid), max_error);
    return summary.results;
  }

  std::unique_ptr<Backend> backend_;
};

}  // namespace steer::benchmark_tests
