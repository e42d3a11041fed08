// The OpenCL backend on whatever device 0 is (PoCL's CPU device in CI).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <numeric>
#include <thread>

#include <fmt/format.h>

#include "steer/backend.hpp"

namespace steer {
namespace {

constexpr int kElements = 1 << 16;

HostArgument float_buffer(std::string name, const std::vector<float>& values, bool output = false) {
  HostArgument argument{.name = std::move(name), .type = ElementType::F32, .output = output};
  argument.data.resize(values.size() * sizeof(float));
  std::memcpy(argument.data.data(), values.data(), argument.data.size());
  return argument;
}

HostArgument int_scalar(std::string name, std::int32_t value) {
  HostArgument argument{.name = std::move(name), .is_buffer = false, .type = ElementType::I32};
  argument.data.resize(sizeof value);
  std::memcpy(argument.data.data(), &value, sizeof value);
  return argument;
}

std::vector<float> as_floats(std::span<const std::byte> bytes) {
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

std::vector<float> iota(float first) {
  std::vector<float> values(kElements);
  std::iota(values.begin(), values.end(), first);
  return values;
}

// c = a + SCALE * b, with `c` starting as zeros.
Program vector_add_program() {
  Program program;
  program.language = Language::OpenCL;
  program.source_name = "vector_add.cl";
  program.kernel_name = "vector_add";
  program.source = R"(
    __kernel void vector_add(__global float* c, __global const float* a, __global const float* b, const int n) {
      const int i = get_global_id(0);
      if (i < n) c[i] = a[i] + SCALE * b[i];
    })";
  program.arguments = {float_buffer("c", std::vector<float>(kElements, 0.0f), true), float_buffer("a", iota(0)),
                       float_buffer("b", iota(1)), int_scalar("n", kElements)};
  return program;
}

KernelInstance instance_1d(std::uint64_t block, std::vector<std::pair<std::string, std::string>> defines = {}) {
  KernelInstance instance;
  instance.defines = std::move(defines);
  instance.block = {block, 1, 1};
  instance.grid = {(kElements + block - 1) / block, 1, 1};
  return instance;
}

class OpenclBackendTest : public ::testing::Test {
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

TEST_F(OpenclBackendTest, DescribesTheDevice) {
  const DeviceInfo info = backend_->device();
  EXPECT_EQ(info.backend, "opencl");
  EXPECT_FALSE(info.name.empty());
  EXPECT_FALSE(info.driver_version.empty());
  EXPECT_GT(info.max_threads_per_block, 0);
  EXPECT_GT(info.max_shared_memory_per_block, 0u);
  EXPECT_GT(info.global_memory_bytes, 0u);
  EXPECT_GT(info.multiprocessors, 0);
}

TEST_F(OpenclBackendTest, UnknownDeviceIndexNamesTheDevices) {
  try {
    make_opencl_backend({.device = 1000});
    FAIL() << "expected BackendError";
  } catch (const BackendError& error) {
    EXPECT_NE(std::string(error.what()).find("device 1000 does not exist"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find(backend_->device().name), std::string::npos) << error.what();
  }
}

TEST_F(OpenclBackendTest, CompileBeforeLoadIsAnError) {
  EXPECT_THROW(backend_->compile(instance_1d(64, {{"SCALE", "2"}})), BackendError);
}

TEST_F(OpenclBackendTest, VectorAddCompilesRunsTimesAndReadsBack) {
  backend_->load(vector_add_program());
  const KernelInstance instance = instance_1d(64, {{"SCALE", "2.0f"}});
  const auto kernel = backend_->compile(instance);
  EXPECT_GT(kernel->compile_ms, 0);

  const RunResult result = backend_->run(*kernel, instance, {.warmup = 2, .repetitions = 5});
  ASSERT_EQ(result.status, Status::Ok) << result.message;
  EXPECT_EQ(result.time.repetitions, 5);
  ASSERT_EQ(result.time.samples_ms.size(), 5u);
  for (double sample : result.time.samples_ms) EXPECT_GT(sample, 0);
  EXPECT_LE(result.time.min_ms, result.time.median_ms);
  EXPECT_LE(result.time.median_ms, result.time.max_ms);

  ASSERT_EQ(result.outputs.size(), 1u);
  const std::vector<float> c = as_floats(result.outputs[0]);
  ASSERT_EQ(c.size(), static_cast<std::size_t>(kElements));
  for (int i = 0; i < kElements; ++i) ASSERT_EQ(c[i], i + 2.0f * (i + 1)) << "at " << i;
}

TEST_F(OpenclBackendTest, RepeatsUntilTheMinimumTotalTime) {
  backend_->load(vector_add_program());
  const KernelInstance instance = instance_1d(64, {{"SCALE", "1"}});
  const auto kernel = backend_->compile(instance);
  const RunResult result = backend_->run(*kernel, instance, {.warmup = 0, .repetitions = 2, .min_total_ms = 5});
  ASSERT_EQ(result.status, Status::Ok) << result.message;
  EXPECT_GE(result.time.samples_ms.size(), 2u);
  EXPECT_GE(std::accumulate(result.time.samples_ms.begin(), result.time.samples_ms.end(), 0.0), 5.0);
}

TEST_F(OpenclBackendTest, StopsRepeatingOnceTheMaximumTotalTimeWasTimed) {
  backend_->load(vector_add_program());
  const KernelInstance instance = instance_1d(64, {{"SCALE", "1"}});
  const auto kernel = backend_->compile(instance);
  // Any launch takes longer than 1 ns: one timed launch, not 50.
  RunResult capped = backend_->run(*kernel, instance, {.warmup = 0, .repetitions = 50, .max_total_ms = 1e-6});
  ASSERT_EQ(capped.status, Status::Ok) << capped.message;
  EXPECT_EQ(capped.time.samples_ms.size(), 1u);
  RunResult plain = backend_->run(*kernel, instance, {.warmup = 0, .repetitions = 50});
  EXPECT_EQ(plain.time.samples_ms.size(), 50u);
  // The minimum total still comes first.
  RunResult both = backend_->run(*kernel, instance, {.warmup = 0, .repetitions = 50, .min_total_ms = 2, .max_total_ms = 1e-6});
  EXPECT_GE(std::accumulate(both.time.samples_ms.begin(), both.time.samples_ms.end(), 0.0), 2.0);
}

TEST_F(OpenclBackendTest, SkipsReadingOutputsWhenNotAsked) {
  backend_->load(vector_add_program());
  const KernelInstance instance = instance_1d(64, {{"SCALE", "1"}});
  const auto kernel = backend_->compile(instance);
  const RunResult result = backend_->run(*kernel, instance, {.repetitions = 1, .read_outputs = false});
  ASSERT_EQ(result.status, Status::Ok) << result.message;
  EXPECT_TRUE(result.outputs.empty());
}

// The kernel changes its input and accumulates into its output: only if both are restored
// before every launch is the result that of a single launch.
TEST_F(OpenclBackendTest, RestoresInputsAndOutputsBeforeEveryLaunch) {
  Program program;
  program.language = Language::OpenCL;
  program.source_name = "accumulate.cl";
  program.kernel_name = "accumulate";
  program.source = R"(
    __kernel void accumulate(__global float* out, __global float* a) {
      const int i = get_global_id(0);
      a[i] += 1.0f;
      out[i] += a[i];
    })";
  program.arguments = {float_buffer("out", std::vector<float>(kElements, 0.0f), true), float_buffer("a", iota(0))};
  backend_->load(program);
  const KernelInstance instance = instance_1d(128);
  const auto kernel = backend_->compile(instance);
  const RunResult result = backend_->run(*kernel, instance, {.warmup = 3, .repetitions = 4});
  ASSERT_EQ(result.status, Status::Ok) << result.message;
  const std::vector<float> out = as_floats(result.outputs.at(0));
  for (int i = 0; i < kElements; ++i) ASSERT_EQ(out[i], i + 1.0f) << "at " << i;
}

TEST_F(OpenclBackendTest, CompileErrorCarriesTheLogAndTheDefines) {
  backend_->load(vector_add_program());
  try {
    backend_->compile(instance_1d(64, {{"SCALE", "2+*oops"}, {"MARKER", "17"}}));
    FAIL() << "expected CompileError";
  } catch (const CompileError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("vector_add.cl"), std::string::npos) << message;
    EXPECT_NE(message.find("MARKER=17"), std::string::npos) << message;
    EXPECT_NE(message.find("error"), std::string::npos) << message;  // from the compiler's log
  }
}

TEST_F(OpenclBackendTest, MissingKernelIsACompileError) {
  Program program = vector_add_program();
  program.kernel_name = "no_such_kernel";
  backend_->load(program);
  EXPECT_THROW(backend_->compile(instance_1d(64, {{"SCALE", "1"}})), CompileError);
}

TEST_F(OpenclBackendTest, OversizedWorkGroupIsALaunchError) {
  backend_->load(vector_add_program());
  const auto kernel = backend_->compile(instance_1d(64, {{"SCALE", "1"}}));
  const auto limit = static_cast<std::uint64_t>(backend_->device().max_threads_per_block);

  KernelInstance too_wide = instance_1d(64);
  too_wide.block = {limit * 2, 1, 1};
  const RunResult wide = backend_->run(*kernel, too_wide, {});
  EXPECT_EQ(wide.status, Status::LaunchError);
  EXPECT_NE(wide.message.find("exceeds"), std::string::npos) << wide.message;

  // Within every per-dimension limit, too many work-items in total.
  KernelInstance too_many = instance_1d(64);
  too_many.block = {limit, 2, 1};
  const RunResult many = backend_->run(*kernel, too_many, {});
  EXPECT_EQ(many.status, Status::LaunchError);
  EXPECT_NE(many.message.find("CL_DEVICE_MAX_WORK_GROUP_SIZE"), std::string::npos) << many.message;

  // The backend still works afterwards.
  const KernelInstance good = instance_1d(64);
  EXPECT_EQ(backend_->run(*kernel, good, {.repetitions = 1}).status, Status::Ok);
}

TEST_F(OpenclBackendTest, LaunchRejectedByTheImplementationNamesTheError) {
  Program program = vector_add_program();
  program.source = "__kernel __attribute__((reqd_work_group_size(16, 1, 1)))\n" + program.source.substr(program.source.find("void"));
  backend_->load(program);
  const KernelInstance instance = instance_1d(32, {{"SCALE", "1"}});  // not the required 16
  const auto kernel = backend_->compile(instance);
  const RunResult result = backend_->run(*kernel, instance, {});
  EXPECT_EQ(result.status, Status::LaunchError);
  EXPECT_NE(result.message.find("CL_INVALID_WORK_GROUP_SIZE"), std::string::npos) << result.message;
}

// The limit is a tenth of the kernel's own time on this device, so the test holds on a CPU
// as on a GPU.
TEST_F(OpenclBackendTest, SlowLaunchIsATimeoutAndTheNextRunStillWorks) {
  constexpr std::uint64_t kWorkItems = 4096;
  Program program;
  program.language = Language::OpenCL;
  program.source_name = "spin.cl";
  program.kernel_name = "spin";
  program.source = R"(
    __kernel void spin(__global float* out, const int iterations) {
      float x = get_global_id(0);
      for (int k = 0; k < iterations; ++k) x = x * 0.999f + 1.0f;
      out[get_global_id(0)] = x;
    })";
  program.arguments = {float_buffer("out", std::vector<float>(kWorkItems, 0.0f), true),
                       int_scalar("iterations", 1 << 15)};
  backend_->load(program);
  KernelInstance instance;
  instance.grid = {kWorkItems / 64, 1, 1};
  instance.block = {64, 1, 1};
  const auto kernel = backend_->compile(instance);

