// The OpenCL backend, through the ICD loader and the OpenCL 1.2 API: the compiler runs in
// this process, the kernels in a worker process (backend/worker/process.hpp says why, and
// opencl_worker.cpp what it does).
//
// Threads. compile() builds the program in a context of this process's own (the API is
// thread-safe, so any number of threads may compile while run() executes) and keeps the
// program binary (CL_PROGRAM_BINARIES), which the worker builds its kernel from. load(),
// run() and launch() are serialised by one lock.
//
// Data. load() writes the arguments into a memory file shared with the worker, which
// uploads them once; outputs come back through the same file. So does an application's
// data for launch(): written into the file's application area, written to the device by the
// worker before the launch, read back into the area after it.
//
// Failures. A launch beyond the device's limits (work-group size, local memory) and a kernel
// whose parameters do not match the arguments are reported before anything is launched. A
// launch that does not finish in time, or that fails, ends the worker (it cannot be taken
// back from an OpenCL queue); so does a kernel that crashes it (a wild write on a CPU
// device). The backend then starts a new worker, which uploads the arguments again, and the
// configuration is recorded as a timeout or a launch error.
#include <fmt/format.h>

#include <array>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backend/opencl/opencl_api.hpp"
#include "backend/opencl/opencl_device.hpp"
#include "backend/worker/in_process.hpp"
#include "backend/worker/process.hpp"
#include "steer/backend.hpp"

