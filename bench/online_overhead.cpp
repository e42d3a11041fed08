// What an OnlineTuner call costs once converged, against the application launching the best
// configuration itself through OpenCL: write the input, launch, read the output, wait. The
// kernel's work is calibrated so that the plain launch takes about 1 ms; the goal is an
// overhead under 5 %. Also: Backend::launch alone, the launch path the OnlineTuner uses, and
// the two launched in alternation (PairedOverhead, the figure to read on a busy machine), for
// an OnlineTuner that launches the best in this process once converged (the default;
// PairedOverhead/1) and for one that keeps launching in the backend's worker process
// (in_process_once_converged = false; PairedOverhead/0).
//
//   build/bench/online_overhead --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//   STEER_OPENCL_DEVICE=N picks the OpenCL device (counted over all platforms, as --device).
#include <benchmark/benchmark.h>

#include <CL/cl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "steer/embed.hpp"

namespace {

constexpr int kElements = 1 << 16;

constexpr const char* kSource = R"(
__kernel void iterate(const int n, const int rounds, __global const float* x, __global float* y) {
  const int i = get_global_id(0);
  if (i >= n) return;
  float value = x[i];
  for (int r = 0; r < rounds; ++r) value = value * 0.999f + 0.001f * (float)(r & 7);
  y[i] = value;
}
)";

int opencl_device_index() {
  const char* text = std::getenv("STEER_OPENCL_DEVICE");
  return text ? std::atoi(text) : 0;
}

void check(cl_int status, const char* what) {
  if (status != CL_SUCCESS) throw std::runtime_error(std::string(what) + " failed: " + std::to_string(status));
}

// The application on its own: the best configuration built and launched with OpenCL directly.
struct PlainLaunch {
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  cl_program program = nullptr;
  cl_kernel kernel = nullptr;
  cl_mem x = nullptr, y = nullptr;
  std::size_t global = 0, local = 0;

  PlainLaunch(const steer::KernelInstance& instance, int rounds) {
    cl_uint platform_count = 0;
    check(clGetPlatformIDs(0, nullptr, &platform_count), "clGetPlatformIDs");
    std::vector<cl_platform_id> platforms(platform_count);
    check(clGetPlatformIDs(platform_count, platforms.data(), nullptr), "clGetPlatformIDs");
    cl_device_id device = nullptr;
    int index = opencl_device_index();
    for (cl_platform_id platform : platforms) {
      cl_uint count = 0;
      if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS) continue;
      std::vector<cl_device_id> devices(count);
      check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, devices.data(), nullptr), "clGetDeviceIDs");
      if (index < static_cast<int>(count)) {
        device = devices[static_cast<std::size_t>(index)];
        break;
      }
      index -= static_cast<int>(count);
    }
    if (!device) throw std::runtime_error("no such OpenCL device");
    cl_int status = CL_SUCCESS;
    context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &status);
    check(status, "clCreateContext");
    queue = clCreateCommandQueue(context, device, 0, &status);
    check(status, "clCreateCommandQueue");
    const char* text = kSource;
    program = clCreateProgramWithSource(context, 1, &text, nullptr, &status);
    check(status, "clCreateProgramWithSource");
    std::string options;
    for (const auto& [name, value] : instance.defines) options += "-D " + name + "=" + value + " ";
    check(clBuildProgram(program, 1, &device, options.c_str(), nullptr, nullptr), "clBuildProgram");
    kernel = clCreateKernel(program, "iterate", &status);
    check(status, "clCreateKernel");
    x = clCreateBuffer(context, CL_MEM_READ_ONLY, kElements * sizeof(float), nullptr, &status);
    check(status, "clCreateBuffer");
    y = clCreateBuffer(context, CL_MEM_READ_WRITE, kElements * sizeof(float), nullptr, &status);
    check(status, "clCreateBuffer");
    const int n = kElements;
    check(clSetKernelArg(kernel, 0, sizeof n, &n), "clSetKernelArg");
    check(clSetKernelArg(kernel, 1, sizeof rounds, &rounds), "clSetKernelArg");
    check(clSetKernelArg(kernel, 2, sizeof x, &x), "clSetKernelArg");
    check(clSetKernelArg(kernel, 3, sizeof y, &y), "clSetKernelArg");
    local = instance.block[0];
    global = instance.grid[0] * instance.block[0];
  }
  ~PlainLaunch() {
    clReleaseMemObject(x);
    clReleaseMemObject(y);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
  }
  void launch(const std::vector<float>& in, std::vector<float>& out) {
    check(clEnqueueWriteBuffer(queue, x, CL_FALSE, 0, in.size() * sizeof(float), in.data(), 0, nullptr, nullptr),
          "clEnqueueWriteBuffer");
    check(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr),
          "clEnqueueNDRangeKernel");
    check(clEnqueueReadBuffer(queue, y, CL_TRUE, 0, out.size() * sizeof(float), out.data(), 0, nullptr, nullptr),
          "clEnqueueReadBuffer");
  }
};

// The application with Steer: a converged OnlineTuner over the same kernel and memory.
struct Application {
  std::vector<float> x = std::vector<float>(kElements, 1.0f), y = std::vector<float>(kElements);
  int rounds = 256;
  std::unique_ptr<steer::Tuner> tuner, isolated_tuner;  // the second with its own backend
  std::unique_ptr<steer::OnlineTuner> online, isolated;  // in this process, in the worker
  std::unique_ptr<PlainLaunch> plain;
  steer::KernelInstance best;

