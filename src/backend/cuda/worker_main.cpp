// The CUDA backend's worker (steer-worker cuda): it owns the CUDA context, uploads the
// arguments once, and for each request loads the cubin, checks the launch against the
// limits, warms up and times the launches (inputs restored before each), and writes the
// outputs to the shared memory; or, for an application's launch (Backend::launch), writes
// its data over the arguments, launches once and reads its outputs back. Single-threaded;
// the loop around it (worker/serve.hpp) ends it when the backend closes the channel, or
// after a reply that says its CUDA is lost.
#include <fmt/format.h>

#include <cstdlib>

#include <algorithm>
#include <array>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include "backend/cuda/cache_flush.hpp"
#include "backend/cuda/device_monitor.hpp"
#include "backend/cuda/device_session.hpp"
#include "backend/cuda/driver_api.hpp"
#include "backend/cuda/energy_meter.hpp"
#include "backend/cuda/launch_check.hpp"
#include "backend/cuda/nvrtc_compiler.hpp"
#include "backend/cuda/range_profiler.hpp"
#include "backend/worker/output_comparison.hpp"
#include "backend/worker/serve.hpp"
#include "steer/counters.hpp"
#include "steer/device.hpp"

namespace steer::cuda {
namespace {

using Clock = std::chrono::steady_clock;
using worker::DeviceLimits;
using worker::Heartbeat;
using worker::Hello;
using worker::RunReply;
using worker::RunRequest;
using worker::Setup;
using worker::SharedMemory;

// A launch that ran past its time limit.
class LaunchTimeout : public Error {
 public:
  LaunchTimeout(const std::string& message, bool still_running) : Error(message), still_running(still_running) {}
  bool still_running;  // then only the end of this process stops it
};

int device_attribute(CUdevice device, CUdevice_attribute attribute, const char* what) {
  int value = 0;
  check(driver().cuDeviceGetAttribute(&value, attribute, device), "cuDeviceGetAttribute", what);
  return value;
}

int function_attribute(CUfunction function, CUfunction_attribute attribute, const char* what) {
  int value = 0;
  check(driver().cuFuncGetAttribute(&value, attribute, function), "cuFuncGetAttribute", what);
  return value;
}

// The device `index`, described in `hello`. Throws BackendError.
CUdevice open_device(int index, Hello& hello) {
  const DriverApi& api = driver();
  int count = 0;
  check(api.cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (index < 0 || index >= count) {
    throw BackendError(fmt::format("CUDA device {} was asked for, but there {} {} CUDA device{} (0 to {})", index,
                                   count == 1 ? "is" : "are", count, count == 1 ? "" : "s", count - 1));
  }
  CUdevice device = 0;
  check(api.cuDeviceGet(&device, index), "cuDeviceGet");
  char name[256] = {};
  check(api.cuDeviceGetName(name, sizeof name, device), "cuDeviceGetName");
  std::size_t memory = 0;
  check(api.cuDeviceTotalMem(&memory, device), "cuDeviceTotalMem");
  int driver_version = 0;
  check(api.cuDriverGetVersion(&driver_version), "cuDriverGetVersion");
  auto attribute = [&](CUdevice_attribute a, const char* what) { return device_attribute(device, a, what); };
  auto extent = [&](CUdevice_attribute a, const char* what) { return static_cast<std::uint64_t>(attribute(a, what)); };

  DeviceInfo& info = hello.device;
  info.backend = "cuda";
  info.name = name;
  info.vendor = "NVIDIA";
  info.compute_capability_major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability");
  info.compute_capability_minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability");
  info.multiprocessors = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "multiprocessor count");
  info.global_memory_bytes = memory;
  // What a kernel can use: the worker opts in beyond the default 48 KiB when a launch needs it.
  info.max_shared_memory_per_block = static_cast<std::size_t>(
      attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "opt-in shared memory per block"));
  info.max_threads_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "max threads per block");
  info.driver_version = fmt::format("{}.{}", driver_version / 1000, driver_version % 1000 / 10);

  DeviceLimits& limits = hello.limits;
  limits.max_block = {extent(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, "block dim x"),
                      extent(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, "block dim y"),
                      extent(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, "block dim z")};
  limits.max_grid = {extent(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, "grid dim x"),
                     extent(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, "grid dim y"),
                     extent(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, "grid dim z")};
  limits.max_threads_per_block = static_cast<std::uint64_t>(info.max_threads_per_block);
  limits.max_shared_per_block_optin = info.max_shared_memory_per_block;
  return device;
}

