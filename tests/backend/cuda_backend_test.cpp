// The CUDA backend. NVRTC, the launch checks and the caches are tested on any machine;
// the tests that launch kernels need a GPU and skip, saying why, when there is none
// (on the H200: ctest -R cuda).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "backend/cuda/device_monitor.hpp"
#include "backend/cuda/launch_check.hpp"
#include "backend/worker/lru_cache.hpp"
#include "backend/cuda/nvrtc_compiler.hpp"
#include "steer/backend.hpp"
#include "steer/counters.hpp"

namespace steer {
namespace {

using ::testing::HasSubstr;

// --- Helpers -------------------------------------------------------------------------

template <typename T>
std::vector<std::byte> to_bytes(const std::vector<T>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <typename T>
std::vector<T> from_bytes(std::span<const std::byte> bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

template <typename T>
HostArgument buffer(std::string name, ElementType type, const std::vector<T>& values, bool output = false) {
  return HostArgument{std::move(name), true, type, to_bytes(values), output};
}

template <typename T>
HostArgument scalar(std::string name, ElementType type, T value) {
  return HostArgument{std::move(name), false, type, to_bytes(std::vector<T>{value}), false};
}

Program cuda_program(std::string source, std::string kernel_name, std::vector<HostArgument> arguments = {}) {
  Program program;
  program.language = Language::Cuda;
  program.source = std::move(source);
  program.source_name = "probe.cu";
  program.kernel_name = std::move(kernel_name);
  program.arguments = std::move(arguments);
  return program;
}

KernelInstance instance_with(std::vector<std::pair<std::string, std::string>> defines, std::uint64_t grid = 1,
                             std::uint64_t block = 1) {
  KernelInstance instance;
  instance.defines = std::move(defines);
  instance.grid = {grid, 1, 1};
  instance.block = {block, 1, 1};
  return instance;
}

std::vector<float> random_floats(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(n);
  for (float& v : values) v = dist(rng);
  return values;
}

bool is_elf(const std::vector<char>& image) {
  return image.size() > 4 && image[0] == 0x7F && image[1] == 'E' && image[2] == 'L' && image[3] == 'F';
}

constexpr const char* kVectorAdd = R"(
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
)";

// --- NVRTC (no GPU needed) -----------------------------------------------------------

TEST(NvrtcCompile, ProducesAnElfCubinForSm90) {
  std::string log = "untouched";
  std::vector<char> image =
      cuda::nvrtc_compile_cubin(cuda_program(kVectorAdd, "vector_add"), KernelInstance{}, 9, 0, &log);
  EXPECT_TRUE(is_elf(image)) << "not an ELF image: " << image.size() << " bytes";
  EXPECT_EQ(log, "");  // a clean kernel has no warnings
}

TEST(NvrtcCompile, AParameterNamedAsNvrtcsOwnHeaderUsesIsNamedInTheError) {
  const char* source = "extern \"C\" __global__ void copy(T* x) { x[0] = 1; }\n";
  try {
    cuda::nvrtc_compile_cubin(cuda_program(source, "copy"), instance_with({{"T", "float"}}), 9, 0);
    FAIL() << "a define named T compiled";
  } catch (const CompileError& e) {
    EXPECT_THAT(e.what(), HasSubstr("NVRTC's own header"));
    EXPECT_THAT(e.what(), HasSubstr("Rename the parameter (T=float)"));
  }
}

TEST(NvrtcCompile, SyntaxErrorGivesTheLogWithTheLine) {
  const char* source =
      "extern \"C\" __global__ void broken(float* x) {\n"
      "  x[0] = 1.0f\n"
      "  x[1] = 2.0f;\n"
      "}\n";
  std::string log;
  try {
    cuda::nvrtc_compile_cubin(cuda_program(source, "broken"), instance_with({{"TILE", "16"}}), 9, 0, &log);
    FAIL() << "a syntax error compiled";
  } catch (const CompileError& e) {
    const std::string message = e.what();
    EXPECT_THAT(message, HasSubstr("probe.cu(3)"));  // NVRTC names the line after the missing ';'
    EXPECT_THAT(message, HasSubstr("error"));
    EXPECT_THAT(message, HasSubstr("TILE=16"));  // the configuration that failed
    EXPECT_THAT(message, HasSubstr("'broken'"));
    EXPECT_THAT(log, HasSubstr("probe.cu(3)"));  // the log is handed out as well
  }
}

TEST(NvrtcCompile, DefinesReachTheCode) {
  const char* source = R"(
#if X != 3
#error X must be 3
#endif
extern "C" __global__ void k(int* out) { out[0] = X + sizeof(ELEMENT); }
)";
  const Program program = cuda_program(source, "k");
  EXPECT_TRUE(is_elf(cuda::nvrtc_compile_cubin(program, instance_with({{"X", "3"}, {"ELEMENT", "double"}}), 9, 0)));
  try {
    cuda::nvrtc_compile_cubin(program, instance_with({{"X", "4"}, {"ELEMENT", "double"}}), 9, 0);
    FAIL() << "X=4 passed the #if X != 3 check: the define did not reach the code";
  } catch (const CompileError& e) {
    EXPECT_THAT(e.what(), HasSubstr("X must be 3"));
    EXPECT_THAT(e.what(), HasSubstr("X=4 ELEMENT=double"));
  }
}

TEST(NvrtcCompile, UnknownKernelNameIsACompileError) {
  try {
    cuda::nvrtc_compile_cubin(cuda_program(kVectorAdd, "vector_sub"), KernelInstance{}, 9, 0);
    FAIL() << "compiled although the kernel does not exist";
  } catch (const CompileError& e) {
    EXPECT_THAT(e.what(), HasSubstr("vector_sub"));
    EXPECT_THAT(e.what(), HasSubstr("undefined"));
  }
}

TEST(NvrtcCompile, ResolvesTemplateKernelsToTheirSymbol) {
  const char* source = "template <int S> __global__ void scale(float* x) { x[threadIdx.x] *= S; }\n";
  cuda::Cubin cubin = cuda::nvrtc_compile(cuda_program(source, "scale<4>"), KernelInstance{}, 9, 0);
  EXPECT_TRUE(is_elf(cubin.image));
  EXPECT_EQ(cubin.symbol, "_Z5scaleILi4EEvPf");

  cubin = cuda::nvrtc_compile(cuda_program(kVectorAdd, "vector_add"), KernelInstance{}, 9, 0);
  EXPECT_EQ(cubin.symbol, "vector_add");  // extern "C": unmangled
}

TEST(NvrtcCompile, FindsProgramAndToolkitHeaders) {
  const auto dir = std::filesystem::temp_directory_path() / ("steer_nvrtc_include_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "probe_helpers.cuh") << "__device__ inline float twice(float x) { return 2 * x; }\n";
  const char* source = R"(
#include <cuda_fp16.h>
#include "probe_helpers.cuh"
extern "C" __global__ void k(__half* x) { x[0] = __float2half(twice(__half2float(x[0]))); }
)";
  Program program = cuda_program(source, "k");
  program.include_dirs = {dir.string()};
  std::string log;
  EXPECT_TRUE(is_elf(cuda::nvrtc_compile_cubin(program, KernelInstance{}, 9, 0, &log))) << log;
  std::filesystem::remove_all(dir);
}

TEST(NvrtcCompile, OptionsPutTheProgramsOwnLast) {
  Program program = cuda_program(kVectorAdd, "vector_add");
  program.include_dirs = {"/kernels/x"};
  program.compiler_options = {"--use_fast_math"};
  auto options = cuda::nvrtc_options(program, instance_with({{"TILE", "16"}}), 9, 0);
  ASSERT_GE(options.size(), 5u);
  EXPECT_EQ(options[0], "--gpu-architecture=sm_90");
  EXPECT_EQ(options[1], "--std=c++17");
  EXPECT_EQ(options[2], "-DTILE=16");
  EXPECT_EQ(options[3], "-I/kernels/x");
  EXPECT_EQ(options.back(), "--use_fast_math");

  // A program that names its own architecture or standard gets no second one.
  program.compiler_options = {"--gpu-architecture=sm_90a", "-std=c++20"};
  options = cuda::nvrtc_options(program, KernelInstance{}, 9, 0);
  EXPECT_EQ(std::count_if(options.begin(), options.end(),
                          [](const std::string& o) { return o.starts_with("--gpu-architecture"); }),
            1);
  EXPECT_EQ(std::count(options.begin(), options.end(), "--std=c++17"), 0);
  EXPECT_TRUE(is_elf(cuda::nvrtc_compile_cubin(program, KernelInstance{}, 9, 0)));
}

TEST(NvrtcCompile, RejectsAVirtualArchitectureAndBadOptions) {
  Program program = cuda_program(kVectorAdd, "vector_add");
  program.compiler_options = {"--gpu-architecture=compute_90"};
  EXPECT_THROW(cuda::nvrtc_compile_cubin(program, KernelInstance{}, 9, 0), CompileError);
  program.compiler_options = {"-O3"};  // NVRTC has no -O3
  try {
    cuda::nvrtc_compile_cubin(program, KernelInstance{}, 9, 0);
    FAIL() << "-O3 accepted";
  } catch (const CompileError& e) {
    EXPECT_THAT(e.what(), HasSubstr("-O3"));
  }
}

TEST(NvrtcCompile, SupportsHopper) {
  auto architectures = cuda::nvrtc_supported_architectures();
  EXPECT_NE(std::find(architectures.begin(), architectures.end(), 90), architectures.end());
  EXPECT_FALSE(cuda::nvrtc_version().empty());
}

// --- Launch checks and caches (no GPU needed) -----------------------------------------

cuda::KernelAttributes typical_kernel() {
  cuda::KernelAttributes kernel;
  kernel.max_threads_per_block = 1024;
  kernel.registers_per_thread = 32;
  kernel.static_shared_bytes = 4096;
  kernel.max_dynamic_shared_bytes = 48 * 1024 - 4096;
  return kernel;
}

cuda::DeviceLimits h200_limits() {
  cuda::DeviceLimits device;
  device.max_shared_per_block_optin = 232448;  // 227 KiB
  return device;
}

TEST(LaunchCheck, AcceptsALaunchWithinEveryLimit) {
  KernelInstance instance = instance_with({}, 65536, 256);
  instance.shared_memory_bytes = 200 * 1024;  // above 48 KiB: allowed with the opt-in
  EXPECT_EQ(cuda::launch_problem(instance, typical_kernel(), h200_limits()), std::nullopt);
}

TEST(LaunchCheck, NamesTheLimitThatIsExceeded) {
  const auto kernel = typical_kernel();
  const auto device = h200_limits();

  KernelInstance too_many_threads = instance_with({}, 1, 2048);
  too_many_threads.block = {32, 64, 1};
  auto problem = cuda::launch_problem(too_many_threads, kernel, device);
  ASSERT_TRUE(problem);
  EXPECT_THAT(*problem, HasSubstr("2048 threads"));

  cuda::KernelAttributes register_heavy = kernel;
  register_heavy.max_threads_per_block = 512;
  register_heavy.registers_per_thread = 128;
  problem = cuda::launch_problem(instance_with({}, 1, 1024), register_heavy, device);
  ASSERT_TRUE(problem);
  EXPECT_THAT(*problem, HasSubstr("512"));
  EXPECT_THAT(*problem, HasSubstr("128 registers"));

  KernelInstance deep_block = instance_with({}, 1, 1);
  deep_block.block = {1, 1, 128};
  problem = cuda::launch_problem(deep_block, kernel, device);
  ASSERT_TRUE(problem);
  EXPECT_THAT(*problem, HasSubstr("1024x1024x64"));

  KernelInstance wide_grid = instance_with({}, 1, 32);
  wide_grid.grid = {1, 70000, 1};
  problem = cuda::launch_problem(wide_grid, kernel, device);
  ASSERT_TRUE(problem);
  EXPECT_THAT(*problem, HasSubstr("grid 1x70000x1"));

  KernelInstance big_shared = instance_with({}, 1, 32);
  big_shared.shared_memory_bytes = 230 * 1024;
  problem = cuda::launch_problem(big_shared, kernel, device);
  ASSERT_TRUE(problem);
  EXPECT_THAT(*problem, HasSubstr("4096 static + 235520 dynamic"));
  EXPECT_THAT(*problem, HasSubstr("232448"));

  KernelInstance empty = instance_with({}, 0, 32);
  problem = cuda::launch_problem(empty, kernel, device);
  ASSERT_TRUE(problem);
  EXPECT_THAT(*problem, HasSubstr("empty"));
}

TEST(DeviceMonitor, NamesTheClockEventReasonsInWords) {
  EXPECT_EQ(cuda::clock_reasons_text(0), "");
  EXPECT_EQ(cuda::clock_reasons_text(0x1), "") << "idle is not a slowdown";
  EXPECT_EQ(cuda::clock_reasons_text(0x4), "power cap");
  EXPECT_EQ(cuda::clock_reasons_text(0x4 | 0x40 | 0x1), "power cap, thermal slowdown (hardware)");
  EXPECT_EQ(cuda::clock_reasons_text(0x20 | 0x8 | (1ull << 40)), "hardware slowdown, thermal slowdown (software)");
}

TEST(LruCache, EvictsTheLeastRecentlyUsedBeyondItsBudget) {
  worker::LruCache<int> cache(10);
  cache.insert("a", 1, 4);
  cache.insert("b", 2, 4);
  ASSERT_NE(cache.find("a"), nullptr);  // a is now the most recent
  cache.insert("c", 3, 4);              // 12 > 10: b goes
  EXPECT_EQ(cache.find("b"), nullptr);
  ASSERT_NE(cache.find("a"), nullptr);
  EXPECT_EQ(*cache.find("c"), 3);
  cache.insert("a", 5, 4);  // replacing keeps the cost right
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(*cache.find("a"), 5);
  cache.insert("huge", 6, 100);  // over budget alone: stays, the rest goes
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(*cache.find("huge"), 6);
}

// --- The factory ------------------------------------------------------------------------

TEST(CudaBackendFactory, IsBuiltWithTheToolkit) { EXPECT_TRUE(cuda_backend_built()); }

TEST(CudaBackendFactory, FailsWithAClearMessageWithoutAGpu) {
  try {
    make_cuda_backend({});
  } catch (const BackendError& e) {
    const std::string message = e.what();
    EXPECT_TRUE(message.find("no CUDA driver") != std::string::npos ||
                message.find("no CUDA device") != std::string::npos)
        << message;
    return;
  }
  GTEST_SKIP() << "a CUDA GPU is present";
}

TEST(CudaBackendFactory, RejectsADeviceIndexOutOfRange) {
  try {
    make_cuda_backend({.device = 999});
    FAIL() << "device 999 opened";
  } catch (const BackendError& e) {
    std::string message = e.what();
    if (message.find("no CUDA") != std::string::npos) GTEST_SKIP() << message;
    EXPECT_THAT(message, HasSubstr("device 999"));
  }
}

// --- On a GPU ---------------------------------------------------------------------------

class CudaGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      backend = make_cuda_backend({});
    } catch (const BackendError& e) {
      GTEST_SKIP() << "needs a CUDA GPU: " << e.what();
    }
  }

  RunResult run(const KernelInstance& instance, RunOptions options = quick()) {
    auto kernel = backend->compile(instance);
    return backend->run(*kernel, instance, options);
  }

  static RunOptions quick() {
    RunOptions options;
    options.warmup = 1;
    options.repetitions = 3;
    return options;
  }

  std::unique_ptr<Backend> backend;
};