  const RunResult measured = backend_->run(*kernel, instance, {.warmup = 1, .repetitions = 1});
  ASSERT_EQ(measured.status, Status::Ok) << measured.message;
  const std::vector<float> first_output = as_floats(measured.outputs.at(0));  // views live until the next run
  const double limit_ms = measured.time.median_ms / 10;
  const RunResult slow = backend_->run(*kernel, instance, {.warmup = 0, .repetitions = 1, .timeout_ms = limit_ms});
  EXPECT_EQ(slow.status, Status::Timeout) << "kernel time " << measured.time.median_ms << " ms";
  EXPECT_NE(slow.message.find(fmt::format("{} ms limit", limit_ms)), std::string::npos) << slow.message;

  const RunResult next = backend_->run(*kernel, instance, {.warmup = 0, .repetitions = 1});
  ASSERT_EQ(next.status, Status::Ok) << next.message;
  EXPECT_EQ(as_floats(next.outputs.at(0)), first_output);
}

TEST_F(OpenclBackendTest, CompilesFromSeveralThreadsAtOnce) {
  backend_->load(vector_add_program());
  constexpr int kThreads = 2, kPerThread = 3;
  std::vector<std::unique_ptr<CompiledKernel>> kernels(kThreads * kPerThread);
  std::vector<std::string> errors(kThreads);
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        try {
          for (int k = 0; k < kPerThread; ++k) {
            const int scale = t * kPerThread + k;
            kernels[scale] = backend_->compile(instance_1d(64, {{"SCALE", std::to_string(scale)}}));
          }
        } catch (const std::exception& error) {
          errors[t] = error.what();
        }
      });
    }
  }
  for (const auto& error : errors) EXPECT_EQ(error, "");
  for (int scale = 0; scale < kThreads * kPerThread; ++scale) {
    ASSERT_NE(kernels[scale], nullptr);
    const RunResult result = backend_->run(*kernels[scale], instance_1d(64), {.repetitions = 1});
    ASSERT_EQ(result.status, Status::Ok) << result.message;
    EXPECT_EQ(as_floats(result.outputs.at(0))[3], 3.0f + scale * 4.0f) << "SCALE=" << scale;
  }
}

