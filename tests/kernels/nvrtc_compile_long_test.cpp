// Every benchmark's CUDA kernel compiles for the H200 (sm_90) in a sample of its
// configurations. NVRTC needs no GPU, so this runs in CI.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backend/cuda/nvrtc_compiler.hpp"
#include "steer/backend.hpp"
#include "steer/space.hpp"
#include "steer/spec.hpp"

namespace steer {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kSampleSize = 50;  // plus the first and last configuration
constexpr std::uint64_t kSeed = 20261130;  // a fixed sample: a failure reproduces

// Benchmark folders that hold a kernel.cu, by name.
std::vector<std::string> cuda_benchmarks() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(fs::path(STEER_SOURCE_DIR) / "kernels")) {
    if (entry.is_directory() && fs::exists(entry.path() / "kernel.cu")) names.push_back(entry.path().filename());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The program as the tuner builds it (tuner/kernel_problem.cpp), without arguments: the
// compiler never sees them.
Program cuda_program(const Spec& spec) {
  const KernelSpec& kernel = *spec.kernel;
  const fs::path& source = kernel.sources.at(Language::Cuda);
  Program program;
  program.language = Language::Cuda;
  program.source = read_text(source);
  program.source_name = source.filename().string();
  program.kernel_name = kernel.name;
  program.compiler_options = kernel.compiler_options;
  program.include_dirs.push_back(source.parent_path().string());
  return program;
}

std::vector<ConfigIndex> sample_configurations(const Space& space) {
  std::mt19937_64 rng(kSeed);
  std::vector<ConfigIndex> sample = space.sample(rng, kSampleSize);
  sample.push_back(0);
  sample.push_back(space.size() - 1);
  std::sort(sample.begin(), sample.end());
  sample.erase(std::unique(sample.begin(), sample.end()), sample.end());
  return sample;
}

KernelInstance defines_of(const Space& space, ConfigIndex index) {
  KernelInstance instance;
  instance.config_index = index;
  const std::vector<Value> values = space.values(index);
  for (std::size_t p = 0; p < values.size(); ++p) {
    instance.defines.emplace_back(space.parameters()[p].name, values[p].to_string());
  }
  return instance;
}

class CudaKernelCompiles : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaKernelCompiles, ForSm90InASampleOfConfigurations) {
  const fs::path folder = fs::path(STEER_SOURCE_DIR) / "kernels" / GetParam();
  const Spec spec = load_spec(folder / "spec.json");
  ASSERT_TRUE(spec.kernel) << folder << " has a kernel.cu, but its spec.json has no 'kernel' section";
  ASSERT_TRUE(spec.kernel->sources.contains(Language::Cuda))
      << folder << " has a kernel.cu, but its spec.json names no CUDA source";
  const Program program = cuda_program(spec);
  const Space space = Space::build(spec.space);
  const std::vector<ConfigIndex> sample = sample_configurations(space);

  // NVRTC takes ~0.1 s a configuration: compile on every core.
  std::atomic<std::size_t> next{0};
  std::mutex failures_mutex;
  std::vector<std::string> failures;
  auto work = [&] {
    for (std::size_t i = next++; i < sample.size(); i = next++) {
      try {
        std::string log;
        std::vector<char> image = cuda::nvrtc_compile_cubin(program, defines_of(space, sample[i]), 9, 0, &log);
        if (image.size() < 4 || image[0] != 0x7F || image[1] != 'E') {
          throw Error("NVRTC returned something that is not an ELF cubin");
        }
      } catch (const Error& e) {
        std::lock_guard lock(failures_mutex);
        failures.push_back(space.key(sample[i]) + ": " + e.what());
      }
    }
  };
  std::vector<std::thread> workers(std::max(1u, std::thread::hardware_concurrency()));
  for (std::thread& worker : workers) worker = std::thread(work);
  for (std::thread& worker : workers) worker.join();

  std::sort(failures.begin(), failures.end());
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << sample.size() << " configurations of " << GetParam()
                                << " failed to compile; the first:\n"
                                << (failures.empty() ? "" : failures.front());
}

INSTANTIATE_TEST_SUITE_P(Benchmarks, CudaKernelCompiles, ::testing::ValuesIn(cuda_benchmarks()),
                         [](const auto& info) { return info.param; });
// Until a benchmark has a kernel.cu there is nothing to instantiate.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CudaKernelCompiles);

}  // namespace
}  // namespace steer