namespace steer {
namespace {

using namespace opencl;
using Clock = std::chrono::steady_clock;
using worker::RunReply;
using worker::RunRequest;
using worker::SharedLayout;
using worker::SharedMemory;
using worker::InProcessDevice;
using worker::WorkerProcess;

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

// The program of the last load(), shared with the compiles that use it.
struct LoadedProgram {
  std::string source;
  std::string source_name;
  std::string kernel_name;
  std::string base_options;  // compiler options and include directories
  struct Argument {
    std::string name;
    bool is_buffer = true;
    ElementType type = ElementType::F32;
  };
  std::vector<Argument> arguments;
  std::uint64_t generation = 0;  // tells kernels of an earlier load() apart
  std::size_t source_hash = 0;
};

// A kernel parameter as the compiler reports it (CL_KERNEL_ARG_*).
struct Parameter {
  std::string name;
  std::string type;
};

class OpenclKernel final : public CompiledKernel {
 public:
  std::vector<char> binary;  // CL_PROGRAM_BINARIES, for the worker
  std::string cache_key;
  std::uint64_t program_generation = 0;
  std::size_t max_work_group_size = 0;  // CL_KERNEL_WORK_GROUP_SIZE, as reported
  cl_ulong static_local_bytes = 0;      // CL_KERNEL_LOCAL_MEM_SIZE
  std::vector<Parameter> parameters;    // names and types empty where the compiler keeps none
};

// The kernel's parameters in the words of an error message: "(float* out, int n)", or
// nothing where the compiler keeps no names.
std::string describe_parameters(const std::vector<Parameter>& parameters) {
  std::string names;
  for (const Parameter& p : parameters) {
    if (p.name.empty()) return {};
    names += fmt::format("{}{}{}", names.empty() ? "" : ", ", p.type.empty() ? "" : p.type + " ", p.name);
  }
  return " (" + names + ")";
}

// The size of an OpenCL C scalar type, 0 for one whose size this table does not know.
std::size_t opencl_scalar_size(std::string_view type) {
  for (const std::string_view prefix : {"const ", "unsigned "}) {
    if (type.starts_with(prefix)) type.remove_prefix(prefix.size());
  }
  if (type == "char" || type == "uchar" || type == "bool") return 1;
  if (type == "short" || type == "ushort" || type == "half") return 2;
  if (type == "int" || type == "uint" || type == "float") return 4;
  if (type == "long" || type == "ulong" || type == "double") return 8;
  return 0;
}

std::string kernel_string(cl_kernel kernel, cl_uint index, cl_kernel_arg_info what) {
  std::size_t bytes = 0;
  if (clGetKernelArgInfo(kernel, index, what, 0, nullptr, &bytes) != CL_SUCCESS) return {};
  std::string text(bytes, '\0');
  if (clGetKernelArgInfo(kernel, index, what, bytes, text.data(), nullptr) != CL_SUCCESS) return {};
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

class OpenclBackend final : public Backend {
 public:
  explicit OpenclBackend(const BackendOptions& options) : options_(options) {
    const DeviceChoice choice = choose_device(options);
    platform_ = choice.platform;
    device_ = choice.device;
    max_work_item_sizes_ = device_max_work_item_sizes(device_);
    info_ = describe_device(device_);
    cl_int error = CL_SUCCESS;
    const cl_context_properties properties[] = {CL_CONTEXT_PLATFORM,
                                                reinterpret_cast<cl_context_properties>(platform_), 0};
    compile_context_ = Context(clCreateContext(properties, 1, &device_, nullptr, nullptr, &error));
    check(error, "clCreateContext", info_.name);
  }

  DeviceInfo device() const override { return info_; }

  void load(const Program& program) override {
    if (program.language != Language::OpenCL)
      throw BackendError(fmt::format("the OpenCL backend cannot run {} source '{}'", to_string(program.language),
                                     program.source_name));
    auto loaded = std::make_shared<LoadedProgram>();
    loaded->source = program.source;
    loaded->source_name = program.source_name;
    loaded->kernel_name = program.kernel_name;
    loaded->source_hash = std::hash<std::string>{}(program.source);
    // Parameter names and types, for messages about arguments the kernel does not take.
    loaded->base_options = "-cl-kernel-arg-info ";
    for (const auto& option : program.compiler_options) loaded->base_options += option + ' ';
    for (const auto& directory : program.include_dirs) loaded->base_options += fmt::format("-I {} ", directory);
    for (const HostArgument& argument : program.arguments) {
      loaded->arguments.push_back({argument.name, argument.is_buffer, argument.type});
    }

    SharedLayout layout = worker::layout_arguments(program.arguments);
    SharedMemory memory = worker::share_arguments(program.arguments, layout, "steer-opencl-arguments");

    std::lock_guard device_lock(device_mutex_);
    {
      // Until the new worker holds the new arguments, no kernel may run.
      std::lock_guard lock(program_mutex_);
      program_.reset();
      loaded->generation = next_generation_++;
    }
    in_process_.reset();
    worker_.reset();
    expected_.clear();
    worker_ = std::make_unique<WorkerProcess>("opencl", setup(layout), &memory);
    memory_ = std::move(memory);
    layout_ = std::move(layout);
    std::lock_guard lock(program_mutex_);
    program_ = std::move(loaded);
  }

  std::unique_ptr<CompiledKernel> compile(const KernelInstance& instance) override {
    const auto start = Clock::now();
    std::shared_ptr<const LoadedProgram> loaded = current_program();
    if (!loaded) throw BackendError("OpenCL backend: compile() needs a program; call load() first");
    const LoadedProgram& program = *loaded;
    auto result = std::make_unique<OpenclKernel>();
    result->program_generation = program.generation;

    std::string options = program.base_options;
    for (const auto& [name, value] : instance.defines) options += fmt::format("-D {}={} ", name, value);
    result->cache_key = fmt::format("{:016x}\n{}\n{}", program.source_hash, program.kernel_name, options);

    cl_int error = CL_SUCCESS;
    const char* text = program.source.c_str();
    const std::size_t length = program.source.size();
    ProgramObject built(clCreateProgramWithSource(compile_context_.get(), 1, &text, &length, &error));
    check(error, "clCreateProgramWithSource", program.source_name);

    error = clBuildProgram(built.get(), 1, &device_, options.c_str(), nullptr, nullptr);
    result->log = build_log(built.get(), device_);
    if (error == CL_BUILD_PROGRAM_FAILURE || error == CL_INVALID_BUILD_OPTIONS)
      throw CompileError(fmt::format("OpenCL build of {} failed: {}\ndefines: {}\noptions: {}\n{}", program.source_name,
                                     error_name(error), describe_defines(instance), options, result->log));
    check(error, "clBuildProgram", program.source_name);

    const Kernel kernel(clCreateKernel(built.get(), program.kernel_name.c_str(), &error));
    if (error == CL_INVALID_KERNEL_NAME)
      throw CompileError(fmt::format("{} has no kernel '{}' (defines: {})", program.source_name, program.kernel_name,
                                     describe_defines(instance)));
    check(error, "clCreateKernel", program.kernel_name);

    check(clGetKernelWorkGroupInfo(kernel.get(), device_, CL_KERNEL_WORK_GROUP_SIZE, sizeof result->max_work_group_size,
                                   &result->max_work_group_size, nullptr),
          "clGetKernelWorkGroupInfo", "CL_KERNEL_WORK_GROUP_SIZE");
    check(clGetKernelWorkGroupInfo(kernel.get(), device_, CL_KERNEL_LOCAL_MEM_SIZE, sizeof result->static_local_bytes,
                                   &result->static_local_bytes, nullptr),
          "clGetKernelWorkGroupInfo", "CL_KERNEL_LOCAL_MEM_SIZE");
    cl_uint parameters = 0;
    check(clGetKernelInfo(kernel.get(), CL_KERNEL_NUM_ARGS, sizeof parameters, &parameters, nullptr), "clGetKernelInfo",
          "CL_KERNEL_NUM_ARGS");
    for (cl_uint p = 0; p < parameters; ++p) {
      result->parameters.push_back({kernel_string(kernel.get(), p, CL_KERNEL_ARG_NAME),
                                    kernel_string(kernel.get(), p, CL_KERNEL_ARG_TYPE_NAME)});
    }
    result->binary = program_binary(built.get());
    result->compile_ms = elapsed_ms(start);
    return result;
  }

  RunResult run(const CompiledKernel& compiled, const KernelInstance& instance, const RunOptions& options) override {
    const OpenclKernel& kernel = ours(compiled, "run()");
    // Said before anything runs, rather than tests that silently lack what was asked for.
    if (options.measure.counters || options.measure.energy) {
      throw MeasurementUnavailable(fmt::format(
          "the OpenCL backend ({}) cannot measure {}: hardware counters and energy need the CUDA backend on an "
          "NVIDIA GPU (--backend cuda)",
          info_.name, options.measure.counters ? "hardware counters" : "energy"));
    }
    std::lock_guard device_lock(device_mutex_);
    const std::shared_ptr<const LoadedProgram> loaded = program_of(kernel, "run()");
    if (std::optional<RunResult> refused = refuse(kernel, *loaded, instance)) return *refused;
    return exchange(kernel, *loaded, request_for(kernel, *loaded, instance, options));
  }

  // One launch on the application's data, in the worker like every launch: the data travel
  // through the shared memory's application area (worker::stage_launch_data), and the
  // device's buffers keep what the launch left in them.
  RunResult launch(const CompiledKernel& compiled, const KernelInstance& instance, const LaunchData& data,
                   double timeout_ms) override {
    const OpenclKernel& kernel = ours(compiled, "launch()");
    std::lock_guard device_lock(device_mutex_);
    const std::shared_ptr<const LoadedProgram> loaded = program_of(kernel, "launch()");
    RunRequest request = request_for(kernel, *loaded, instance, {});
    const bool direct = in_process_ != nullptr;  // the data stay where they are
    worker::stage_launch_data(layout_, memory_, data, timeout_ms, request, direct);
    if (std::optional<RunResult> refused = refuse(kernel, *loaded, instance)) return *refused;
    RunResult result = exchange(kernel, *loaded, request);
    if (result.status == Status::Ok && !direct) worker::deliver_launch_outputs(layout_, memory_, data);
    return result;
  }

  bool expect_outputs(const std::vector<ExpectedOutput>& expected) override {
    std::lock_guard device_lock(device_mutex_);
    if (!current_program()) throw BackendError("OpenCL backend: expect_outputs() needs a program; call load() first");
    expected_.set(layout_, memory_, expected);
    return true;
  }

  bool run_in_this_process(bool yes) override {
    std::lock_guard device_lock(device_mutex_);
    if (!yes) {
      in_process_.reset();
      return false;
    }
    if (!in_process_) {
      if (!current_program()) throw BackendError("OpenCL backend: run_in_this_process() needs a program; call load() first");
      in_process_ = std::make_unique<InProcessDevice>(worker::make_opencl_device_server(), setup(layout_), memory_);
    }
    return true;
  }

 private:
  static const OpenclKernel& ours(const CompiledKernel& compiled, const char* call) {
    const auto* kernel = dynamic_cast<const OpenclKernel*>(&compiled);
    if (kernel == nullptr) {
      throw BackendError(fmt::format("OpenCL backend: {} got a kernel compiled by another backend", call));
    }
    return *kernel;
  }

  // The program `kernel` was compiled for, which must be the one loaded (under device_mutex_).
  std::shared_ptr<const LoadedProgram> program_of(const OpenclKernel& kernel, const char* call) const {
    std::shared_ptr<const LoadedProgram> loaded = current_program();
    if (!loaded) throw BackendError(fmt::format("OpenCL backend: {} needs a program; call load() first", call));
    if (kernel.program_generation != loaded->generation) {
      throw BackendError(
          fmt::format("OpenCL backend: {} was given a kernel compiled for a program loaded earlier", call));
    }
    return loaded;
  }

  // Why the launch is not even sent to the worker: beyond the device's limits, or arguments
  // the kernel does not take.
  std::optional<RunResult> refuse(const OpenclKernel& kernel, const LoadedProgram& loaded,
                                  const KernelInstance& instance) const {
    if (auto problem = check_launch_limits(kernel, instance)) {
      return RunResult{.status = Status::LaunchError, .message = *problem};
    }
    if (auto problem = check_parameters(kernel, loaded, instance)) {
      return RunResult{.status = Status::LaunchError, .message = *problem, .independent_of_configuration = true};
    }
    return std::nullopt;
  }

  RunRequest request_for(const OpenclKernel& kernel, const LoadedProgram& loaded, const KernelInstance& instance,
                         const RunOptions& options) const {
    RunRequest request;
    request.key = kernel.cache_key;
    request.symbol = loaded.kernel_name;
    request.kernel_name = loaded.kernel_name;
    if (!in_process_ || !in_process_->holds_image(kernel.cache_key)) request.image = kernel.binary;
    request.instance = instance;
    request.instance.defines.clear();  // compiled into the binary already
    request.options = options;
    expected_.prepare(request);
    return request;
  }

  // Sends `request` to the worker and makes a result of its reply; a worker that died, hung
  // or lost its context is replaced (under device_mutex_).
  RunResult exchange(const OpenclKernel& kernel, const LoadedProgram& loaded, const RunRequest& request) {
    const KernelInstance& instance = request.instance;
    std::optional<RunReply> reply;
    if (in_process_) {
      reply = in_process_->run(request);
      if (in_process_->lost()) in_process_.reset();
    } else {
      if (!worker_) restart_worker("an earlier failure to start it");
      try {
        reply = worker_->run(request);
      } catch (const Interrupted&) {
        worker_.reset();  // ended; the next run starts a new one
        throw;
      }
    }
    if (!reply) {
      const bool hung = worker_->hung();
      const std::string death = worker_->stop();
      restart_worker("its death");
      return {.status = hung ? Status::Timeout : Status::LaunchError,
              .message = fmt::format("the OpenCL worker process {} during the launch of '{}' (configuration {}, grid "
                                     "{}, block {}): {}; a new worker was started",
                                     hung ? "stopped answering" : "died", loaded.kernel_name, instance.config_index,
                                     describe_size(instance.grid), describe_size(instance.block), death)};
    }
    RunResult result{.status = reply->status,
                     .message = std::move(reply->message),
                     .independent_of_configuration = reply->independent_of_configuration};
    if (result.status == Status::LaunchError) result.message += launch_failure_note(kernel, instance);
    if (!reply->samples_ms.empty()) result.time = TimingStats::from_samples(std::move(reply->samples_ms));
    if (reply->outputs_written) result.outputs = output_views();
    result.warnings = std::move(reply->warnings);
    expected_.take(*reply, result);
    if (reply->context_lost) {
      result.message += result.status == Status::Timeout ? "; the worker process was replaced to stop the kernel"
                                                         : "; the worker process was replaced";
      worker_.reset();
      restart_worker(to_string(result.status));
    }
    return result;
  }

  worker::Setup setup(const SharedLayout& layout) const {
    return worker::Setup{.platform = options_.platform, .device = options_.device, .has_program = true, .layout = layout};
  }

  std::shared_ptr<const LoadedProgram> current_program() const {
    std::lock_guard lock(program_mutex_);
    return program_;
  }

  // Replaces the worker by a new one serving the current arguments (under device_mutex_).
  void restart_worker(const std::string& reason) {
    worker_.reset();
    try {
      worker_ = std::make_unique<WorkerProcess>("opencl", setup(layout_), &memory_);
    } catch (const BackendError& e) {
      throw BackendError(fmt::format("could not restart the OpenCL worker process after {}: {}", reason, e.what()));
    }
  }

  // The worker wrote the outputs into the shared memory: hand out views, copy nothing.
  std::vector<std::span<const std::byte>> output_views() const {
    std::vector<std::span<const std::byte>> outputs;
    for (const worker::ArgumentSlot& slot : layout_.arguments) {
      if (slot.is_buffer && slot.output) outputs.push_back(memory_.bytes().subspan(slot.output_offset, slot.bytes));
    }
    return outputs;
  }

  std::vector<char> program_binary(cl_program program) const {
    std::size_t size = 0;
    check(clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr), "clGetProgramInfo",
          "CL_PROGRAM_BINARY_SIZES");
    std::vector<char> binary(size);
    unsigned char* data = reinterpret_cast<unsigned char*>(binary.data());
    check(clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof data, &data, nullptr), "clGetProgramInfo",
          "CL_PROGRAM_BINARIES");
    return binary;
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
    if (local_bytes > info_.max_shared_memory_per_block)
      return fmt::format("{} bytes of local memory ({} static + {} dynamic) exceed the device's {} bytes on {}",
                         local_bytes, kernel.static_local_bytes, instance.shared_memory_bytes,
                         info_.max_shared_memory_per_block, info_.name);
    return std::nullopt;
  }