// vector_add_program() whose kernel first runs `fault` (OpenCL C) when FAULT is 1, and the
// two configurations: with the fault and without.
struct FaultyProgram {
  Program program;
  KernelInstance faulty = instance_1d(64, {{"SCALE", "2.0f"}, {"FAULT", "1"}});
  KernelInstance correct = instance_1d(64, {{"SCALE", "2.0f"}, {"FAULT", "0"}});
};
FaultyProgram vector_add_with_fault(const std::string& fault) {
  FaultyProgram faulty{.program = vector_add_program()};
  faulty.program.source = R"(
    __kernel void vector_add(__global float* c, __global const float* a, __global const float* b, const int n) {
      const int i = get_global_id(0);
    #if FAULT
      )" + fault + R"(
    #endif
      if (i < n) c[i] = a[i] + SCALE * b[i];
    })";
  return faulty;
}

void expect_vector_sum(const RunResult& result) {
  ASSERT_EQ(result.status, Status::Ok) << result.message;
  const std::vector<float> c = as_floats(result.outputs.at(0));
  for (int i = 0; i < kElements; ++i) ASSERT_EQ(c[i], i + 2.0f * (i + 1)) << "at " << i;
}

// A kernel that never finishes is a timeout, stopped by replacing the worker, and the backend
// goes on: the next launch runs and computes the right thing.
TEST_F(OpenclBackendTest, AKernelThatNeverFinishesIsATimeoutAndTheNextRunWorks) {
  const FaultyProgram hang = vector_add_with_fault("for (uint k = 0;; k = (k + 1) & 0xffff) c[i] = k;");
  backend_->load(hang.program);
  const auto hanging = backend_->compile(hang.faulty);
  const auto adding = backend_->compile(hang.correct);
  const auto started = std::chrono::steady_clock::now();
  const RunResult timeout = backend_->run(*hanging, hang.faulty, {.warmup = 0, .repetitions = 1, .timeout_ms = 500});
  const double waited_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(timeout.status, Status::Timeout) << timeout.message;
  EXPECT_NE(timeout.message.find("500 ms limit"), std::string::npos) << timeout.message;
  EXPECT_NE(timeout.message.find("replaced"), std::string::npos) << timeout.message;
  EXPECT_LT(waited_s, 30) << "the first launch's compile allowance applies only until the kernel runs";
  expect_vector_sum(backend_->run(*adding, hang.correct, {.warmup = 1, .repetitions = 2}));
}