// c = a + b for n not a multiple of the block.
constexpr int kVectorLength = (1 << 20) + 3;

struct VectorAddData {
  std::vector<float> a = random_floats(kVectorLength, 1), b = random_floats(kVectorLength, 2);
  std::vector<float> sum() const {
    std::vector<float> c(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) c[i] = a[i] + b[i];
    return c;
  }
  std::vector<HostArgument> arguments() const {
    return {buffer("a", ElementType::F32, a), buffer("b", ElementType::F32, b),
            buffer("c", ElementType::F32, std::vector<float>(a.size(), -7.0f), true),
            scalar("n", ElementType::I32, std::int32_t{kVectorLength})};
  }
};

KernelInstance vector_instance(std::vector<std::pair<std::string, std::string>> defines = {}, int block = 256) {
  return instance_with(std::move(defines), (kVectorLength + block - 1) / block, block);
}

TEST_F(CudaGpu, DescribesTheDevice) {
  DeviceInfo info = backend->device();
  EXPECT_EQ(info.backend, "cuda");
  EXPECT_EQ(info.vendor, "NVIDIA");
  EXPECT_FALSE(info.name.empty());
  EXPECT_GE(info.compute_capability_major, 5);
  EXPECT_GT(info.multiprocessors, 0);
  EXPECT_GT(info.global_memory_bytes, std::size_t{1} << 30);
  EXPECT_GE(info.max_shared_memory_per_block, 48u * 1024);  // the opt-in maximum
  EXPECT_EQ(info.max_threads_per_block, 1024);
  EXPECT_FALSE(info.driver_version.empty());
  std::cout << "device: " << info.name << ", sm_" << info.compute_capability_major << info.compute_capability_minor
            << ", " << info.multiprocessors << " SMs, " << (info.global_memory_bytes >> 20) << " MiB, "
            << info.max_shared_memory_per_block << " B shared/block, CUDA driver " << info.driver_version << "\n";
}

