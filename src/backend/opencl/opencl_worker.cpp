// The OpenCL backend's worker (steer-worker opencl): it owns the context, the in-order
// profiling queue and the buffers, and runs the program binaries the backend compiled.
//
// Every buffer argument is uploaded twice: the buffer the kernel sees, and a pristine copy
// it is restored from (device to device) before every launch, so that every launch computes
// the same thing. Buffers that start as zeros are restored with clEnqueueFillBuffer instead,
// which saves the copy's memory. A CUDA-style dynamic shared memory size is passed to the
// kernel as one extra trailing `__local` argument of that many bytes. An application's launch
// (Backend::launch) restores nothing: it writes the application's inputs over the buffers,
// launches once and reads the outputs back, so the buffers keep what it left in them.
//
// A launch that does not finish within its limit cannot be taken back from an OpenCL queue,
// and a kernel that failed may leave the context unusable: the reply then says the context
// is lost and this process ends, which stops the kernel. On a CPU device (PoCL) the kernels
// run in this process, so a wild write ends it with a segmentation fault; the shared inputs
// are mapped read-only for the kernels' sake, so that no stray write reaches them.
#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "backend/opencl/opencl_api.hpp"
#include "backend/opencl/opencl_device.hpp"
#include "backend/worker/lru_cache.hpp"
#include "backend/worker/output_comparison.hpp"
#include "backend/worker/serve.hpp"
#include "core/fresh_memory.hpp"

