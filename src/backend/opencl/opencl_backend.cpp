// The OpenCL backend, through the ICD loader and the OpenCL 1.2 API.
//
// load() creates a context and an in-order profiling queue and uploads every buffer
// argument twice: the buffer the kernel sees, and a pristine copy it is restored from
// (device to device) before every launch, so that every launch computes the same thing.
// Buffers that start as zeros are restored with clEnqueueFillBuffer instead, which saves
// the copy's memory. A CUDA-style dynamic shared memory size is passed to the kernel as
// one extra trailing `__local` argument of that many bytes.
#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "backend/opencl/opencl_api.hpp"
#include "steer/backend.hpp"

namespace steer {
namespace {

using namespace opencl;
using Clock = std::chrono::steady_clock;

double elapsed_ms(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

std::string describe_defines(const KernelInstance& instance) {
  std::string text;
  for (const auto& [name, value] : instance.defines) text += fmt::format("{}{}={}", text.empty() ? "" : " ", name, value);
  return text.empty() ? "(none)" : text;
}

std::string describe_size(const std::array<std::uint64_t, 3>& size) {
  return fmt::format("{}×{}×{}", size[0], size[1], size[2]);
}

struct DeviceBuffer {
  std::size_t bytes = 0;
  Buffer working;   // what the kernel sees
  Buffer pristine;  // initial contents; empty when the buffer starts as zeros
};

// One kernel argument as clSetKernelArg wants it.
struct ArgumentBinding {
  std::string name;
  std::size_t buffer = 0;        // index into LoadedProgram::buffers, when a buffer
  bool is_buffer = true;
  bool output = false;
  std::vector<std::byte> value;  // scalar bytes
};

// What load() creates. Compiled kernels share it, so a kernel keeps its context, queue
// and buffers alive even if load() is called again.
struct LoadedProgram {
  Context context;
  CommandQueue queue;
  std::string source;
  std::string source_name;
  std::string kernel_name;
  std::string base_options;  // compiler options and include directories
  std::vector<DeviceBuffer> buffers;
  std::vector<ArgumentBinding> arguments;
};

// Extra time allowed to a kernel's first launch, for implementations that compile then.
constexpr double kFirstLaunchCompileMs = 120'000;

class OpenclKernel final : public CompiledKernel {
 public:
  std::shared_ptr<const LoadedProgram> program;
  ProgramObject program_object;
  Kernel kernel;
  std::size_t max_work_group_size = 0;  // CL_KERNEL_WORK_GROUP_SIZE, as reported
  cl_ulong static_local_bytes = 0;      // CL_KERNEL_LOCAL_MEM_SIZE
  mutable std::atomic<bool> launched{false};  // whether run() has launched it before
};

// OpenCL has no timed wait, so a completion callback signals a condition variable. The
// state is shared with the callback, which may fire after a timed-out wait has returned.
struct Completion {
  std::mutex mutex;
  std::condition_variable done_signal;
  bool done = false;
  cl_int status = CL_COMPLETE;
};

void CL_CALLBACK on_event_complete(cl_event, cl_int status, void* user_data) {
  auto* completion = static_cast<std::shared_ptr<Completion>*>(user_data);
  {
    std::lock_guard lock((*completion)->mutex);
    (*completion)->done = true;
    (*completion)->status = status;
  }
  (*completion)->done_signal.notify_all();
  delete completion;
}

// The event's final execution status (CL_COMPLETE or a negative error), or nullopt if it
// did not finish within `timeout_ms`.
std::optional<cl_int> wait_for_event(cl_command_queue queue, cl_event event, double timeout_ms) {
  auto completion = std::make_shared<Completion>();
  auto* callback_reference = new std::shared_ptr<Completion>(completion);
  if (cl_int error = clSetEventCallback(event, CL_COMPLETE, on_event_complete, callback_reference);
      error != CL_SUCCESS) {
    delete callback_reference;
    throw_error("clSetEventCallback", error);
  }
  check(clFlush(queue), "clFlush");
  std::unique_lock lock(completion->mutex);
  if (!completion->done_signal.wait_for(lock, std::chrono::duration<double, std::milli>(timeout_ms),
                                        [&] { return completion->done; }))
    return std::nullopt;
  return completion->status;
}

double event_duration_ms(cl_event event) {
  cl_ulong start = 0, end = 0;
  check(clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr),
        "clGetEventProfilingInfo", "CL_PROFILING_COMMAND_START");
  check(clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr),
        "clGetEventProfilingInfo", "CL_PROFILING_COMMAND_END");
  return static_cast<double>(end - start) * 1e-6;
}

struct DeviceChoice {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
};

DeviceChoice choose_device(const BackendOptions& options) {
  cl_uint platform_count = 0;
  check(clGetPlatformIDs(0, nullptr, &platform_count), "clGetPlatformIDs",
        "no OpenCL platform: is an ICD (e.g. pocl-opencl-icd) installed?");
  std::vector<cl_platform_id> platforms(platform_count);
  check(clGetPlatformIDs(platform_count, platforms.data(), nullptr), "clGetPlatformIDs");
  if (options.platform >= static_cast<int>(platform_count))
    throw BackendError(fmt::format("OpenCL platform {} does not exist: {} platform(s) found",
                                   options.platform, platform_count));

  std::vector<DeviceChoice> candidates;
  std::string listing;
  for (cl_uint p = 0; p < platform_count; ++p) {
    if (options.platform >= 0 && static_cast<int>(p) != options.platform) continue;
    cl_uint device_count = 0;
    cl_int error = clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, nullptr, &device_count);
    if (error == CL_DEVICE_NOT_FOUND) continue;
    check(error, "clGetDeviceIDs");
    std::vector<cl_device_id> devices(device_count);
    check(clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, device_count, devices.data(), nullptr),
          "clGetDeviceIDs");
    for (cl_device_id device : devices) {
      listing += fmt::format("\n  {}: {} ({})", candidates.size(), device_string(device, CL_DEVICE_NAME, "CL_DEVICE_NAME"),
                             platform_string(platforms[p], CL_PLATFORM_NAME, "CL_PLATFORM_NAME"));
      candidates.push_back({platforms[p], device});
    }
  }
  if (options.device < 0 || options.device >= static_cast<int>(candidates.size()))
    throw BackendError(fmt::format("OpenCL device {} does not exist; devices{}:{}", options.device,
                                   options.platform >= 0 ? fmt::format(" of platform {}", options.platform) : "",
                                   listing.empty() ? " none" : listing));
  return candidates[static_cast<std::size_t>(options.device)];
}