TEST_F(CudaGpu, VectorAddIsCorrectAndTimed) {
  VectorAddData data;
  backend->load(cuda_program(kVectorAdd, "vector_add", data.arguments()));
  RunOptions options = quick();
  options.repetitions = 10;
  RunResult result = run(vector_instance(), options);
  ASSERT_EQ(result.status, Status::Ok) << result.message;
  ASSERT_EQ(result.outputs.size(), 1u);
  EXPECT_EQ(from_bytes<float>(result.outputs[0]), data.sum());
  EXPECT_EQ(result.time.samples_ms.size(), 10u);
  for (double ms : result.time.samples_ms) {
    EXPECT_GT(ms, 0.0);
    EXPECT_LT(ms, 100.0);  // 12 MiB moved: microseconds on any recent GPU
  }
}

TEST_F(CudaGpu, StopsRepeatingOnceTheMaximumTotalTimeWasTimed) {
  VectorAddData data;
  backend->load(cuda_program(kVectorAdd, "vector_add", data.arguments()));
  RunOptions options = quick();
  options.repetitions = 50;
  options.max_total_ms = 1e-6;
  RunResult result = run(vector_instance(), options);
  ASSERT_EQ(result.status, Status::Ok) << result.message;
  EXPECT_EQ(result.time.samples_ms.size(), 1u);
}