// On a CPU device a write far out of bounds is a segmentation fault of the process the
// kernel runs in: the worker's, never the tuner's. The test says what happened, and the
// backend goes on with a new worker and the same inputs.
TEST_F(OpenclBackendTest, AWildWriteEndsTheWorkerNotTheTunerAndTheNextRunWorks) {
  if (!backend_->device().runs_on_host_cores) GTEST_SKIP() << "a GPU reports a wild write differently";
  const FaultyProgram wild = vector_add_with_fault("c[(long)i << 40] = 1;  // terabytes past the buffer");
  backend_->load(wild.program);
  const auto writing = backend_->compile(wild.faulty);
  const auto adding = backend_->compile(wild.correct);
  const RunResult crashed = backend_->run(*writing, wild.faulty, {.warmup = 0, .repetitions = 1});
  EXPECT_EQ(crashed.status, Status::LaunchError);
  EXPECT_NE(crashed.message.find("worker process died"), std::string::npos) << crashed.message;
  EXPECT_NE(crashed.message.find("configuration"), std::string::npos) << crashed.message;
  expect_vector_sum(backend_->run(*adding, wild.correct, {.warmup = 1, .repetitions = 2}));
}

// Ctrl-C during a launch that would run for a minute: the launch is abandoned at once (its
// worker ended), Interrupted is thrown, and the backend works afterwards.
TEST_F(OpenclBackendTest, AnInterruptAbandonsALaunchAtOnce) {
  const FaultyProgram hang = vector_add_with_fault("for (uint k = 0;; k = (k + 1) & 0xffff) c[i] = k;");
  backend_->load(hang.program);
  const auto hanging = backend_->compile(hang.faulty);
  const auto adding = backend_->compile(hang.correct);
  std::atomic<bool> interrupt{false};
  std::jthread ctrl_c([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    interrupt = true;
  });
  const auto started = std::chrono::steady_clock::now();
  EXPECT_THROW(backend_->run(*hanging, hang.faulty,
                             {.warmup = 0, .repetitions = 1, .timeout_ms = 60'000, .interrupt = &interrupt}),
               Interrupted);
  const double waited_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_LT(waited_s, 5) << "the interrupt waited for the launch";
  expect_vector_sum(backend_->run(*adding, hang.correct, {.repetitions = 1}));
}

// Arguments the kernel does not take fail every configuration alike: said before launching,
// naming the kernel's parameters, and marked as independent of the configuration.
TEST_F(OpenclBackendTest, ArgumentsTheKernelDoesNotTakeAreNamedBeforeAnyLaunch) {
  Program missing = vector_add_program();
  missing.arguments.pop_back();  // no n
  backend_->load(missing);
  const KernelInstance instance = instance_1d(64, {{"SCALE", "1"}});
  RunResult result = backend_->run(*backend_->compile(instance), instance, {});
  EXPECT_EQ(result.status, Status::LaunchError);
  EXPECT_TRUE(result.independent_of_configuration);
  EXPECT_NE(result.message.find("takes 4 parameters (float* c, float* a, float* b, int n), but the spec passes 3 "
                                "arguments (c, a, b)"),
            std::string::npos)
      << result.message;

  Program wider = vector_add_program();
  wider.arguments.back().type = ElementType::I64;
  wider.arguments.back().data.resize(8);
  backend_->load(wider);
  result = backend_->run(*backend_->compile(instance), instance, {});
  EXPECT_EQ(result.status, Status::LaunchError);
  EXPECT_TRUE(result.independent_of_configuration);
  EXPECT_NE(result.message.find("argument 3 'n' is a scalar int64 in the spec, but kernel 'vector_add' in "
                                "vector_add.cl declares parameter 3 as 'int n'"),
            std::string::npos)
      << result.message;
}

std::span<const std::byte> bytes_of(const auto& values) { return std::as_bytes(std::span(values)); }

// An application's launch (Backend::launch) runs in the worker too: its data travel through
// the shared memory, the device keeps what the launch left, and a test run afterwards still
// sees the inputs that were loaded.
TEST_F(OpenclBackendTest, LaunchesOnTheApplicationsDataAndLeavesTheDeviceAsTheLaunchLeftIt) {
  Program program;
  program.language = Language::OpenCL;
  program.source_name = "accumulate.cl";
  program.kernel_name = "accumulate";
  program.source = R"(
    __kernel void accumulate(__global float* out, __global const float* a, const float scale) {
      const int i = get_global_id(0);
      out[i] += scale * a[i];
    })";
  HostArgument scale{.name = "scale", .is_buffer = false, .type = ElementType::F32};
  scale.data.resize(sizeof(float));
  const float loaded_scale = 1.0f;
  std::memcpy(scale.data.data(), &loaded_scale, sizeof loaded_scale);
  program.arguments = {float_buffer("out", std::vector<float>(kElements, 0.0f), true), float_buffer("a", iota(0)),
                       scale};
  backend_->load(program);
  const KernelInstance instance = instance_1d(64);
  const auto kernel = backend_->compile(instance);

  std::vector<float> out(kElements, 1.0f), a(kElements, 2.0f), read(kElements, -1.0f);
  const float application_scale = 3.0f;
  RunResult launched =
      backend_->launch(*kernel, instance, {.inputs = {bytes_of(out), bytes_of(a), bytes_of(std::span(&application_scale, 1))},
                                           .outputs = {std::as_writable_bytes(std::span(read))}},
                       10'000);
  ASSERT_EQ(launched.status, Status::Ok) << launched.message;
  EXPECT_EQ(launched.time.samples_ms.size(), 1u);
  EXPECT_TRUE(launched.outputs.empty());
  for (int i = 0; i < kElements; i += 997) ASSERT_EQ(read[i], 1.0f + 3.0f * 2.0f) << "at " << i;

  // No inputs given: the device's buffers as the last launch left them, the loaded scalar.
  launched = backend_->launch(*kernel, instance, {.outputs = {std::as_writable_bytes(std::span(read))}}, 10'000);
  ASSERT_EQ(launched.status, Status::Ok) << launched.message;
  for (int i = 0; i < kElements; i += 997) ASSERT_EQ(read[i], 7.0f + 1.0f * 2.0f) << "at " << i;

  // A test restores what was loaded before its launches.
  const RunResult tested = backend_->run(*kernel, instance, {.warmup = 1, .repetitions = 2});
  ASSERT_EQ(tested.status, Status::Ok) << tested.message;
  const std::vector<float> tested_out = as_floats(tested.outputs.at(0));
  for (int i = 0; i < kElements; i += 997) ASSERT_EQ(tested_out[i], static_cast<float>(i)) << "at " << i;

  std::vector<float> too_short(kElements / 2);
  EXPECT_THROW(backend_->launch(*kernel, instance, {.inputs = {bytes_of(too_short), {}, {}}}, 10'000), BackendError);
  EXPECT_THROW(backend_->launch(*kernel, instance, {.inputs = {bytes_of(out)}}, 10'000), BackendError)
      << "one input per argument, or none";
  EXPECT_THROW(backend_->launch(*kernel, instance, {.outputs = {std::as_writable_bytes(std::span(too_short))}}, 10'000),
               BackendError);
}

// CPU time of this process, all its threads: what a kernel on a CPU device adds to it when it
// runs here, and not when it runs in the worker process.
double process_cpu_ms() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto ms = [](const timeval& t) { return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3; };
  return ms(usage.ru_utime) + ms(usage.ru_stime);
}

TEST_F(OpenclBackendTest, RunsKernelsInThisProcessWhenAskedAndInTheWorkerOtherwise) {
  if (!backend_->device().runs_on_host_cores) GTEST_SKIP() << "tells where a kernel ran by this process's CPU time";
  Program program;
  program.language = Language::OpenCL;
  program.source_name = "busy.cl";
  program.kernel_name = "busy";
  program.source = R"(
    __kernel void busy(__global float* out, __global const float* a, const int rounds) {
      const int i = get_global_id(0);
      float v = a[i];
      for (int k = 0; k < rounds; ++k) v = v * 0.999f + 1.0f;
      out[i] = v;
    })";
  program.arguments = {float_buffer("out", std::vector<float>(kElements, 0.0f), true), float_buffer("a", iota(0)),
                       int_scalar("rounds", 5000)};
  backend_->load(program);
  const KernelInstance instance = instance_1d(64);
  const auto kernel = backend_->compile(instance);
  std::vector<float> a(kElements, 1.0f), out(kElements, -1.0f);
  // One launch on the application's data: its CPU time in this process, against its own.
  const auto launch = [&](std::vector<float>& read) {
    const double before = process_cpu_ms();
    const RunResult launched = backend_->launch(
        *kernel, instance, {.inputs = {{}, bytes_of(a), {}}, .outputs = {std::as_writable_bytes(std::span(read))}},
        60'000);
    EXPECT_EQ(launched.status, Status::Ok) << launched.message;
    return std::pair{process_cpu_ms() - before, launched.time.median_ms};
  };
  std::vector<float> in_worker(kElements), here(kElements), back(kElements);
  (void)launch(in_worker);  // the first launch of a kernel on PoCL compiles it for its work-group size
  const auto [worker_cpu_ms, worker_kernel_ms] = launch(in_worker);
  EXPECT_LT(worker_cpu_ms, 0.3 * worker_kernel_ms) << "in the worker, the kernel's work is not this process's";

  ASSERT_TRUE(backend_->run_in_this_process(true));
  (void)launch(here);
  const auto [here_cpu_ms, here_kernel_ms] = launch(here);
  EXPECT_GT(here_cpu_ms, 0.5 * here_kernel_ms) << "in this process, the kernel's work is";
  EXPECT_EQ(here, in_worker) << "the same kernel on the same data, wherever it runs";
  // A test restores the loaded arguments in this process as the worker does.
  const RunResult tested = backend_->run(*kernel, instance, {.warmup = 0, .repetitions = 1});
  ASSERT_EQ(tested.status, Status::Ok) << tested.message;

  EXPECT_FALSE(backend_->run_in_this_process(false));
  const auto [again_cpu_ms, again_kernel_ms] = launch(back);
  EXPECT_LT(again_cpu_ms, 0.3 * again_kernel_ms) << "back in the worker";
  EXPECT_EQ(back, in_worker);

  // Loading a program goes back to the worker too: the kernels here held the old arguments.
  ASSERT_TRUE(backend_->run_in_this_process(true));
  backend_->load(program);
  const auto reloaded = backend_->compile(instance);
  const double before = process_cpu_ms();
  const RunResult after_load = backend_->run(*reloaded, instance, {.warmup = 0, .repetitions = 1});
  ASSERT_EQ(after_load.status, Status::Ok) << after_load.message;
  EXPECT_LT(process_cpu_ms() - before, 0.3 * after_load.time.median_ms);
}

TEST_F(OpenclBackendTest, RunningInThisProcessNeedsAProgram) {
  EXPECT_THROW(backend_->run_in_this_process(true), BackendError);
  EXPECT_FALSE(backend_->run_in_this_process(false));
}

// A launch on the application's data that hangs is a timeout like any other: the worker is
// replaced, and the next launch works.
TEST_F(OpenclBackendTest, AnApplicationsLaunchThatHangsIsATimeoutAndTheNextWorks) {
  const FaultyProgram hang = vector_add_with_fault("for (uint k = 0;; k = (k + 1) & 0xffff) c[i] = k;");
  backend_->load(hang.program);
  const auto hanging = backend_->compile(hang.faulty);
  const auto adding = backend_->compile(hang.correct);
  std::vector<float> c(kElements);
  const LaunchData data{.outputs = {std::as_writable_bytes(std::span(c))}};
  const RunResult timeout = backend_->launch(*hanging, hang.faulty, data, 500);
  EXPECT_EQ(timeout.status, Status::Timeout) << timeout.message;
  EXPECT_NE(timeout.message.find("replaced"), std::string::npos) << timeout.message;
  const RunResult added = backend_->launch(*adding, hang.correct, data, 10'000);
  ASSERT_EQ(added.status, Status::Ok) << added.message;
  for (int i = 0; i < kElements; i += 997) ASSERT_EQ(c[i], i + 2.0f * (i + 1)) << "at " << i;
}

TEST_F(OpenclBackendTest, RejectsCudaSource) {
  Program program = vector_add_program();
  program.language = Language::Cuda;
  EXPECT_THROW(backend_->load(program), BackendError);
}

}  // namespace
}  // namespace steer

namespace steer {
namespace {

// PoCL compiles a kernel for its work-group size when it is first launched, before it runs:
// that time does not count against the limit, which counts from when the kernel runs.
TEST(OpenclFirstLaunch, CompilingBeforeTheKernelRunsDoesNotCountAgainstTheLimit) {
  ::setenv("POCL_KERNEL_CACHE", "0", 1);  // compile at every first launch, also in later runs of this test
  std::unique_ptr<Backend> backend;
  try {
    backend = make_opencl_backend({});
  } catch (const BackendError& error) {
    GTEST_SKIP() << "no OpenCL device: " << error.what();
  }
  if (!backend->device().runs_on_host_cores) GTEST_SKIP() << "a GPU compiles before the first launch";
  Program program;
  program.language = Language::OpenCL;
  program.source_name = "spin.cl";
  program.kernel_name = "spin";
  program.source = R"(
    __kernel void spin(__global float* out) {
      float x = get_global_id(0);
      for (int k = 0; k < ITERATIONS; ++k) x = x * 0.999f + 1.0f;
      out[get_global_id(0)] = x;
    })";
  program.arguments = {float_buffer("out", std::vector<float>(4096, 0.0f), true)};
  backend->load(program);
  KernelInstance quick, slow;
  quick.grid = slow.grid = {4096 / 64, 1, 1};
  quick.block = slow.block = {64, 1, 1};
  quick.defines = {{"ITERATIONS", "1"}};
  slow.defines = {{"ITERATIONS", "100000000"}};  // seconds on any device
  const auto quick_kernel = backend->compile(quick);
  const auto slow_kernel = backend->compile(slow);
  const RunOptions limit{.warmup = 0, .repetitions = 1, .timeout_ms = 20};

  const auto started = std::chrono::steady_clock::now();
  const RunResult first = backend->run(*quick_kernel, quick, limit);
  const double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(first.status, Status::Ok) << first.message << " (the first launch took " << first_ms << " ms)";
  if (first_ms < 20) std::cout << "note: the first launch compiled in " << first_ms << " ms, within the limit\n";
  const RunResult slow_first = backend->run(*slow_kernel, slow, limit);
  EXPECT_EQ(slow_first.status, Status::Timeout) << "once it runs, the first launch gets the limit too";
  EXPECT_EQ(backend->run(*quick_kernel, quick, limit).status, Status::Ok) << "the worker was replaced";
}

}  // namespace
}  // namespace steer