class OpenclBackend final : public Backend {
 public:
  explicit OpenclBackend(const BackendOptions& options) {
    const DeviceChoice choice = choose_device(options);
    platform_ = choice.platform;
    device_ = choice.device;
    max_work_item_sizes_ = device_max_work_item_sizes(device_);
    local_memory_bytes_ = device_value<cl_ulong>(device_, CL_DEVICE_LOCAL_MEM_SIZE, "CL_DEVICE_LOCAL_MEM_SIZE");

    info_.backend = "opencl";
    info_.name = device_string(device_, CL_DEVICE_NAME, "CL_DEVICE_NAME");
    info_.vendor = device_string(device_, CL_DEVICE_VENDOR, "CL_DEVICE_VENDOR");
    info_.multiprocessors = static_cast<int>(
        device_value<cl_uint>(device_, CL_DEVICE_MAX_COMPUTE_UNITS, "CL_DEVICE_MAX_COMPUTE_UNITS"));
    info_.global_memory_bytes =
        device_value<cl_ulong>(device_, CL_DEVICE_GLOBAL_MEM_SIZE, "CL_DEVICE_GLOBAL_MEM_SIZE");
    info_.max_shared_memory_per_block = local_memory_bytes_;
    info_.max_threads_per_block = static_cast<int>(
        device_value<std::size_t>(device_, CL_DEVICE_MAX_WORK_GROUP_SIZE, "CL_DEVICE_MAX_WORK_GROUP_SIZE"));
    info_.driver_version = device_string(device_, CL_DRIVER_VERSION, "CL_DRIVER_VERSION");
    info_.compiler_version = platform_string(platform_, CL_PLATFORM_VERSION, "CL_PLATFORM_VERSION");
    cl_device_type type = 0;
    check(clGetDeviceInfo(device_, CL_DEVICE_TYPE, sizeof type, &type, nullptr), "clGetDeviceInfo", "CL_DEVICE_TYPE");
    info_.runs_on_host_cores = (type & CL_DEVICE_TYPE_CPU) != 0;
  }