TEST_F(CudaGpu, CollectsTheDefaultCountersWithExactInstructionCounts) {
  VectorAddData data;
  backend->load(cuda_program(kVectorAdd, "vector_add", data.arguments()));
  RunOptions options = quick();
  options.measure.counters = true;
  RunResult result = run(vector_instance(), options);
  ASSERT_EQ(result.status, Status::Ok) << result.message;
  EXPECT_EQ(from_bytes<float>(result.outputs[0]), data.sum()) << "outputs are read before profiling relaunches";
  EXPECT_GE(result.profiling_passes, 1);
  EXPECT_LE(result.profiling_passes, 6) << "goal: at most 6 passes for the default set";
  for (std::string_view metric : default_profiling_metrics()) {
    EXPECT_EQ(result.counters.count(std::string(metric)), 1u) << metric;
  }
  const std::uint64_t threads = static_cast<std::uint64_t>((kVectorLength + 255) / 256) * 256;
  EXPECT_EQ(result.counters.at("threads"), static_cast<double>(threads));
  // One FP32 add per element that is in range: exactly n thread-level FP32 instructions.
  EXPECT_EQ(result.counters.at("smsp__sass_thread_inst_executed_op_fp32_pred_on.sum"), kVectorLength);
  // a and b read from DRAM once (the caches are flushed before each pass): 2 n floats in 32-byte sectors.
  const double sectors = 2.0 * kVectorLength * 4 / 32;
  EXPECT_NEAR(result.counters.at("dram__sectors_read.sum"), sectors, 0.02 * sectors);
  std::cout << "passes " << result.profiling_passes << ", " << result.profiling_ms << " ms collecting; DRAM sectors read "
            << result.counters.at("dram__sectors_read.sum") << " (" << sectors << " expected), written "
            << result.counters.at("dram__sectors_write.sum") << " (" << sectors / 2 << " expected)\n";
}

TEST_F(CudaGpu, DropsAMetricTheDeviceLacksWithOneWarning) {
  VectorAddData data;
  backend->load(cuda_program(kVectorAdd, "vector_add", data.arguments()));
  RunOptions options = quick();
  options.measure.counters = true;
  options.measure.metrics = {"smsp__inst_executed.sum", "steer__no_such_metric.sum"};
  RunResult first = run(vector_instance(), options);
  ASSERT_EQ(first.status, Status::Ok) << first.message;
  EXPECT_EQ(first.counters.count("smsp__inst_executed.sum"), 1u);
  EXPECT_EQ(first.counters.count("steer__no_such_metric.sum"), 0u);
  ASSERT_EQ(first.warnings.size(), 1u);
  EXPECT_THAT(first.warnings[0], HasSubstr("steer__no_such_metric.sum"));
  RunResult second = run(vector_instance(), options);
  EXPECT_TRUE(second.warnings.empty()) << "said once";
}

TEST_F(CudaGpu, MeasuresEnergyPerLaunchOverAWindow) {
  VectorAddData data;
  backend->load(cuda_program(kVectorAdd, "vector_add", data.arguments()));
  RunOptions options = quick();
  options.measure.energy = true;
  options.measure.energy_window_s = 0.3;
  RunResult result = run(vector_instance(), options);
  ASSERT_EQ(result.status, Status::Ok) << result.message;
  ASSERT_TRUE(result.energy);
  const EnergyStats& e = *result.energy;
  EXPECT_GT(e.joules_per_launch, 0);
  EXPECT_GE(e.window_s, 0.3);
  EXPECT_GT(e.launches, 3);
  EXPECT_GT(e.average_watts, 20);
  EXPECT_LT(e.average_watts, 1500);
  EXPECT_NEAR(e.joules_per_launch * e.launches, e.average_watts * e.window_s, 1e-6 * e.average_watts);
  std::cout << e.joules_per_launch * 1e3 << " mJ per launch, " << e.average_watts << " W, spread " << e.spread
            << ", " << e.sm_clock_mhz << " MHz\n";
}