KernelAttributes kernel_attributes(CUfunction function) {
  auto attribute = [&](CUfunction_attribute a, const char* what) {
    return static_cast<std::uint64_t>(function_attribute(function, a, what));
  };
  KernelAttributes attributes;
  attributes.max_threads_per_block = attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "max threads per block");
  attributes.registers_per_thread = function_attribute(function, CU_FUNC_ATTRIBUTE_NUM_REGS, "registers");
  attributes.static_shared_bytes = attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "static shared memory");
  attributes.local_bytes_per_thread = attribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "local memory");
  attributes.max_dynamic_shared_bytes =
      attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "max dynamic shared memory");
  return attributes;
}

// Waits for `event`, polling so that a kernel that runs too long can be given up on.
// Spins briefly (most kernels finish within microseconds), then sleeps with backoff; the
// host's wake-up latency does not enter the measurement, which the events make. Promises
// the backend's watchdog to be done by the time limit.
void wait_for(CUevent event, Clock::time_point started, double timeout_ms, const std::string& what,
              Heartbeat& heartbeat) {
  const auto deadline =
      started + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(timeout_ms));
  heartbeat.promise(deadline - Clock::now());
  const auto spin_until = Clock::now() + std::chrono::microseconds(200);
  auto pause = std::chrono::microseconds(50);
  for (;;) {
    CUresult state = driver().cuEventQuery(event);
    if (state == CUDA_SUCCESS) return;
    if (state != CUDA_ERROR_NOT_READY) throw DriverError(state, "cuEventQuery", what);
    const auto now = Clock::now();
    if (now >= deadline) {
      throw LaunchTimeout(fmt::format("{} was still running after the time limit of {} ms", what, timeout_ms), true);
    }
    if (now < spin_until) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(1000));
    }
  }
}

class Worker final : public worker::DeviceServer {
 public:
  void start(const Setup& setup, SharedMemory& memory, Hello& hello) override {
    const CUdevice device = open_device(setup.device, hello);
    device_ = device;
    device_index_ = setup.device;
    compute_capability_ = {hello.device.compute_capability_major, hello.device.compute_capability_minor};
    limits_ = hello.limits;
    session_.emplace(device);
    if (!setup.has_program) return;
    try {
      char bus_id[64] = {};
      check(driver().cuDeviceGetPCIBusId(bus_id, sizeof bus_id, device_), "cuDeviceGetPCIBusId");
      monitor_.emplace(bus_id);
    } catch (const Error&) {
      // Without NVML a test records no clocks, power or temperature; it is measured all the same.
    }
    slots_ = setup.layout.arguments;
    memory_ = &memory;
    // Page-locking the shared memory makes reading outputs back a DMA at full PCIe speed
    // instead of a staged copy (several times faster for gigabyte outputs). Pageable
    // memory still works, so a refusal (e.g. a locked-memory limit) only costs speed. The
    // application area stays pageable: locking would allocate it, and only launch() uses it.
    if (setup.layout.application_offset > 0) {
      (void)driver().cuMemHostRegister(memory.bytes().data(), setup.layout.application_offset, 0);
    }
    std::vector<DeviceSession::ArgumentData> arguments;
    for (const worker::ArgumentSlot& slot : slots_) {
      arguments.push_back({slot.name, slot.is_buffer, slot.type, memory.bytes().subspan(slot.offset, slot.bytes)});
    }
    session_->upload(arguments);
    // The working copies hold the loaded arguments from the start: an application's launch
    // restores nothing, and may give only some of them.
    session_->restore_arguments();
  }

  bool holds_image(const std::string& key) override { return session_ && session_->holds_module(key); }

  RunReply run(const RunRequest& request, Heartbeat& heartbeat) override {
    heartbeat_ = &heartbeat;
    return run(request);
  }