  DeviceInfo device() const override { return info_; }

  void load(const Program& program) override {
    if (program.language != Language::OpenCL)
      throw BackendError(fmt::format("the OpenCL backend cannot run {} source '{}'", to_string(program.language),
                                     program.source_name));
    auto loaded = std::make_shared<LoadedProgram>();
    cl_int error = CL_SUCCESS;
    const cl_context_properties properties[] = {CL_CONTEXT_PLATFORM,
                                                reinterpret_cast<cl_context_properties>(platform_), 0};
    loaded->context = Context(clCreateContext(properties, 1, &device_, nullptr, nullptr, &error));
    check(error, "clCreateContext", info_.name);
    loaded->queue = CommandQueue(clCreateCommandQueue(loaded->context.get(), device_, CL_QUEUE_PROFILING_ENABLE, &error));
    check(error, "clCreateCommandQueue", info_.name);

    loaded->source = program.source;
    loaded->source_name = program.source_name;
    loaded->kernel_name = program.kernel_name;
    for (const auto& option : program.compiler_options) loaded->base_options += option + ' ';
    for (const auto& directory : program.include_dirs) loaded->base_options += fmt::format("-I {} ", directory);

    for (const auto& argument : program.arguments) {
      ArgumentBinding binding{.name = argument.name, .is_buffer = argument.is_buffer, .output = argument.output};
      if (argument.is_buffer) {
        binding.buffer = loaded->buffers.size();
        loaded->buffers.push_back(upload(loaded->context.get(), argument));
      } else {
        binding.value = argument.data;
      }
      loaded->arguments.push_back(std::move(binding));
    }

    std::lock_guard lock(loaded_mutex_);
    loaded_ = std::move(loaded);
  }

  std::unique_ptr<CompiledKernel> compile(const KernelInstance& instance) override {
    const auto start = Clock::now();
    auto result = std::make_unique<OpenclKernel>();
    result->program = loaded_program();
    const LoadedProgram& program = *result->program;

    std::string options = program.base_options;
    for (const auto& [name, value] : instance.defines) options += fmt::format("-D {}={} ", name, value);

    cl_int error = CL_SUCCESS;
    const char* text = program.source.c_str();
    const std::size_t length = program.source.size();
    result->program_object = ProgramObject(clCreateProgramWithSource(program.context.get(), 1, &text, &length, &error));
    check(error, "clCreateProgramWithSource", program.source_name);

    error = clBuildProgram(result->program_object.get(), 1, &device_, options.c_str(), nullptr, nullptr);
    result->log = build_log(result->program_object.get());
    if (error == CL_BUILD_PROGRAM_FAILURE || error == CL_INVALID_BUILD_OPTIONS)
      throw CompileError(fmt::format("OpenCL build of {} failed: {}\ndefines: {}\noptions: {}\n{}", program.source_name,
                                     error_name(error), describe_defines(instance), options, result->log));
    check(error, "clBuildProgram", program.source_name);

    result->kernel = Kernel(clCreateKernel(result->program_object.get(), program.kernel_name.c_str(), &error));
    if (error == CL_INVALID_KERNEL_NAME)
      throw CompileError(fmt::format("{} has no kernel '{}' (defines: {})", program.source_name, program.kernel_name,
                                     describe_defines(instance)));
    check(error, "clCreateKernel", program.kernel_name);

    check(clGetKernelWorkGroupInfo(result->kernel.get(), device_, CL_KERNEL_WORK_GROUP_SIZE,
                                   sizeof result->max_work_group_size, &result->max_work_group_size, nullptr),
          "clGetKernelWorkGroupInfo", "CL_KERNEL_WORK_GROUP_SIZE");
    check(clGetKernelWorkGroupInfo(result->kernel.get(), device_, CL_KERNEL_LOCAL_MEM_SIZE,
                                   sizeof result->static_local_bytes, &result->static_local_bytes, nullptr),
          "clGetKernelWorkGroupInfo", "CL_KERNEL_LOCAL_MEM_SIZE");
    result->compile_ms = elapsed_ms(start);
    return result;
  }