TEST_F(CudaGpu, RecordsTheClocksPowerAndTemperatureOfEveryTest) {
  VectorAddData data;
  backend->load(cuda_program(kVectorAdd, "vector_add", data.arguments()));
  RunResult result = run(vector_instance(), quick());
  ASSERT_EQ(result.status, Status::Ok) << result.message;
  ASSERT_TRUE(result.conditions) << "NVML is part of the driver that runs the GPU";
  const DeviceConditions& c = *result.conditions;
  EXPECT_GT(c.sm_clock_mhz, 100);
  EXPECT_GT(c.memory_clock_mhz, 100);
  EXPECT_GT(c.temperature_c, 0);
  EXPECT_LT(c.temperature_c, 120);
  std::cout << c.sm_clock_mhz << " MHz SM, " << c.memory_clock_mhz << " MHz memory, " << c.power_watts << " W of "
            << c.power_limit_watts << ", " << c.temperature_c << " C, throttle: '" << c.throttle << "'\n";
}

TEST_F(CudaGpu, RepeatsUntilTheMinimumTotalTime) {
  VectorAddData data;
  backend->load(cuda_program(kVectorAdd, "vector_add", data.arguments()));
  RunOptions options = quick();
  options.repetitions = 2;
  options.min_total_ms = 5;
  options.read_outputs = false;
  RunResult result = run(vector_instance(), options);
  ASSERT_EQ(result.status, Status::Ok) << result.message;
  EXPECT_TRUE(result.outputs.empty());
  double total = 0;
  for (double ms : result.time.samples_ms) total += ms;
  EXPECT_GE(total, 5.0);
  EXPECT_GT(result.time.samples_ms.size(), 2u);
}

TEST_F(CudaGpu, RestoresEveryBufferBeforeEachLaunch) {
  // Changes its input in place and accumulates into its output: without a restore, each
  // launch would see the previous one's results.
  const char* source = R"(
extern "C" __global__ void bump(float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { x[i] += 1.0f; y[i] += x[i]; }
}
)";
  const int n = 1000;
  std::vector<float> x(n), y(n, 10.0f);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  backend->load(cuda_program(source, "bump",
                             {buffer("x", ElementType::F32, x, true), buffer("y", ElementType::F32, y, true),
                              scalar("n", ElementType::I32, n)}));
  RunOptions options = quick();
  options.warmup = 3;
  options.repetitions = 5;
  for (int round = 0; round < 2; ++round) {  // and across run() calls
    RunResult result = run(instance_with({}, 4, 256), options);
    ASSERT_EQ(result.status, Status::Ok) << result.message;
    ASSERT_EQ(result.outputs.size(), 2u);
    auto x_out = from_bytes<float>(result.outputs[0]);
    auto y_out = from_bytes<float>(result.outputs[1]);
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(x_out[i], x[i] + 1.0f) << "element " << i << ", round " << round;
      ASSERT_EQ(y_out[i], 10.0f + x[i] + 1.0f) << "element " << i << ", round " << round;
    }
  }
}

// An application's launch (Backend::launch) through the worker: the inputs it gives are
// written over the arguments, a scalar it gives counts for that launch only, nothing is
// restored, and a test run afterwards sees the loaded inputs again.
TEST_F(CudaGpu, LaunchesOnTheApplicationsDataAndLeavesTheDeviceAsTheLaunchLeftIt) {
  const char* source = R"(
extern "C" __global__ void accumulate(float* y, const float* x, float scale, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += scale * x[i];
}
)";
  const int n = 1000;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  backend->load(cuda_program(source, "accumulate",
                             {buffer("y", ElementType::F32, std::vector<float>(n, 0.0f), true),
                              buffer("x", ElementType::F32, x), scalar("scale", ElementType::F32, 1.0f),
                              scalar("n", ElementType::I32, n)}));
  const KernelInstance instance = instance_with({}, 4, 256);
  const auto kernel = backend->compile(instance);
  std::vector<float> y(n, 1.0f), twos(n, 2.0f), read(n, -1.0f);
  const float scale = 3.0f;
  const auto bytes = [](const auto& values) { return std::as_bytes(std::span(values)); };
  RunResult launched = backend->launch(
      *kernel, instance,
      {.inputs = {bytes(y), bytes(twos), bytes(std::span(&scale, 1)), {}}, .outputs = {std::as_writable_bytes(std::span(read))}},
      10'000);
  ASSERT_EQ(launched.status, Status::Ok) << launched.message;
  EXPECT_EQ(launched.time.samples_ms.size(), 1u);
  for (int i = 0; i < n; ++i) ASSERT_EQ(read[i], 7.0f) << "element " << i;

  launched = backend->launch(*kernel, instance, {.outputs = {std::as_writable_bytes(std::span(read))}}, 10'000);
  ASSERT_EQ(launched.status, Status::Ok) << launched.message;
  for (int i = 0; i < n; ++i) ASSERT_EQ(read[i], 9.0f) << "element " << i << ": the loaded scale, the device's data";

  const RunResult tested = backend->run(*kernel, instance, quick());
  ASSERT_EQ(tested.status, Status::Ok) << tested.message;
  EXPECT_EQ(from_bytes<float>(tested.outputs.at(0)), x) << "a test restores the loaded inputs";
  EXPECT_THROW(backend->launch(*kernel, instance, {.inputs = {bytes(y)}}, 10'000), BackendError);
}

// Whether this process has loaded the CUDA driver: the backend itself never does, its worker
// does; a kernel run in this process needs it here.
bool driver_loaded_here() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("libcuda.so") != std::string::npos) return true;
  }
  return false;
}

