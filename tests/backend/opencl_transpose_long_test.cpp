// The transpose benchmark's OpenCL kernel: every configuration of the small size matches
// the reference on the OpenCL device (PoCL in CI). Minutes: label long.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "measure/validation.hpp"
#include "steer/backend.hpp"
#include "steer/reference.hpp"
#include "steer/space.hpp"
#include "steer/spec.hpp"
#include "tuner/kernel_problem.hpp"

namespace steer {
namespace {

namespace fs = std::filesystem;

const fs::path kSpecPath = fs::path(STEER_SOURCE_DIR) / "kernels" / "transpose" / "spec.json";

// Non-square, so that a mix-up of M and N shows; 64 × 3 columns hold the widest tile
// (TILE_SIZE_X · VECTOR_TYPE = 64) three times.
ProblemSize test_size() { return {.name = "test", .variables = {{"M", 128}, {"N", 192}}}; }

// Configurations to test: all of them with STEER_TRANSPOSE_ALL=1; otherwise, to keep the
// test short on PoCL (a build per configuration), a fixed random sample plus, for every
// combination of the switches (VECTOR_TYPE, CR, LOCAL_MEM, PADD_LOCAL, DIAGONAL_MAP), its
// first configuration.
std::vector<ConfigIndex> configurations_to_test(const Space& space) {
  constexpr std::uint64_t kSample = 300, kSeed = 20261130;
  if (const char* all = std::getenv("STEER_TRANSPOSE_ALL"); all != nullptr && std::string(all) == "1") {
    std::vector<ConfigIndex> every(space.size());
    for (ConfigIndex i = 0; i < space.size(); ++i) every[i] = i;
    return every;
  }
  std::mt19937_64 rng(kSeed);
  const std::vector<ConfigIndex> sample = space.sample(rng, kSample);
  std::set<ConfigIndex> chosen(sample.begin(), sample.end());

  std::vector<std::size_t> switches;
  for (const char* name : {"VECTOR_TYPE", "CR", "LOCAL_MEM", "PADD_LOCAL", "DIAGONAL_MAP"})
    switches.push_back(*space.find_parameter(name));
  std::set<std::vector<std::uint32_t>> combinations_seen;
  for (ConfigIndex i = 0; i < space.size(); ++i) {
    const ValueIndices values = space.value_indices(i);
    std::vector<std::uint32_t> combination;
    for (std::size_t parameter : switches) combination.push_back(values[parameter]);
    if (combinations_seen.insert(combination).second) chosen.insert(i);
  }
  return {chosen.begin(), chosen.end()};
}

class OpenclTransposeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!opencl_backend_built()) GTEST_SKIP() << "the OpenCL backend was not built";
    try {
      backend_ = make_opencl_backend({});
    } catch (const BackendError& error) {
      GTEST_SKIP() << "no OpenCL device: " << error.what();
    }
  }

  std::unique_ptr<Backend> backend_;
};

TEST_F(OpenclTransposeTest, EveryConfigurationMatchesTheReference) {
  const Spec spec = load_spec(kSpecPath);
  const Space space = Space::build(spec.space);
  ASSERT_EQ(space.size(), 1836u);
  const KernelProblem problem(spec, space, test_size(), Language::OpenCL);
  backend_->load(problem.program());

  ASSERT_EQ(problem.outputs().size(), 1u);
  const HostArgument& out = problem.program().arguments[problem.outputs()[0]];
  ReferenceOutputs expected{std::vector<std::byte>(out.data.size())};
  find_reference(spec.reference.cpu_function)(ReferenceInput{problem.size(), problem.program().arguments}, expected);

  const std::vector<ConfigIndex> configurations = configurations_to_test(space);
  std::vector<std::string> failures;
  std::mutex failures_mutex;
  std::atomic<std::size_t> next{0};
  std::atomic<double> compile_ms{0};
  const auto start = std::chrono::steady_clock::now();
  // Two threads: one builds while the other runs (run() serialises the launches).
  auto test_configurations = [&] {
    for (std::size_t k = next++; k < configurations.size(); k = next++) {
      const ConfigIndex config = configurations[k];
      std::string failure;
      try {
        const KernelInstance instance = problem.instance(config);
        const auto kernel = backend_->compile(instance);
        compile_ms += kernel->compile_ms;
        const RunResult run = backend_->run(*kernel, instance, {.warmup = 0, .repetitions = 1});
        if (run.status != Status::Ok) {
          failure = fmt::format("{}: {}", to_string(run.status), run.message);
        } else {
          const ValidationResult check = validate_output(out.type, run.outputs.at(0), expected[0], 0, 0);
          if (!check.ok) failure = check.message;
        }
      } catch (const std::exception& error) {
        failure = error.what();
      }
      if (!failure.empty()) {
        std::lock_guard lock(failures_mutex);
        failures.push_back(space.key(config) + ": " + failure);
      }
    }
  };
  {
    std::jthread helper(test_configurations);
    test_configurations();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[          ] %zu of %llu configurations in %.1f s: %.0f ms per configuration, of which %.0f ms "
              "building (summed over two threads)\n",
              configurations.size(), static_cast<unsigned long long>(space.size()), seconds,
              1e3 * seconds / static_cast<double>(configurations.size()),
              compile_ms.load() / static_cast<double>(configurations.size()));

  EXPECT_TRUE(failures.empty()) << failures.size() << " configurations failed; the first: " << failures.front();
}

}  // namespace
}  // namespace steer