  RunResult run(const CompiledKernel& compiled, const KernelInstance& instance, const RunOptions& options) override {
    const auto* kernel = dynamic_cast<const OpenclKernel*>(&compiled);
    if (kernel == nullptr) throw BackendError("OpenCL backend: run() got a kernel compiled by another backend");
    // Said before anything runs, rather than tests that silently lack what was asked for.
    if (options.measure.counters || options.measure.energy) {
      throw BackendError(fmt::format("the OpenCL backend ({}) cannot measure {}: hardware counters and energy need "
                                     "the CUDA backend on an NVIDIA GPU (--backend cuda)",
                                     info_.name, options.measure.counters ? "hardware counters" : "energy"));
    }
    const LoadedProgram& program = *kernel->program;

    std::lock_guard lock(run_mutex_);
    // A launch that timed out earlier may still occupy the queue; let it drain.
    check(clFinish(program.queue.get()), "clFinish");

    if (auto problem = check_launch_limits(*kernel, instance)) return {.status = Status::LaunchError, .message = *problem};
    if (auto problem = set_arguments(*kernel, instance)) return {.status = Status::LaunchError, .message = *problem};

    std::array<std::size_t, 3> global{}, local{};
    for (std::size_t d = 0; d < 3; ++d) {
      global[d] = instance.grid[d] * instance.block[d];
      local[d] = instance.block[d];
    }

    std::vector<double> samples;
    double timed_ms = 0;
    const auto timing_done = [&] {
      if (samples.empty() || timed_ms < options.min_total_ms) return false;
      if (options.max_total_ms > 0 && timed_ms >= options.max_total_ms) return true;
      return static_cast<int>(samples.size()) >= options.repetitions;
    };
    for (int launch = 0; launch < options.warmup || !timing_done(); ++launch) {
      restore_buffers(program);
      cl_event raw_event = nullptr;
      if (cl_int error = clEnqueueNDRangeKernel(program.queue.get(), kernel->kernel.get(), 3, nullptr, global.data(),
                                                local.data(), 0, nullptr, &raw_event);
          error != CL_SUCCESS)
        return {.status = Status::LaunchError,
                .message = fmt::format("clEnqueueNDRangeKernel: {} (grid {}, block {}){}", error_name(error),
                                       describe_size(instance.grid), describe_size(instance.block),
                                       launch_failure_note(*kernel, instance))};
      const Event event(raw_event);
      // Some implementations (PoCL) compile a kernel for its work-group size at its first
      // launch, which can take seconds: that launch gets extra time, every later one the limit.
      const bool first_ever = !kernel->launched.exchange(true);
      const double limit_ms = first_ever ? options.timeout_ms + kFirstLaunchCompileMs : options.timeout_ms;
      const std::optional<cl_int> status = wait_for_event(program.queue.get(), event.get(), limit_ms);
      if (!status)
        return {.status = Status::Timeout,
                .message = fmt::format("the launch did not finish within the {} ms limit", options.timeout_ms)};
      if (*status != CL_COMPLETE)
        return {.status = Status::LaunchError,
                .message = fmt::format("kernel execution failed: {}{}", error_name(*status),
                                       launch_failure_note(*kernel, instance))};
      if (launch >= options.warmup) {
        samples.push_back(event_duration_ms(event.get()));
        timed_ms += samples.back();
      }
    }
    RunResult result{.time = TimingStats::from_samples(std::move(samples))};
    if (options.read_outputs) result.outputs = read_outputs(program);
    return result;
  }