  // The kernel must take the program's arguments, plus the dynamic local memory when the
  // launch asks for some: a buffer where it takes a pointer, a scalar of its size where it
  // takes a scalar. A kernel whose compiler keeps no parameter types is checked by count.
  static std::optional<std::string> check_parameters(const OpenclKernel& kernel, const LoadedProgram& program,
                                                     const KernelInstance& instance) {
    const std::size_t passed = program.arguments.size() + (instance.shared_memory_bytes > 0 ? 1 : 0);
    if (kernel.parameters.size() != passed) {
      std::string arguments;
      for (const LoadedProgram::Argument& argument : program.arguments) {
        arguments += (arguments.empty() ? "" : ", ") + argument.name;
      }
      if (instance.shared_memory_bytes > 0) arguments += (arguments.empty() ? "" : ", ") + std::string("dynamic local memory");
      return fmt::format("kernel '{}' in {} takes {} parameters{}, but the spec passes {} arguments ({})",
                         program.kernel_name, program.source_name, kernel.parameters.size(),
                         describe_parameters(kernel.parameters), passed, arguments);
    }
    for (std::size_t i = 0; i < program.arguments.size(); ++i) {
      const LoadedProgram::Argument& argument = program.arguments[i];
      const Parameter& parameter = kernel.parameters[i];
      if (parameter.type.empty()) continue;
      const bool pointer = parameter.type.ends_with('*');
      const std::size_t size = opencl_scalar_size(parameter.type);
      const bool mismatch = argument.is_buffer ? !pointer : pointer || (size != 0 && size != size_of(argument.type));
      if (!mismatch) continue;
      return fmt::format("argument {} '{}' is {} {} in the spec, but kernel '{}' in {} declares parameter {} as '{} {}'",
                         i, argument.name, argument.is_buffer ? "a buffer of" : "a scalar", to_string(argument.type),
                         program.kernel_name, program.source_name, i, parameter.type, parameter.name);
    }
    return std::nullopt;
  }