namespace steer::opencl {
namespace {

using worker::Heartbeat;
using worker::Hello;
using worker::RunReply;
using worker::RunRequest;
using worker::Setup;
using worker::SharedMemory;

// Time allowed to a kernel's first launch at a work-group size before it starts running, for
// implementations that compile it then (PoCL does, and can take seconds).
constexpr double kFirstLaunchCompileMs = 120'000;

// Program binaries kept built; each configuration is one, and a run seldom repeats one.
constexpr std::size_t kLoadedPrograms = 16;

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

cl_int execution_status(cl_event event) {
  cl_int status = CL_COMPLETE;
  check(clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr), "clGetEventInfo",
        "CL_EVENT_COMMAND_EXECUTION_STATUS");
  return status;
}

// The launch's final execution status (CL_COMPLETE or a negative error), or nullopt if it
// ran longer than `timeout_ms`. With `compile_ms`, the kernel may first take that long to
// start: PoCL compiles a kernel for its work-group size at its first launch, before it
// reports it running, and the limit then counts from when it runs. (Only then is the status
// polled, so that nothing wakes beside a kernel that is being timed.)
std::optional<cl_int> wait_for_launch(cl_command_queue queue, cl_event event, double timeout_ms, double compile_ms,
                                      Heartbeat& heartbeat) {
  using Clock = std::chrono::steady_clock;
  using Milliseconds = std::chrono::duration<double, std::milli>;
  auto completion = std::make_shared<Completion>();
  auto* callback_reference = new std::shared_ptr<Completion>(completion);
  if (cl_int error = clSetEventCallback(event, CL_COMPLETE, on_event_complete, callback_reference);
      error != CL_SUCCESS) {
    delete callback_reference;
    throw_error("clSetEventCallback", error);
  }
  check(clFlush(queue), "clFlush");
  std::unique_lock lock(completion->mutex);
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(Milliseconds(timeout_ms + compile_ms));
  heartbeat.promise(Milliseconds(timeout_ms + compile_ms));
  if (compile_ms > 0) {
    const auto compiled_by = deadline;
    while (!completion->done && Clock::now() < compiled_by) {
      lock.unlock();
      const cl_int status = execution_status(event);
      lock.lock();
      if (status <= CL_RUNNING) {
        deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(Milliseconds(timeout_ms));
        heartbeat.promise(Milliseconds(timeout_ms));
        break;
      }
      completion->done_signal.wait_for(lock, std::chrono::milliseconds(2), [&] { return completion->done; });
    }
  }
  if (!completion->done_signal.wait_until(lock, deadline, [&] { return completion->done; })) return std::nullopt;
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

std::string describe_size(const std::array<std::uint64_t, 3>& size) {
  return fmt::format("{}×{}×{}", size[0], size[1], size[2]);
}

struct DeviceBuffer {
  std::size_t bytes = 0;
  Buffer working;   // what the kernel sees
  Buffer pristine;  // initial contents; empty when the buffer starts as zeros
};

struct LoadedKernel {
  ProgramObject program;
  Kernel kernel;
};

class Worker final : public worker::DeviceServer {
 public:
  void start(const Setup& setup, SharedMemory& memory, Hello& hello) override {
    const DeviceChoice choice = choose_device(BackendOptions{.device = setup.device, .platform = setup.platform});
    device_ = choice.device;
    hello.device = describe_device(device_);
    if (!setup.has_program) return;
    memory_ = &memory;
    slots_ = setup.layout.arguments;

    cl_int error = CL_SUCCESS;
    const cl_context_properties properties[] = {CL_CONTEXT_PLATFORM,
                                                reinterpret_cast<cl_context_properties>(choice.platform), 0};
    context_ = Context(clCreateContext(properties, 1, &device_, nullptr, nullptr, &error));
    check(error, "clCreateContext", hello.device.name);
    queue_ = CommandQueue(clCreateCommandQueue(context_.get(), device_, CL_QUEUE_PROFILING_ENABLE, &error));
    check(error, "clCreateCommandQueue", hello.device.name);
    buffers_.resize(slots_.size());
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].is_buffer) buffers_[i] = upload(slots_[i]);
    }
    // The buffers hold the loaded arguments from the start: an application's launch restores
    // nothing, and may give only some of them.
    restore_buffers();
    check(clFinish(queue_.get()), "clFinish", "uploading the arguments");
    // The kernels run in this process on a CPU device: a stray write into the inputs would
    // otherwise reach every later worker, which uploads them from here.
    const std::size_t inputs = setup.layout.outputs_offset - setup.layout.inputs_offset;
    if (inputs > 0) ::mprotect(memory.bytes().data() + setup.layout.inputs_offset, inputs, PROT_READ);
  }

  bool holds_image(const std::string& key) override { return kernels_.find(key) != nullptr; }

  RunReply run(const RunRequest& request, Heartbeat& heartbeat) override {
    RunReply reply;
    heartbeat.promise(std::chrono::duration<double, std::milli>(kFirstLaunchCompileMs));
    cl_kernel kernel = nullptr;
    try {
      kernel = load(request);
    } catch (const Error& e) {
      return failed(fmt::format("the program binary of '{}' could not be loaded: {}", request.kernel_name, e.what()));
    }
    if (std::optional<RunReply> problem = set_arguments(kernel, request)) return *problem;

    const RunOptions& options = request.options;
    double timed_ms = 0;
    const auto timing_done = [&] {
      if (reply.samples_ms.empty() || timed_ms < options.min_total_ms) return false;
      if (options.max_total_ms > 0 && timed_ms >= options.max_total_ms) return true;
      return static_cast<int>(reply.samples_ms.size()) >= options.repetitions;
    };
    try {
      if (request.application) {
        // One launch on the application's data, as the application would make it.
        write_application_inputs(request);
        double ms = 0;
        if (std::optional<RunReply> failure = launch(kernel, request, heartbeat, ms)) return *failure;
        reply.samples_ms.push_back(ms);
        heartbeat.promise(std::chrono::duration<double, std::milli>(options.timeout_ms));
        read_application_outputs(request);
        return reply;
      }
      for (int launch_number = 0; launch_number < options.warmup || !timing_done(); ++launch_number) {
        restore_buffers();
        double ms = 0;
        if (std::optional<RunReply> failure = launch(kernel, request, heartbeat, ms)) return *failure;
        if (launch_number >= options.warmup) {
          reply.samples_ms.push_back(ms);
          timed_ms += ms;
        }
      }
      heartbeat.promise(std::chrono::duration<double, std::milli>(options.timeout_ms));
      // Where the outputs cannot be compared here (comparison_failed), they are read back.
      const bool compared =
          !request.compared.empty() &&
          worker::compare_outputs(
              request, reply, expected_generation_, [&](std::size_t argument) { upload_expected(argument); },
              [&](const worker::ComparedOutput& output) { return compare_output(output, options.timeout_ms, heartbeat); });
      if (options.read_outputs || (!request.compared.empty() && !compared)) {
        heartbeat.promise(std::chrono::duration<double, std::milli>(options.timeout_ms));
        read_outputs();
        reply.outputs_written = true;
      }
    } catch (const Error& e) {  // a failed OpenCL call around the launch: the queue is not trusted
      RunReply failure = failed(e.what());
      failure.context_lost = true;
      return failure;
    }
    return reply;
  }

 private:
  static RunReply failed(std::string message) {
    RunReply reply;
    reply.status = Status::LaunchError;
    reply.message = std::move(message);
    return reply;
  }

  // One launch of the request's geometry, waited for: its time in `ms`, or the reply that
  // says why it failed.
  std::optional<RunReply> launch(cl_kernel kernel, const RunRequest& request, Heartbeat& heartbeat, double& ms) {
    const KernelInstance& instance = request.instance;
    std::array<std::size_t, 3> global{}, local{};
    for (std::size_t d = 0; d < 3; ++d) {
      global[d] = instance.grid[d] * instance.block[d];
      local[d] = instance.block[d];
    }
    cl_event raw_event = nullptr;
    if (cl_int error =
            clEnqueueNDRangeKernel(queue_.get(), kernel, 3, nullptr, global.data(), local.data(), 0, nullptr, &raw_event);
        error != CL_SUCCESS) {
      RunReply failure = failed(fmt::format("clEnqueueNDRangeKernel: {} (grid {}, block {})", error_name(error),
                                            describe_size(instance.grid), describe_size(instance.block)));
      // Not every argument was set: the kernel takes more than the program passes.
      failure.independent_of_configuration = error == CL_INVALID_KERNEL_ARGS;
      return failure;
    }
    const Event event(raw_event);
    // Some implementations (PoCL) compile a kernel for its work-group size at its first
    // launch, which can take seconds: that launch may take that long to start running.
    const bool first = launched_.insert(fmt::format("{}\n{}", request.key, describe_size(instance.block))).second;
    const double timeout_ms = request.options.timeout_ms;
    const std::optional<cl_int> status =
        wait_for_launch(queue_.get(), event.get(), timeout_ms, first ? kFirstLaunchCompileMs : 0, heartbeat);
    if (!status) {
      RunReply timeout = failed(fmt::format("the launch did not finish within the {} ms limit", timeout_ms));
      timeout.status = Status::Timeout;
      timeout.context_lost = true;  // it is still running: only the end of this process stops it
      return timeout;
    }
    if (*status != CL_COMPLETE) {
      RunReply failure = failed(fmt::format("kernel execution failed: {}", error_name(*status)));
      failure.context_lost = true;  // the context of a failed kernel is not trusted again
      return failure;
    }
    ms = event_duration_ms(event.get());
    return std::nullopt;
  }

  // The bytes of argument `i` that a request passes: the application's for an application
  // launch that writes it, else the loaded ones.
  std::span<const std::byte> argument_bytes(const RunRequest& request, std::size_t i) const {
    const worker::ArgumentSlot& slot = slots_[i];
    const bool given = request.application && i < request.written.size() && request.written[i] != 0;
    if (given && i < request.direct_inputs.size() && !request.direct_inputs[i].empty()) return request.direct_inputs[i];
    return memory_->bytes().subspan(given ? slot.application_offset : slot.offset, slot.bytes);
  }

  DeviceBuffer upload(const worker::ArgumentSlot& slot) const {
    DeviceBuffer buffer;
    buffer.bytes = slot.bytes;
    const std::string what = fmt::format("argument '{}', {} bytes", slot.name, buffer.bytes);
    cl_int error = CL_SUCCESS;
    buffer.working = Buffer(clCreateBuffer(context_.get(), CL_MEM_READ_WRITE, buffer.bytes, nullptr, &error));
    check(error, "clCreateBuffer", what);
    const std::span<const std::byte> data = memory_->bytes().subspan(slot.offset, slot.bytes);
    if (!all_zero(data.data(), data.size())) {
      // COPY_HOST_PTR only reads the host memory.
      void* host = const_cast<std::byte*>(data.data());
      buffer.pristine =
          Buffer(clCreateBuffer(context_.get(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, buffer.bytes, host, &error));
      check(error, "clCreateBuffer", what);
    }
    return buffer;
  }

  // The kernel of the request's binary, built on first use.
  cl_kernel load(const RunRequest& request) {
    if (LoadedKernel* loaded = kernels_.find(request.key)) return loaded->kernel.get();
    LoadedKernel loaded;
    const auto* binary = reinterpret_cast<const unsigned char*>(request.image.data());
    const std::size_t size = request.image.size();
    cl_int binary_status = CL_SUCCESS, error = CL_SUCCESS;
    loaded.program =
        ProgramObject(clCreateProgramWithBinary(context_.get(), 1, &device_, &size, &binary, &binary_status, &error));
    check(error, "clCreateProgramWithBinary", error_name(binary_status));
    check(clBuildProgram(loaded.program.get(), 1, &device_, "", nullptr, nullptr), "clBuildProgram",
          "from the binary");
    loaded.kernel = Kernel(clCreateKernel(loaded.program.get(), request.symbol.c_str(), &error));
    check(error, "clCreateKernel", request.symbol);
    return kernels_.insert(request.key, std::move(loaded)).kernel.get();
  }

  // Every argument, each time: a scalar an application launch replaced is back to its
  // loaded value for the next request.
  std::optional<RunReply> set_arguments(cl_kernel kernel, const RunRequest& request) const {
    const KernelInstance& instance = request.instance;
    cl_uint index = 0;
    for (std::size_t i = 0; i < slots_.size(); ++i, ++index) {
      const worker::ArgumentSlot& slot = slots_[i];
      const cl_int error = slot.is_buffer
                               ? clSetKernelArg(kernel, index, sizeof(cl_mem), buffers_[i].working.address())
                               : clSetKernelArg(kernel, index, slot.bytes, argument_bytes(request, i).data());
      if (error != CL_SUCCESS) {
        RunReply failure = failed(fmt::format("clSetKernelArg (argument {} '{}', a {} of {} bytes): {}", index, slot.name,
                                              slot.is_buffer ? "buffer" : "scalar", slot.bytes, error_name(error)));
        failure.independent_of_configuration = true;  // the same argument, whatever the configuration
        return failure;
      }
    }
    if (instance.shared_memory_bytes > 0) {
      if (cl_int error = clSetKernelArg(kernel, index, instance.shared_memory_bytes, nullptr); error != CL_SUCCESS)
        return failed(fmt::format("clSetKernelArg (argument {}, {} bytes of dynamic local memory): {}", index,
                                  instance.shared_memory_bytes, error_name(error)));
    }
    return std::nullopt;
  }

  void restore_buffers() const {
    for (const DeviceBuffer& buffer : buffers_) {
      if (!buffer.working) continue;  // a scalar's slot
      if (buffer.pristine) {
        check(clEnqueueCopyBuffer(queue_.get(), buffer.pristine.get(), buffer.working.get(), 0, 0, buffer.bytes, 0,
                                  nullptr, nullptr),
              "clEnqueueCopyBuffer", "restoring an input");
      } else {
        const cl_uchar zero = 0;
        check(clEnqueueFillBuffer(queue_.get(), buffer.working.get(), &zero, sizeof zero, 0, buffer.bytes, 0, nullptr,
                                  nullptr),
              "clEnqueueFillBuffer", "resetting a buffer to zeros");
      }
    }
  }

  // The application's buffers, queued before its launch (the queue keeps the order).
  void write_application_inputs(const RunRequest& request) const {
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      if (!slots_[i].is_buffer || i >= request.written.size() || request.written[i] == 0 || slots_[i].bytes == 0) {
        continue;
      }
      check(clEnqueueWriteBuffer(queue_.get(), buffers_[i].working.get(), CL_FALSE, 0, slots_[i].bytes,
                                 argument_bytes(request, i).data(), 0, nullptr, nullptr),
            "clEnqueueWriteBuffer", slots_[i].name);
    }
  }

  void read_application_outputs(const RunRequest& request) const {
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      if (i >= request.read.size() || request.read[i] == 0 || slots_[i].bytes == 0) continue;
      std::span<std::byte> destination = i < request.direct_outputs.size() && !request.direct_outputs[i].empty()
                                             ? request.direct_outputs[i]
                                             : memory_->bytes().subspan(slots_[i].application_offset, slots_[i].bytes);
      check(clEnqueueReadBuffer(queue_.get(), buffers_[i].working.get(), CL_TRUE, 0, slots_[i].bytes,
                                destination.data(), 0, nullptr, nullptr),
            "clEnqueueReadBuffer", slots_[i].name);
    }
  }

  // Straight into the shared memory, where the backend reads them.
  void read_outputs() const {
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      if (!slots_[i].is_buffer || !slots_[i].output) continue;
      std::span<std::byte> destination = memory_->bytes().subspan(slots_[i].output_offset, slots_[i].bytes);
      check(clEnqueueReadBuffer(queue_.get(), buffers_[i].working.get(), CL_TRUE, 0, slots_[i].bytes,
                                destination.data(), 0, nullptr, nullptr),
            "clEnqueueReadBuffer", slots_[i].name);
    }
  }

  // The expected contents of output `argument` (Backend::expect_outputs), from the shared memory.
  void upload_expected(std::size_t argument) {
    const worker::ArgumentSlot& slot = slots_.at(argument);
    if (expected_.size() != slots_.size()) expected_.resize(slots_.size());
    expected_[argument] = Buffer();  // the old copy freed first
    if (slot.bytes == 0) return;
    cl_int error = CL_SUCCESS;
    void* host = memory_->bytes().data() + slot.expected_offset;  // COPY_HOST_PTR only reads it
    expected_[argument] =
        Buffer(clCreateBuffer(context_.get(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, slot.bytes, host, &error));
    check(error, "clCreateBuffer", fmt::format("the expected contents of output '{}'", slot.name));
  }

  // The comparison kernel for elements of `type`, built from source on first use. A device
  // without double precision cannot run it: that is remembered, and the outputs are read back.
  cl_kernel comparer(ElementType type) {
    if (auto found = comparers_.find(type); found != comparers_.end()) return found->second.kernel.get();
    if (!comparison_problem_.empty()) throw Error(comparison_problem_);
    const std::string extensions = device_string(device_, CL_DEVICE_EXTENSIONS, "CL_DEVICE_EXTENSIONS");
    if (extensions.find("cl_khr_fp64") == std::string::npos) {
      comparison_problem_ = "the device has no double precision (cl_khr_fp64), which the comparison needs";
      throw Error(comparison_problem_);
    }
    const std::string source = worker::comparison_kernel_source(Language::OpenCL, type);
    const char* text = source.c_str();
    cl_int error = CL_SUCCESS;
    LoadedKernel loaded;
    loaded.program = ProgramObject(clCreateProgramWithSource(context_.get(), 1, &text, nullptr, &error));
    check(error, "clCreateProgramWithSource", "the output comparison");
    if (cl_int built = clBuildProgram(loaded.program.get(), 1, &device_, "", nullptr, nullptr); built != CL_SUCCESS) {
      comparison_problem_ = fmt::format("the output comparison does not build: {}: {}", error_name(built),
                                        build_log(loaded.program.get(), device_));
      throw Error(comparison_problem_);
    }
    loaded.kernel = Kernel(clCreateKernel(loaded.program.get(), worker::kComparisonKernel, &error));
    check(error, "clCreateKernel", worker::kComparisonKernel);
    return comparers_.emplace(type, std::move(loaded)).first->second.kernel.get();
  }

  OutputComparison compare_output(const worker::ComparedOutput& output, double timeout_ms, Heartbeat& heartbeat) {
    const worker::ArgumentSlot& slot = slots_.at(output.argument);
    const std::uint64_t elements = slot.bytes / size_of(slot.type);
    if (elements == 0) return OutputComparison{.argument = output.argument};
    const bool first_use = comparers_.find(slot.type) == comparers_.end();
    cl_kernel kernel = comparer(slot.type);
    const std::uint64_t groups = worker::comparison_groups(elements);
    const std::size_t partial_bytes = worker::kComparisonMaxGroups * worker::kComparisonWordsPerGroup * sizeof(cl_ulong);
    cl_int error = CL_SUCCESS;
    if (!partials_) {
      partials_ = Buffer(clCreateBuffer(context_.get(), CL_MEM_WRITE_ONLY, partial_bytes, nullptr, &error));
      check(error, "clCreateBuffer", "the output comparison's summaries");
    }
    const cl_ulong n = elements;
    const cl_int ulps_bound = output.ulps_bound ? 1 : 0;
    const cl_double abs = output.abs, rel = output.rel;
    const cl_ulong ulps = output.ulps;
    const std::pair<std::size_t, const void*> arguments[] = {
        {sizeof(cl_mem), buffers_.at(output.argument).working.address()},
        {sizeof(cl_mem), expected_.at(output.argument).address()},
        {sizeof n, &n},
        {sizeof ulps_bound, &ulps_bound},
        {sizeof abs, &abs},
        {sizeof rel, &rel},
        {sizeof ulps, &ulps},
        {sizeof(cl_mem), partials_.address()}};
    for (cl_uint i = 0; i < std::size(arguments); ++i) {
      check(clSetKernelArg(kernel, i, arguments[i].first, arguments[i].second), "clSetKernelArg",
            "the output comparison");
    }
    const std::size_t global = groups * worker::kComparisonGroupSize, local = worker::kComparisonGroupSize;
    cl_event raw_event = nullptr;
    check(clEnqueueNDRangeKernel(queue_.get(), kernel, 1, nullptr, &global, &local, 0, nullptr, &raw_event),
          "clEnqueueNDRangeKernel", "the output comparison");
    const Event event(raw_event);
    const std::optional<cl_int> status =
        wait_for_launch(queue_.get(), event.get(), timeout_ms, first_use ? kFirstLaunchCompileMs : 0, heartbeat);
    if (!status) throw Error(fmt::format("comparing output '{}' took longer than {} ms", slot.name, timeout_ms));
    if (*status != CL_COMPLETE) throw Error(fmt::format("comparing output '{}' failed: {}", slot.name, error_name(*status)));
    std::vector<std::uint64_t> partials(groups * worker::kComparisonWordsPerGroup);
    check(clEnqueueReadBuffer(queue_.get(), partials_.get(), CL_TRUE, 0, partials.size() * sizeof(std::uint64_t),
                              partials.data(), 0, nullptr, nullptr),
          "clEnqueueReadBuffer", "the output comparison's summaries");
    return worker::summarise_comparison(
        slot, output.argument, partials, *memory_, [&](std::size_t offset, std::span<std::byte> value) {
          check(clEnqueueReadBuffer(queue_.get(), buffers_.at(output.argument).working.get(), CL_TRUE, offset,
                                    value.size(), value.data(), 0, nullptr, nullptr),
                "clEnqueueReadBuffer", fmt::format("the first mismatch of output '{}'", slot.name));
        });
  }

  cl_device_id device_ = nullptr;
  SharedMemory* memory_ = nullptr;
  std::vector<worker::ArgumentSlot> slots_;
  // Declared first, destroyed last: everything below lives in it.
  Context context_;
  CommandQueue queue_;
  std::vector<DeviceBuffer> buffers_;  // by argument; empty for scalars
  worker::LruCache<LoadedKernel> kernels_{kLoadedPrograms};
  std::set<std::string> launched_;  // binaries and work-group sizes launched before
  std::vector<Buffer> expected_;     // by argument: the expected outputs (compare_outputs)
  std::uint64_t expected_generation_ = 0;
  Buffer partials_;
  std::map<ElementType, LoadedKernel> comparers_;
  std::string comparison_problem_;  // why outputs cannot be compared on this device
};

}  // namespace
}  // namespace steer::opencl

namespace steer::worker {

void serve_opencl_worker() {
  opencl::Worker device;
  serve(device);
}

std::unique_ptr<DeviceServer> make_opencl_device_server() { return std::make_unique<opencl::Worker>(); }

}  // namespace steer::worker