  RunResult launch(const CompiledKernel& compiled, const KernelInstance& instance, const LaunchData& data,
                   double timeout_ms) override {
    const auto* kernel = dynamic_cast<const OpenclKernel*>(&compiled);
    if (kernel == nullptr) throw BackendError("OpenCL backend: launch() got a kernel compiled by another backend");
    const LoadedProgram& program = *kernel->program;
    check_launch_data(program, data);

    std::lock_guard lock(run_mutex_);
    if (auto problem = check_launch_limits(*kernel, instance)) return {.status = Status::LaunchError, .message = *problem};
    if (auto problem = set_arguments(*kernel, instance, data.inputs)) {
      return {.status = Status::LaunchError, .message = *problem};
    }
    cl_command_queue queue = program.queue.get();
    // Writes, the launch and the reads are queued in order and waited for once, at the last.
    for (std::size_t a = 0; a < program.arguments.size(); ++a) {
      const ArgumentBinding& argument = program.arguments[a];
      if (!argument.is_buffer || a >= data.inputs.size() || data.inputs[a].empty()) continue;
      check(clEnqueueWriteBuffer(queue, program.buffers[argument.buffer].working.get(), CL_FALSE, 0,
                                 data.inputs[a].size(), data.inputs[a].data(), 0, nullptr, nullptr),
            "clEnqueueWriteBuffer", argument.name);
    }
    std::array<std::size_t, 3> global{}, local{};
    for (std::size_t d = 0; d < 3; ++d) {
      global[d] = instance.grid[d] * instance.block[d];
      local[d] = instance.block[d];
    }
    cl_event raw_launch = nullptr;
    if (cl_int error = clEnqueueNDRangeKernel(queue, kernel->kernel.get(), 3, nullptr, global.data(), local.data(), 0,
                                              nullptr, &raw_launch);
        error != CL_SUCCESS) {
      clFinish(queue);  // the writes queued before it
      return {.status = Status::LaunchError,
              .message = fmt::format("clEnqueueNDRangeKernel: {} (grid {}, block {}){}", error_name(error),
                                     describe_size(instance.grid), describe_size(instance.block),
                                     launch_failure_note(*kernel, instance))};
    }
    const Event launched(raw_launch);
    std::optional<Event> last_read;
    std::size_t output = 0;
    for (const ArgumentBinding& argument : program.arguments) {
      if (!argument.is_buffer || !argument.output) continue;
      const std::size_t o = output++;
      if (o >= data.outputs.size() || data.outputs[o].empty()) continue;
      cl_event raw_read = nullptr;
      check(clEnqueueReadBuffer(queue, program.buffers[argument.buffer].working.get(), CL_FALSE, 0,
                                data.outputs[o].size(), data.outputs[o].data(), 0, nullptr, &raw_read),
            "clEnqueueReadBuffer", argument.name);
      last_read.emplace(raw_read);
    }
    const bool first_ever = !kernel->launched.exchange(true);
    const double limit_ms = first_ever ? timeout_ms + kFirstLaunchCompileMs : timeout_ms;
    const std::optional<cl_int> status =
        wait_for_event(queue, last_read ? last_read->get() : launched.get(), limit_ms);
    if (!status) {
      return {.status = Status::Timeout,
              .message = fmt::format("the launch did not finish within the {} ms limit", timeout_ms)};
    }
    cl_int launch_status = CL_COMPLETE;
    check(clGetEventInfo(launched.get(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof launch_status, &launch_status,
                         nullptr),
          "clGetEventInfo", "CL_EVENT_COMMAND_EXECUTION_STATUS");
    if (launch_status != CL_COMPLETE || *status != CL_COMPLETE) {
      return {.status = Status::LaunchError,
              .message = fmt::format("kernel execution failed: {}{}",
                                     error_name(launch_status != CL_COMPLETE ? launch_status : *status),
                                     launch_failure_note(*kernel, instance))};
    }
    return {.time = TimingStats::from_samples({event_duration_ms(launched.get())})};
  }

 private:
  // The application's data must match the loaded arguments: one entry per argument (or
  // none), each buffer's bytes exactly, a scalar's its size; outputs likewise.
  static void check_launch_data(const LoadedProgram& program, const LaunchData& data) {
    if (!data.inputs.empty() && data.inputs.size() != program.arguments.size()) {
      throw BackendError(fmt::format("launch: {} inputs for a kernel of {} arguments", data.inputs.size(),
                                     program.arguments.size()));
    }
    std::size_t outputs = 0;
    for (std::size_t a = 0; a < program.arguments.size(); ++a) {
      const ArgumentBinding& argument = program.arguments[a];
      const std::size_t bytes = argument.is_buffer ? program.buffers[argument.buffer].bytes : argument.value.size();
      if (a < data.inputs.size() && !data.inputs[a].empty() && data.inputs[a].size() != bytes) {
        throw BackendError(fmt::format("launch: argument '{}' is given {} bytes; it has {}", argument.name,
                                       data.inputs[a].size(), bytes));
      }
      if (!argument.is_buffer || !argument.output) continue;
      if (outputs < data.outputs.size() && !data.outputs[outputs].empty() && data.outputs[outputs].size() != bytes) {
        throw BackendError(fmt::format("launch: output '{}' is given {} bytes to read into; it has {}", argument.name,
                                       data.outputs[outputs].size(), bytes));
      }
      ++outputs;
    }
  }

  static DeviceBuffer upload(cl_context context, const HostArgument& argument) {
    DeviceBuffer buffer;
    buffer.bytes = argument.data.size();
    const std::string what = fmt::format("argument '{}', {} bytes", argument.name, buffer.bytes);
    cl_int error = CL_SUCCESS;
    buffer.working = Buffer(clCreateBuffer(context, CL_MEM_READ_WRITE, buffer.bytes, nullptr, &error));
    check(error, "clCreateBuffer", what);
    const bool zeros = std::all_of(argument.data.begin(), argument.data.end(), [](std::byte b) { return b == std::byte{0}; });
    if (!zeros) {
      // COPY_HOST_PTR only reads the host memory.
      void* host = const_cast<std::byte*>(argument.data.data());
      buffer.pristine = Buffer(clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, buffer.bytes, host, &error));
      check(error, "clCreateBuffer", what);
    }
    return buffer;
  }