TEST_F(CudaGpu, RunsKernelsInThisProcessWhenAskedAndInTheWorkerOtherwise) {
  const char* source = R"(
extern "C" __global__ void accumulate(float* y, const float* x, float scale, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += scale * x[i];
}
)";
  const int n = 1000;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  backend->load(cuda_program(source, "accumulate",
                             {buffer("y", ElementType::F32, std::vector<float>(n, 0.0f), true),
                              buffer("x", ElementType::F32, x), scalar("scale", ElementType::F32, 1.0f),
                              scalar("n", ElementType::I32, n)}));
  const KernelInstance instance = instance_with({}, 4, 256);
  const auto kernel = backend->compile(instance);
  const std::vector<float> y(n, 1.0f), twos(n, 2.0f);
  const float scale = 3.0f;
  const auto bytes = [](const auto& values) { return std::as_bytes(std::span(values)); };
  const auto launch = [&] {
    std::vector<float> read(n, -1.0f);
    const RunResult launched = backend->launch(
        *kernel, instance,
        {.inputs = {bytes(y), bytes(twos), bytes(std::span(&scale, 1)), {}}, .outputs = {std::as_writable_bytes(std::span(read))}},
        10'000);
    EXPECT_EQ(launched.status, Status::Ok) << launched.message;
    return read;
  };
  const bool loaded_before = driver_loaded_here();
  const std::vector<float> in_worker = launch();
  EXPECT_EQ(in_worker, std::vector<float>(n, 7.0f));
  if (!loaded_before) {
    EXPECT_FALSE(driver_loaded_here()) << "in the worker, CUDA is the worker's";
  }

  ASSERT_TRUE(backend->run_in_this_process(true));
  EXPECT_EQ(launch(), in_worker);
  EXPECT_TRUE(driver_loaded_here());
  const RunResult tested = backend->run(*kernel, instance, quick());
  ASSERT_EQ(tested.status, Status::Ok) << tested.message;
  EXPECT_EQ(from_bytes<float>(tested.outputs.at(0)), x) << "a test restores the loaded inputs here too";

  EXPECT_FALSE(backend->run_in_this_process(false));
  EXPECT_EQ(launch(), in_worker);
}

TEST_F(CudaGpu, PassesScalarsOfEveryWidth) {
  const char* source = R"(
extern "C" __global__ void scalars(unsigned char u8, double f64, long long i64, float f32, int i32,
                                   unsigned long long u64, double* out) {
  out[0] = u8; out[1] = f64; out[2] = (double)i64; out[3] = f32; out[4] = i32; out[5] = (double)u64;
}
)";
  backend->load(
      cuda_program(source, "scalars",
                   {scalar("u8", ElementType::U8, std::uint8_t{200}), scalar("f64", ElementType::F64, 0.125),
                    scalar("i64", ElementType::I64, std::int64_t{-(1LL << 40)}), scalar("f32", ElementType::F32, 2.5f),
                    scalar("i32", ElementType::I32, -17), scalar("u64", ElementType::U64, std::uint64_t{1} << 50),
                    buffer("out", ElementType::F64, std::vector<double>(6), true)}));
  RunResult result = run(KernelInstance{});
  ASSERT_EQ(result.status, Status::Ok) << result.message;
  EXPECT_EQ(from_bytes<double>(result.outputs.at(0)),
            (std::vector<double>{200, 0.125, -1099511627776.0, 2.5, -17, 1125899906842624.0}));
}

TEST_F(CudaGpu, RejectsAScalarOfTheWrongSize) {
  HostArgument n = scalar("n", ElementType::I32, std::int64_t{5});  // 8 bytes for a 4-byte type
  EXPECT_THROW(backend->load(cuda_program(kVectorAdd, "vector_add", {n})), BackendError);
}

// One kernel that fails in the way MODE says; MODE 0 is a correct vector add.
constexpr const char* kFaulty = R"(
extern "C" __global__ void faulty(const float* a, const float* b, float* c, int n, unsigned long long invalid) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#if MODE == 1
  if (i == 0) *reinterpret_cast<volatile float*>(invalid) = 1.0f;  // unmapped address
#elif MODE == 2
  if (i == 0) *reinterpret_cast<volatile float*>(reinterpret_cast<char*>(c) + 2) = 1.0f;  // misaligned
#elif MODE == 3
  if (i == 0) __trap();
#endif
  if (i < n) c[i] = a[i] + b[i];
}
)";

Program faulty_program(const VectorAddData& data) {
  auto arguments = data.arguments();
  arguments.push_back(scalar("invalid", ElementType::U64, std::uint64_t{16}));
  return cuda_program(kFaulty, "faulty", std::move(arguments));
}

TEST_F(CudaGpu, RecoversFromErrorsThatPoisonTheContext) {
  VectorAddData data;
  backend->load(faulty_program(data));
  // Compiled before the failures: their cubins must survive the worker being replaced.
  const KernelInstance good = vector_instance({{"MODE", "0"}});
  auto good_kernel = backend->compile(good);

  const std::pair<const char*, const char*> faults[] = {{"1", "CUDA_ERROR_ILLEGAL_ADDRESS"},
                                                        {"2", "CUDA_ERROR_MISALIGNED_ADDRESS"},
                                                        {"3", "CUDA_ERROR_"},
                                                        {"1", "CUDA_ERROR_"}};
  for (const auto& [mode, error] : faults) {
    SCOPED_TRACE(std::string("MODE=") + mode);
    RunResult failed = run(vector_instance({{"MODE", mode}}));
    EXPECT_EQ(failed.status, Status::LaunchError);
    EXPECT_THAT(failed.message, HasSubstr(error));
    EXPECT_THAT(failed.message, HasSubstr("replaced"));
    EXPECT_THAT(failed.message, HasSubstr("registers/thread"));  // the kernel's resources
    std::cout << failed.message << "\n";

    RunResult after = backend->run(*good_kernel, good, quick());
    ASSERT_EQ(after.status, Status::Ok) << after.message;
    EXPECT_EQ(from_bytes<float>(after.outputs.at(0)), data.sum());  // arguments uploaded again
  }
}