  // Names the kernel's reported work-group limit when a failed launch exceeded it.
  static std::string launch_failure_note(const OpenclKernel& kernel, const KernelInstance& instance) {
    const std::uint64_t work_items = instance.block[0] * instance.block[1] * instance.block[2];
    if (work_items <= kernel.max_work_group_size) return {};
    return fmt::format("; the work-group's {} work-items exceed the kernel's CL_KERNEL_WORK_GROUP_SIZE of {}", work_items,
                       kernel.max_work_group_size);
  }

  const BackendOptions options_;
  cl_platform_id platform_ = nullptr;
  cl_device_id device_ = nullptr;
  DeviceInfo info_;
  std::vector<std::size_t> max_work_item_sizes_;
  Context compile_context_;  // compiles only: no kernel runs in this process

  mutable std::mutex program_mutex_;  // guards program_, next_generation_ (compile() runs on several threads)
  std::shared_ptr<const LoadedProgram> program_;
  std::uint64_t next_generation_ = 1;

  std::mutex device_mutex_;  // serialises load(), run() and launch(): they own what follows
  SharedMemory memory_;      // the arguments, and room for the outputs
  SharedLayout layout_;
  worker::ExpectedOutputs expected_;  // what runs that compare outputs compare against
  std::unique_ptr<WorkerProcess> worker_;
  std::unique_ptr<InProcessDevice> in_process_;  // while launches run in this process
};

}  // namespace

std::unique_ptr<Backend> make_opencl_backend(const BackendOptions& options) {
  return std::make_unique<OpenclBackend>(options);
}

bool opencl_backend_built() noexcept { return true; }

}  // namespace steer