  static void restore_buffers(const LoadedProgram& program) {
    for (const auto& buffer : program.buffers) {
      if (buffer.pristine) {
        check(clEnqueueCopyBuffer(program.queue.get(), buffer.pristine.get(), buffer.working.get(), 0, 0, buffer.bytes,
                                  0, nullptr, nullptr),
              "clEnqueueCopyBuffer", "restoring an input");
      } else {
        const cl_uchar zero = 0;
        check(clEnqueueFillBuffer(program.queue.get(), buffer.working.get(), &zero, sizeof zero, 0, buffer.bytes, 0,
                                  nullptr, nullptr),
              "clEnqueueFillBuffer", "resetting a buffer to zeros");
      }
    }
  }

  // Reads the outputs into host buffers kept across runs (called under run_mutex_), so a
  // test neither allocates nor frees buffers the size of the problem.
  std::vector<std::span<const std::byte>> read_outputs(const LoadedProgram& program) {
    std::vector<std::span<const std::byte>> outputs;
    std::size_t next = 0;
    for (const auto& argument : program.arguments) {
      if (!argument.is_buffer || !argument.output) continue;
      const DeviceBuffer& buffer = program.buffers[argument.buffer];
      if (host_outputs_.size() <= next) host_outputs_.emplace_back();
      std::vector<std::byte>& bytes = host_outputs_[next++];
      bytes.resize(buffer.bytes);
      check(clEnqueueReadBuffer(program.queue.get(), buffer.working.get(), CL_TRUE, 0, buffer.bytes, bytes.data(), 0,
                                nullptr, nullptr),
            "clEnqueueReadBuffer", argument.name);
      outputs.emplace_back(bytes);
    }
    return outputs;
  }

  // The device's limits, checked before launching so that an oversized work-group gets a
  // clear message rather than whatever the implementation makes of it. The kernel's own
  // CL_KERNEL_WORK_GROUP_SIZE is not a limit everywhere: NVIDIA's driver (580) reports 256
  // for every kernel yet launches work-groups of 1024, so it only annotates a failure
  // (launch_failure_note).
  std::optional<std::string> check_launch_limits(const OpenclKernel& kernel, const KernelInstance& instance) const {
    std::uint64_t work_items = 1;
    for (std::size_t d = 0; d < 3; ++d) {
      if (instance.grid[d] == 0 || instance.block[d] == 0)
        return fmt::format("empty launch: grid {}, block {}", describe_size(instance.grid), describe_size(instance.block));
      if (d < max_work_item_sizes_.size() && instance.block[d] > max_work_item_sizes_[d])
        return fmt::format("work-group {} exceeds the device's limit of {} work-items in dimension {} "
                           "(CL_DEVICE_MAX_WORK_ITEM_SIZES) on {}",
                           describe_size(instance.block), max_work_item_sizes_[d], d, info_.name);
      work_items *= instance.block[d];
    }
    if (work_items > static_cast<std::uint64_t>(info_.max_threads_per_block))
      return fmt::format("work-group {} = {} work-items exceeds the device's limit of {} (CL_DEVICE_MAX_WORK_GROUP_SIZE) "
                         "on {}",
                         describe_size(instance.block), work_items, info_.max_threads_per_block, info_.name);
    const std::uint64_t local_bytes = kernel.static_local_bytes + instance.shared_memory_bytes;
    if (local_bytes > local_memory_bytes_)
      return fmt::format("{} bytes of local memory ({} static + {} dynamic) exceed the device's {} bytes on {}",
                         local_bytes, kernel.static_local_bytes, instance.shared_memory_bytes, local_memory_bytes_,
                         info_.name);
    return std::nullopt;
  }