TEST_F(CudaGpu, OversizedBlockIsALaunchErrorThatKeepsTheWorker) {
  // At most 256 threads per block, by its launch bounds: the kernel's own limit.
  const char* source = R"(
extern "C" __global__ void __launch_bounds__(256) bounded_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
)";
  VectorAddData data;
  backend->load(cuda_program(source, "bounded_add", data.arguments()));
  auto expect_refused = [&](const KernelInstance& instance, const std::string& reason) {
    RunResult result = run(instance);
    EXPECT_EQ(result.status, Status::LaunchError) << reason;
    EXPECT_THAT(result.message, HasSubstr(reason));
    EXPECT_THAT(result.message, HasSubstr("was not made"));
    EXPECT_THAT(result.message, ::testing::Not(HasSubstr("replaced")));
    std::cout << result.message << "\n";
  };

  KernelInstance instance = vector_instance({}, 32);
  instance.block = {32, 32, 1};  // within the device's limits, over the kernel's
  expect_refused(instance, "1024 threads, more than the 256 this kernel can launch with");
  instance.block = {2048, 1, 1};
  expect_refused(instance, "block 2048x1x1 exceeds the device's limit of 1024x1024x64");
  instance.block = {32, 1, 1};
  instance.grid = {1, 1u << 20, 1};
  expect_refused(instance, "grid 1x1048576x1 exceeds the device's limit");

  RunResult result = run(vector_instance({}, 256));
  ASSERT_EQ(result.status, Status::Ok) << result.message;
  EXPECT_EQ(from_bytes<float>(result.outputs.at(0)), data.sum());
}

TEST_F(CudaGpu, UsesDynamicSharedMemoryBeyond48KiB) {
  // Each block stages its slice of x through BYTES of dynamic shared memory, reversed.
  const char* source = R"(
extern "C" __global__ void stage(const int* x, int* y) {
  extern __shared__ int tile[];
  const int count = BYTES / sizeof(int);
  const int* in = x + blockIdx.x * count;
  for (int i = threadIdx.x; i < count; i += blockDim.x) tile[count - 1 - i] = in[i];
  __syncthreads();
  for (int i = threadIdx.x; i < count; i += blockDim.x) y[blockIdx.x * count + i] = tile[i];
}
)";
  const std::size_t bytes = 200 * 1024;
  if (backend->device().max_shared_memory_per_block < bytes) GTEST_SKIP() << "the GPU has less shared memory";
  const int count = static_cast<int>(bytes / sizeof(int)), blocks = 4;
  std::vector<int> x(static_cast<std::size_t>(count * blocks));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int>(i * 7 + 1);
  backend->load(cuda_program(
      source, "stage",
      {buffer("x", ElementType::I32, x), buffer("y", ElementType::I32, std::vector<int>(x.size()), true)}));
  KernelInstance instance = instance_with({{"BYTES", std::to_string(bytes)}}, blocks, 256);
  instance.shared_memory_bytes = bytes;
  RunResult result = run(instance);
  ASSERT_EQ(result.status, Status::Ok) << result.message;
  auto y = from_bytes<int>(result.outputs.at(0));
  for (int b = 0; b < blocks; ++b) {
    for (int i = 0; i < count; ++i) ASSERT_EQ(y[b * count + i], x[b * count + count - 1 - i]) << b << ", " << i;
  }

  instance.shared_memory_bytes = backend->device().max_shared_memory_per_block + 1;
  result = run(instance);
  EXPECT_EQ(result.status, Status::LaunchError);
  EXPECT_THAT(result.message, HasSubstr("shared memory"));
}

// Spins for SPIN_US microseconds of GPU time, then adds.
constexpr const char* kSpin = R"(
extern "C" __global__ void spin(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#if SPIN_US > 0
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); } while (now - start < SPIN_US * 1000ull);
#endif
  if (i < n) c[i] = a[i] + b[i];
}
)";

TEST_F(CudaGpu, TimesTheKernelAndNotTheRestore) {
  VectorAddData data;
  backend->load(cuda_program(kSpin, "spin", data.arguments()));
  RunOptions options = quick();
  options.repetitions = 5;
  // One block, so that all threads spin at once.
  RunResult result = run(instance_with({{"SPIN_US", "2000"}}, 1, 32), options);
  ASSERT_EQ(result.status, Status::Ok) << result.message;
  for (double ms : result.time.samples_ms) {
    EXPECT_GE(ms, 2.0);
    EXPECT_LT(ms, 2.5);
  }

  // 512 MiB restored before every launch (≈0.25 ms at the H200's bandwidth) for a kernel
  // that reads one element: the samples must hold the kernel alone.
  const char* source = R"(
extern "C" __global__ void first(const float* big, float* out) { out[0] = big[0]; }
)";
  std::vector<float> big((std::size_t{512} << 20) / sizeof(float), 1.5f);
  backend->load(cuda_program(
      source, "first",
      {buffer("big", ElementType::F32, big), buffer("out", ElementType::F32, std::vector<float>(1), true)}));
  big = {};
  result = run(instance_with({}, 1, 1), options);
  ASSERT_EQ(result.status, Status::Ok) << result.message;
  EXPECT_EQ(from_bytes<float>(result.outputs.at(0)), std::vector<float>{1.5f});
  for (double ms : result.time.samples_ms) EXPECT_LT(ms, 0.05);
}