  Application() {
    const steer::BackendOptions device{.device = opencl_device_index()};
    // Calibrate: rounds such that the plain launch of a work-group of 64 takes about 1 ms.
    for (int attempt = 0; attempt < 8; ++attempt) {
      configure(device);
      const steer::KernelInstance instance = tuner->instance({{"BLOCK", 64}});
      PlainLaunch probe(instance, rounds);
      probe.launch(x, y);
      std::vector<double> times_ms;  // their median: steady on a busy machine
      for (int i = 0; i < 101; ++i) {
        const auto start = std::chrono::steady_clock::now();
        probe.launch(x, y);
        times_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      }
      std::nth_element(times_ms.begin(), times_ms.begin() + 50, times_ms.end());
      const double ms = times_ms[50];
      if (ms > 0.9 && ms < 1.1) break;
      rounds = std::max(1, static_cast<int>(rounds * 1.0 / ms));
    }
    configure(device);
    online = std::make_unique<steer::OnlineTuner>(*tuner, steer::OnlineOptions{.budget = 3, .calls_per_test = 2});
    while (!online->converged()) online->run();
    best = tuner->instance(*online->best());
    isolated_tuner = make_tuner(device);
    isolated = std::make_unique<steer::OnlineTuner>(
        *isolated_tuner, steer::OnlineOptions{.budget = 3, .calls_per_test = 2, .in_process_once_converged = false});
    while (!isolated->converged()) isolated->run();
    plain = std::make_unique<PlainLaunch>(best, rounds);
    std::fprintf(stderr, "rounds %d (a plain launch of about 1 ms when calibrated), best BLOCK=%s\n", rounds,
                 best.defines[0].second.c_str());
  }

  void configure(const steer::BackendOptions& device) {
    online.reset();
    tuner = make_tuner(device);
  }

  std::unique_ptr<steer::Tuner> make_tuner(const steer::BackendOptions& device) {
    auto made = std::make_unique<steer::Tuner>(steer::Kernel::from_source(steer::Language::OpenCL, kSource, "iterate"),
                                               steer::make_opencl_backend(device));
    made->parameter("BLOCK", {32, 64, 128});
    made->size("N", kElements);
    made->scalar("n", kElements).scalar("rounds", rounds).input("x", x).output("y", y);
    made->launch({"cdiv(N, BLOCK)"}, {"BLOCK"});
    made->searcher("exhaustive");
    return made;
  }
};

Application& application() {
  static Application instance;
  return instance;
}

void PlainOpenclLaunch(benchmark::State& state) {
  Application& app = application();
  for (auto _ : state) app.plain->launch(app.x, app.y);
}

void BackendLaunch(benchmark::State& state) {
  Application& app = application();
  steer::Backend& backend = app.tuner->backend();
  const std::unique_ptr<steer::CompiledKernel> kernel = backend.compile(app.best);
  const steer::LaunchData data = app.tuner->launch_data();
  for (auto _ : state) benchmark::DoNotOptimize(backend.launch(*kernel, app.best, data, 10'000));
}

void OnlineTunerConverged(benchmark::State& state) {
  Application& app = application();
  steer::OnlineTuner& online = state.range(0) == 1 ? *app.online : *app.isolated;
  for (auto _ : state) benchmark::DoNotOptimize(online.run());
}

// Plain and OnlineTuner launches in alternation, each timed: on a busy machine the pairs see
// the same load, so the median of the per-pair differences is steadier than two separate runs.
// Counters: the medians of each and of the difference, and the difference in % of the plain.
void PairedOverhead(benchmark::State& state) {
  Application& app = application();
  steer::OnlineTuner& online = state.range(0) == 1 ? *app.online : *app.isolated;
  std::vector<double> plain_us, online_us, difference_us;
  using Clock = std::chrono::steady_clock;
  const auto micros = [](Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); };
  bool plain_first = true;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    if (plain_first) app.plain->launch(app.x, app.y); else online.run();
    const auto t1 = Clock::now();
    if (plain_first) online.run(); else app.plain->launch(app.x, app.y);
    const auto t2 = Clock::now();
    const double plain = micros(plain_first ? t1 - t0 : t2 - t1), online = micros(plain_first ? t2 - t1 : t1 - t0);
    plain_us.push_back(plain);
    online_us.push_back(online);
    difference_us.push_back(online - plain);
    plain_first = !plain_first;
  }
  const auto median = [](std::vector<double> values) {
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2), values.end());
    return values[values.size() / 2];
  };
  const double plain = median(plain_us);
  state.counters["plain_us"] = plain;
  state.counters["online_us"] = median(online_us);
  state.counters["difference_us"] = median(difference_us);
  state.counters["overhead_pct"] = 100 * median(difference_us) / plain;
}

BENCHMARK(PairedOverhead)->Arg(1)->Arg(0)->UseRealTime()->Unit(benchmark::kMicrosecond)->MinTime(4);
BENCHMARK(PlainOpenclLaunch)->UseRealTime()->Unit(benchmark::kMicrosecond)->MinTime(2);
BENCHMARK(BackendLaunch)->UseRealTime()->Unit(benchmark::kMicrosecond)->MinTime(2);
BENCHMARK(OnlineTunerConverged)->Arg(1)->Arg(0)->UseRealTime()->Unit(benchmark::kMicrosecond)->MinTime(2);

}  // namespace

BENCHMARK_MAIN();