 private:
  RunReply run(const RunRequest& request) {
    const std::string what =
        fmt::format("the launch of '{}' (configuration {})", request.kernel_name, request.instance.config_index);
    const KernelInstance& instance = request.instance;
    const RunOptions& options = request.options;
    RunReply reply;
    std::optional<KernelAttributes> attributes;  // known once the module is loaded
    auto details = [&] { return attributes ? fmt::format(" [{}]", describe_launch(instance, *attributes)) : ""; };
    try {
      CUfunction function = session_->function(request.key, request.image, request.symbol);
      attributes = kernel_attributes(function);
      if (auto problem = launch_problem(instance, *attributes, limits_)) {
        reply.status = Status::LaunchError;
        reply.message = fmt::format("{} was not made: {}{}", what, *problem, details());
        return reply;
      }
      if (instance.shared_memory_bytes > attributes->max_dynamic_shared_bytes) {
        check(driver().cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          static_cast<int>(instance.shared_memory_bytes)),
              "cuFuncSetAttribute", "the dynamic shared memory limit");
      }
      if (request.application) {
        reply.samples_ms.push_back(launch_on_application_data(function, request, what));
        return reply;
      }
      // A profiler left enabled by an earlier test raises the GPU's power (range_profiler.hpp):
      // a test that is not profiled itself runs as in a tuning without counters.
      if (profiler_ && !options.measure.counters) profiler_->release();
      for (int i = 0; i < options.warmup; ++i) launch(function, instance, options.timeout_ms, what);
      double total_ms = 0;
      // At least one timed launch, so that there is an output to read.
      const auto more = [&] {
        if (reply.samples_ms.empty() || total_ms < options.min_total_ms) return true;
        if (options.max_total_ms > 0 && total_ms >= options.max_total_ms) return false;
        return static_cast<int>(reply.samples_ms.size()) < options.repetitions;
      };
      while (more()) {
        reply.samples_ms.push_back(launch(function, instance, options.timeout_ms, what));
        total_ms += reply.samples_ms.back();
      }
      if (monitor_) reply.conditions = monitor_->read();  // as the timed launches left the GPU
      // Where the outputs cannot be compared here (out of device memory, say: comparison_failed),
      // they are read back. A comparison that times out is the test's timeout.
      const bool compared =
          !request.compared.empty() &&
          worker::compare_outputs<LaunchTimeout>(
              request, reply, expected_generation_, [&](std::size_t argument) { upload_expected(argument); },
              [&](const worker::ComparedOutput& output) { return compare_output(output, options.timeout_ms, what); });
      if (options.read_outputs || (!request.compared.empty() && !compared)) {
        for (std::size_t i = 0; i < slots_.size(); ++i) {
          if (!slots_[i].output) continue;
          session_->read_buffer(i, memory_->bytes().subspan(slots_[i].output_offset, slots_[i].bytes));
        }
        reply.outputs_written = true;
      }
      // Counters and energy come after the outputs were read: they launch again. Their
      // failure does not fail the configuration; the backend measures again in a new
      // worker (measurement_retry.hpp), as CUPTI's state after a failed call is not trusted.
      try {
        // Energy before the counters, the order measured in docs/energy.md: the window runs with
        // the profiler released, and collecting the counters then enables it once. Counters this
        // machine cannot collect end the test before its energy window.
        if (options.measure.counters) (void)profiler(reply);
        if (options.measure.energy && reply.measure_unavailable.empty()) measure_energy(function, request, reply, what);
        if (options.measure.counters && reply.measure_unavailable.empty()) {
          measure_counters(function, request, reply, what);
        }
      } catch (const LaunchTimeout&) {
        throw;
      } catch (const Error& e) {
        reply.measure_failed = e.what() + details();
        reply.counters.clear();
        reply.energy.reset();
        reply.context_lost = true;
      }
    } catch (const LaunchTimeout& e) {
      reply = failed(Status::Timeout, e.what() + details(), e.still_running);
    } catch (const Error& e) {  // a failed driver or CUPTI call, mostly
      reply = failed(Status::LaunchError, e.what() + details(), !session_->healthy());
    }
    return reply;
  }

  // One launch on the application's data (Backend::launch): the inputs it gives written over
  // the arguments, nothing restored, the outputs it asks for read back into their slots of
  // the shared memory's application area. Returns the kernel's time in ms.
  double launch_on_application_data(CUfunction function, const RunRequest& request, const std::string& what) {
    const auto marked = [](const std::vector<std::uint8_t>& flags, std::size_t i) {
      return i < flags.size() && flags[i] != 0;
    };
    const auto application_bytes = [&](std::size_t i) {
      return memory_->bytes().subspan(slots_[i].application_offset, slots_[i].bytes);
    };
    // In the backend's own process, the application's memory itself (RunRequest::direct_inputs).
    const auto input_bytes = [&](std::size_t i) -> std::span<const std::byte> {
      if (i < request.direct_inputs.size() && !request.direct_inputs[i].empty()) return request.direct_inputs[i];
      return application_bytes(i);
    };
    const auto output_bytes = [&](std::size_t i) {
      if (i < request.direct_outputs.size() && !request.direct_outputs[i].empty()) return request.direct_outputs[i];
      return application_bytes(i);
    };
    // Scalars the application gives are passed for this launch only.
    const auto loaded_scalars_again = [&] {
      for (std::size_t i = 0; i < slots_.size(); ++i) {
        if (!slots_[i].is_buffer && marked(request.written, i)) {
          session_->set_scalar(i, memory_->bytes().subspan(slots_[i].offset, slots_[i].bytes));
        }
      }
    };
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      if (!marked(request.written, i)) continue;
      if (slots_[i].is_buffer) {
        session_->write_buffer(i, input_bytes(i));  // queued before the timed launch
      } else {
        session_->set_scalar(i, input_bytes(i));
      }
    }
    double ms = 0;
    try {
      ms = launch(function, request.instance, request.options.timeout_ms, what, false);
    } catch (...) {
      loaded_scalars_again();
      throw;
    }
    loaded_scalars_again();
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      if (marked(request.read, i)) session_->read_buffer(i, output_bytes(i));
    }
    return ms;
  }

  // The expected contents of output `argument` (Backend::expect_outputs), from the shared memory.
  void upload_expected(std::size_t argument) {
    const worker::ArgumentSlot& slot = slots_.at(argument);
    if (expected_.size() != slots_.size()) expected_.resize(slots_.size());
    expected_[argument] = DeviceMemory();  // the old copy freed first
    if (slot.bytes == 0) return;
    const std::string about = fmt::format("the expected contents of output '{}'", slot.name);
    expected_[argument] = allocate(slot.bytes, about);
    check(driver().cuMemcpyHtoD(expected_[argument].get(), memory_->bytes().data() + slot.expected_offset, slot.bytes),
          "cuMemcpyHtoD", about);
  }

  // The comparison kernel for elements of `type`, compiled with NVRTC on first use.
  CUfunction comparer(ElementType type) {
    if (auto found = comparers_.find(type); found != comparers_.end()) return found->second.second;
    if (!comparison_problem_.empty()) throw BackendError(comparison_problem_);
    Program program;
    program.language = Language::Cuda;
    program.source = worker::comparison_kernel_source(Language::Cuda, type);
    program.source_name = "steer_compare_outputs.cu";
    program.kernel_name = worker::kComparisonKernel;
    program.compiler_options = {"--fmad=false"};  // abs + rel * |e| rounded as on the host
    Cubin cubin;
    try {
      cubin = nvrtc_compile(program, KernelInstance{}, compute_capability_[0], compute_capability_[1]);
    } catch (const Error& e) {
      comparison_problem_ = fmt::format("the output comparison does not compile: {}", e.what());
      throw;
    }
    Module module = load_module(cubin.image.data(), "the output comparison");
    CUfunction function = nullptr;
    check(driver().cuModuleGetFunction(&function, module.get(), cubin.symbol.c_str()), "cuModuleGetFunction",
          "the output comparison");
    return comparers_.emplace(type, std::make_pair(std::move(module), function)).first->second.second;
  }

  OutputComparison compare_output(const worker::ComparedOutput& output, double timeout_ms, const std::string& what) {
    const worker::ArgumentSlot& slot = slots_.at(output.argument);
    const std::uint64_t elements = slot.bytes / size_of(slot.type);
    if (elements == 0) return OutputComparison{.argument = output.argument};
    CUfunction function = comparer(slot.type);
    const std::uint64_t groups = worker::comparison_groups(elements);
    if (!partials_) {
      partials_ = allocate(worker::kComparisonMaxGroups * worker::kComparisonWordsPerGroup * sizeof(std::uint64_t),
                           "the output comparison's summaries");
    }
    CUdeviceptr actual = session_->buffer_address(output.argument);
    CUdeviceptr expected = expected_.at(output.argument).get();
    CUdeviceptr partials = partials_.get();
    unsigned long long n = elements;
    int ulps_bound = output.ulps_bound ? 1 : 0;
    double abs = output.abs, rel = output.rel;
    unsigned long long ulps = output.ulps;
    void* parameters[] = {&actual, &expected, &n, &ulps_bound, &abs, &rel, &ulps, &partials};
    const std::string comparing = fmt::format("comparing output '{}' after {}", slot.name, what);
    const auto started = Clock::now();
    check(driver().cuLaunchKernel(function, static_cast<unsigned>(groups), 1, 1,
                                  static_cast<unsigned>(worker::kComparisonGroupSize), 1, 1, 0, session_->stream(),
                                  parameters, nullptr),
          "cuLaunchKernel", comparing);
    check(driver().cuEventRecord(session_->stop_event(), session_->stream()), "cuEventRecord", comparing);
    wait_for(session_->stop_event(), started, timeout_ms, comparing, *heartbeat_);
    std::vector<std::uint64_t> words(groups * worker::kComparisonWordsPerGroup);
    check(driver().cuMemcpyDtoH(words.data(), partials, words.size() * sizeof(std::uint64_t)), "cuMemcpyDtoH",
          comparing);
    return worker::summarise_comparison(
        slot, output.argument, words, *memory_, [&](std::size_t offset, std::span<std::byte> value) {
          check(driver().cuMemcpyDtoH(value.data(), actual + offset, value.size()), "cuMemcpyDtoH", comparing);
        });
  }

  static RunReply failed(Status status, std::string message, bool context_lost) {
    RunReply reply;
    reply.status = status;
    reply.message = std::move(message);
    reply.context_lost = context_lost;
    return reply;
  }

  // The profiler, created on first use; nullptr (and the reason in the reply) when this
  // machine cannot collect counters at all.
  RangeProfiler* profiler(RunReply& reply) {
    if (!profiler_ && profiler_problem_.empty()) {
      try {
        trace("counters: creating the range profiler");
        profiler_ = std::make_unique<RangeProfiler>(session_->context(), device_index_);
      } catch (const Error& e) {
        profiler_problem_ = fmt::format("hardware counters cannot be collected: {}", e.what());
      }
    }
    if (!profiler_) reply.measure_unavailable = profiler_problem_;
    return profiler_.get();
  }

  void measure_counters(CUfunction function, const RunRequest& request, RunReply& reply, const std::string& what) {
    RangeProfiler* counters = profiler(reply);
    if (!counters) return;
    std::vector<std::string> metrics = request.options.measure.metrics;
    if (metrics.empty()) metrics.assign(default_profiling_metrics().begin(), default_profiling_metrics().end());
    for (const std::string& dropped : counters->plan(metrics).dropped) {
      if (warned_.insert(dropped).second) {
        reply.warnings.push_back(fmt::format("the metric {} is not available on this device and is not collected",
                                             dropped));
      }
    }
    if (!flush_) flush_ = std::make_unique<CacheFlush>(device_);
    const auto started = Clock::now();
    RangeProfiler::Collection collection = counters->collect(
        metrics,
        [&] {
          const auto started = Clock::now();
          session_->restore_arguments();
          // Every pass starts with cold caches, as in Nsight Compute (cache_flush.hpp).
          flush_->run(session_->stream(), [&] {
            check(driver().cuEventRecord(session_->stop_event(), session_->stream()), "cuEventRecord", what);
            wait_for(session_->stop_event(), started, request.options.timeout_ms, what, *heartbeat_);
          });
        },
        [&] {
          trace("counters: the profiled launch");
          launch(function, request.instance, request.options.timeout_ms, what, false);
        });
    trace("counters: collected");
    reply.profiling_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
    reply.profiling_passes = collection.passes;
    reply.counters = std::move(collection.values);
    reply.counters["threads"] = static_cast<double>(request.threads);
  }

  // Energy per launch over a window of back-to-back launches. The inputs are not restored
  // between them: restoring would add its own copies' energy to every launch.
  void measure_energy(CUfunction function, const RunRequest& request, RunReply& reply, const std::string& what) {
    if (!meter_ && meter_problem_.empty()) {
      try {
        char bus_id[64] = {};
        check(driver().cuDeviceGetPCIBusId(bus_id, sizeof bus_id, device_), "cuDeviceGetPCIBusId");
        meter_ = std::make_unique<EnergyMeter>(bus_id);
      } catch (const Error& e) {
        meter_problem_ = fmt::format("energy cannot be measured: {}", e.what());
      }
    }
    if (!meter_) {
      reply.measure_unavailable = meter_problem_;
      return;
    }
    std::vector<double> sorted = reply.samples_ms;
    std::sort(sorted.begin(), sorted.end());
    const double launch_ms = sorted.empty() ? 1.0 : sorted[sorted.size() / 2];
    const KernelInstance& instance = request.instance;
    const double timeout_ms = request.options.timeout_ms;
    if (profiler_) profiler_->release();  // enabled, it raises the power at the same runtime
    reply.energy = meter_->measure(request.options.measure.energy_window_s, launch_ms, [&](int launches) {
      const auto started = Clock::now();
      for (int i = 0; i < launches; ++i) enqueue(function, instance, what);
      check(driver().cuEventRecord(session_->stop_event(), session_->stream()), "cuEventRecord", what);
      wait_for(session_->stop_event(), started, timeout_ms * launches, what, *heartbeat_);
    });
  }

  void enqueue(CUfunction function, const KernelInstance& instance, const std::string& what) {
    check(driver().cuLaunchKernel(
              function, static_cast<unsigned>(instance.grid[0]), static_cast<unsigned>(instance.grid[1]),
              static_cast<unsigned>(instance.grid[2]), static_cast<unsigned>(instance.block[0]),
              static_cast<unsigned>(instance.block[1]), static_cast<unsigned>(instance.block[2]),
              static_cast<unsigned>(instance.shared_memory_bytes), session_->stream(), session_->kernel_parameters(),
              nullptr),
          "cuLaunchKernel", what);
  }

  // One launch, with its inputs restored first unless the caller did; returns the
  // kernel's time in ms.
  double launch(CUfunction function, const KernelInstance& instance, double timeout_ms, const std::string& what,
                bool restore = true) {
    const DriverApi& api = driver();
    const auto started = Clock::now();
    if (restore) session_->restore_arguments();  // before the start event: not timed
    check(api.cuEventRecord(session_->start_event(), session_->stream()), "cuEventRecord", what);
    enqueue(function, instance, what);
    check(api.cuEventRecord(session_->stop_event(), session_->stream()), "cuEventRecord", what);
    wait_for(session_->stop_event(), started, timeout_ms, what, *heartbeat_);
    float elapsed_ms = 0;
    check(api.cuEventElapsedTime(&elapsed_ms, session_->start_event(), session_->stop_event()), "cuEventElapsedTime",
          what);
    if (elapsed_ms > timeout_ms) {
      throw LaunchTimeout(fmt::format("{} took {} ms, over the time limit of {} ms", what, elapsed_ms, timeout_ms),
                          false);
    }
    return elapsed_ms;
  }

  SharedMemory* memory_ = nullptr;
  Heartbeat* heartbeat_ = nullptr;
  std::vector<worker::ArgumentSlot> slots_;
  DeviceLimits limits_;
  CUdevice device_ = 0;
  int device_index_ = 0;
  std::optional<DeviceSession> session_;
  // Declared after the session: destroyed before its context.
  std::unique_ptr<RangeProfiler> profiler_;
  std::unique_ptr<CacheFlush> flush_;
  std::string profiler_problem_;
  std::optional<DeviceMonitor> monitor_;
  std::unique_ptr<EnergyMeter> meter_;
  std::string meter_problem_;
  std::set<std::string> warned_;  // dropped metrics already reported
  std::array<int, 2> compute_capability_{};
  std::vector<DeviceMemory> expected_;  // by argument: the expected outputs (compare_outputs)
  std::uint64_t expected_generation_ = 0;
  DeviceMemory partials_;
  std::map<ElementType, std::pair<Module, CUfunction>> comparers_;
  std::string comparison_problem_;  // why outputs cannot be compared on this device
};

}  // namespace
}  // namespace steer::cuda

namespace steer::worker {

void serve_cuda_worker() {
  cuda::Worker device;
  serve(device);
}

std::unique_ptr<DeviceServer> make_cuda_device_server() { return std::make_unique<cuda::Worker>(); }

}  // namespace steer::worker