TEST_F(CudaGpu, SlowLaunchTimesOutAndTheNextRuns) {
  VectorAddData data;
  backend->load(cuda_program(kSpin, "spin", data.arguments()));
  RunOptions options = quick();
  options.timeout_ms = 300;
  const auto started = std::chrono::steady_clock::now();
  RunResult result = run(vector_instance({{"SPIN_US", "5000000"}}), options);
  const double waited_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(result.status, Status::Timeout) << result.message;
  EXPECT_THAT(result.message, HasSubstr("300 ms"));
  std::cout << result.message << "\n";
  std::cout << "a 5 s kernel with a 300 ms limit returned after " << waited_ms << " ms\n";
  EXPECT_LT(waited_ms, 4000) << "ending the worker did not stop the kernel";

  result = run(vector_instance({{"SPIN_US", "0"}}), options);
  ASSERT_EQ(result.status, Status::Ok) << result.message;
  EXPECT_EQ(from_bytes<float>(result.outputs.at(0)), data.sum());
}

TEST_F(CudaGpu, CompilesFromFourThreadsWhileRunning) {
  const char* source = R"(
extern "C" __global__ void scale(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __fmul_rn(x[i], SCALE) + OFFSET;  // no fused multiply-add: exact on the host too
}
)";
  const int n = 4096;
  const std::vector<float> x = random_floats(n, 3);
  backend->load(
      cuda_program(source, "scale",
                   {buffer("x", ElementType::F32, x), buffer("y", ElementType::F32, std::vector<float>(n), true),
                    scalar("n", ElementType::I32, n)}));
  auto instance_for = [](int scale, int offset) {
    return instance_with({{"SCALE", std::to_string(scale)}, {"OFFSET", std::to_string(offset)}}, n / 128, 128);
  };
  auto expect_scaled = [&](const RunResult& result, int scale, int offset) {
    ASSERT_EQ(result.status, Status::Ok) << result.message;
    auto y = from_bytes<float>(result.outputs.at(0));
    for (int i = 0; i < n; ++i) ASSERT_EQ(y[i], x[i] * scale + offset) << "SCALE=" << scale << " i=" << i;
  };

  const KernelInstance base = instance_for(1, 0);
  auto base_kernel = backend->compile(base);

  constexpr int kThreads = 4, kPerThread = 6;
  std::atomic<int> finished{0};
  std::vector<std::future<std::vector<std::unique_ptr<CompiledKernel>>>> compiles;
  for (int t = 0; t < kThreads; ++t) {
    compiles.push_back(std::async(std::launch::async, [&, t] {
      std::vector<std::unique_ptr<CompiledKernel>> kernels;
      for (int k = 0; k < kPerThread; ++k) kernels.push_back(backend->compile(instance_for(t + 2, k)));
      ++finished;
      return kernels;
    }));
  }
  int runs_meanwhile = 0;
  while (finished < kThreads) {
    expect_scaled(backend->run(*base_kernel, base, quick()), 1, 0);
    ++runs_meanwhile;
  }
  std::cout << runs_meanwhile << " runs while 4 threads compiled " << kThreads * kPerThread << " kernels\n";
  EXPECT_GT(runs_meanwhile, 0);

  for (int t = 0; t < kThreads; ++t) {
    auto kernels = compiles[t].get();
    for (int k = 0; k < kPerThread; ++k) {
      expect_scaled(backend->run(*kernels[k], instance_for(t + 2, k), quick()), t + 2, k);
    }
  }

  // Compiling a configuration again is served from the cubin cache.
  auto again = backend->compile(instance_for(2, 0));
  EXPECT_LT(again->compile_ms, 5.0);
  expect_scaled(backend->run(*again, instance_for(2, 0), quick()), 2, 0);
}

TEST_F(CudaGpu, TwoBackendsRunSideBySide) {
  VectorAddData data;
  backend->load(cuda_program(kVectorAdd, "vector_add", data.arguments()));
  auto second = make_cuda_backend({});
  VectorAddData other;
  other.a = random_floats(kVectorLength, 7);
  second->load(faulty_program(other));

  // A fault in one backend's worker leaves the other alone.
  RunResult failed =
      second->run(*second->compile(vector_instance({{"MODE", "1"}})), vector_instance({{"MODE", "1"}}), quick());
  EXPECT_EQ(failed.status, Status::LaunchError);
  RunResult first_result = run(vector_instance());
  ASSERT_EQ(first_result.status, Status::Ok) << first_result.message;
  EXPECT_EQ(from_bytes<float>(first_result.outputs.at(0)), data.sum());
  RunResult second_result =
      second->run(*second->compile(vector_instance({{"MODE", "0"}})), vector_instance({{"MODE", "0"}}), quick());
  ASSERT_EQ(second_result.status, Status::Ok) << second_result.message;
  EXPECT_EQ(from_bytes<float>(second_result.outputs.at(0)), other.sum());
}

TEST_F(CudaGpu, CompileErrorsAndStaleKernelsAreReported) {
  VectorAddData data;
  const Program program = cuda_program(kVectorAdd, "vector_add", data.arguments());
  EXPECT_THROW(backend->compile(vector_instance()), BackendError);  // nothing loaded yet
  backend->load(program);
  auto kernel = backend->compile(vector_instance());

  Program broken = program;
  broken.source = "extern \"C\" __global__ void vector_add( {";
  backend->load(broken);
  EXPECT_THROW(backend->compile(vector_instance()), CompileError);
  // The kernel was compiled for the previous program, whose arguments are gone.
  EXPECT_THROW(backend->run(*kernel, vector_instance(), quick()), BackendError);

  backend->load(program);
  RunResult result = run(vector_instance());
  ASSERT_EQ(result.status, Status::Ok) << result.message;
  EXPECT_EQ(from_bytes<float>(result.outputs.at(0)), data.sum());
}

TEST_F(CudaGpu, RefusesAnOpenClProgram) {
  Program program = cuda_program(kVectorAdd, "vector_add");
  program.language = Language::OpenCL;
  EXPECT_THROW(backend->load(program), BackendError);
}

}  // namespace
}  // namespace steer