  // Names the kernel's reported work-group limit when a failed launch exceeded it.
  static std::string launch_failure_note(const OpenclKernel& kernel, const KernelInstance& instance) {
    const std::uint64_t work_items = instance.block[0] * instance.block[1] * instance.block[2];
    if (work_items <= kernel.max_work_group_size) return {};
    return fmt::format("; the work-group's {} work-items exceed the kernel's CL_KERNEL_WORK_GROUP_SIZE of {}", work_items,
                       kernel.max_work_group_size);
  }

  // `scalars`, when given, replace the loaded scalar values (by argument index; empty: kept).
  static std::optional<std::string> set_arguments(const OpenclKernel& kernel, const KernelInstance& instance,
                                                  std::span<const std::span<const std::byte>> scalars = {}) {
    const LoadedProgram& program = *kernel.program;
    cl_uint index = 0;
    for (const auto& argument : program.arguments) {
      std::span<const std::byte> value = argument.value;
      if (!argument.is_buffer && index < scalars.size() && !scalars[index].empty()) value = scalars[index];
      cl_int error = argument.is_buffer
                         ? clSetKernelArg(kernel.kernel.get(), index, sizeof(cl_mem),
                                          program.buffers[argument.buffer].working.address())
                         : clSetKernelArg(kernel.kernel.get(), index, value.size(), value.data());
      if (error != CL_SUCCESS)
        return fmt::format("clSetKernelArg (argument {} '{}'): {}", index, argument.name, error_name(error));
      ++index;
    }
    if (instance.shared_memory_bytes > 0) {
      if (cl_int error = clSetKernelArg(kernel.kernel.get(), index, instance.shared_memory_bytes, nullptr);
          error != CL_SUCCESS)
        return fmt::format("clSetKernelArg (argument {}, {} bytes of dynamic local memory): {}", index,
                           instance.shared_memory_bytes, error_name(error));
    }
    return std::nullopt;
  }

  std::string build_log(cl_program program) const {
    std::size_t bytes = 0;
    check(clGetProgramBuildInfo(program, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &bytes), "clGetProgramBuildInfo",
          "CL_PROGRAM_BUILD_LOG");
    std::string log(bytes, '\0');
    check(clGetProgramBuildInfo(program, device_, CL_PROGRAM_BUILD_LOG, bytes, log.data(), nullptr),
          "clGetProgramBuildInfo", "CL_PROGRAM_BUILD_LOG");
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n' || log.back() == ' ')) log.pop_back();
    return log;
  }

  std::shared_ptr<const LoadedProgram> loaded_program() const {
    std::lock_guard lock(loaded_mutex_);
    if (!loaded_) throw BackendError("OpenCL backend: compile() before load()");
    return loaded_;
  }

  cl_platform_id platform_ = nullptr;
  cl_device_id device_ = nullptr;
  DeviceInfo info_;
  std::vector<std::size_t> max_work_item_sizes_;
  cl_ulong local_memory_bytes_ = 0;

  mutable std::mutex loaded_mutex_;  // guards loaded_ (compile() runs on several threads)
  std::shared_ptr<const LoadedProgram> loaded_;
  std::mutex run_mutex_;  // one run at a time: clSetKernelArg and the queue are not shared safely
  std::vector<std::vector<std::byte>> host_outputs_;  // output read-back buffers, reused (run_mutex_)
};

}  // namespace

std::unique_ptr<Backend> make_opencl_backend(const BackendOptions& options) {
  return std::make_unique<OpenclBackend>(options);
}

bool opencl_backend_built() noexcept { return true; }

}  // namespace steer
