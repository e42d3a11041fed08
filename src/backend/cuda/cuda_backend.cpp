// The CUDA backend: NVRTC compiles in this process, a worker process runs the kernels
// (backend/worker/process.hpp says why a separate process, and how it is started and
// watched).
//
// Threads. compile() only runs NVRTC, so any number of threads may compile while run()
// executes. It returns the cubin; the worker loads it as a module when it first runs
// it. load(), run() and launch() are serialised by one lock.
//
// Caches. Cubins are cached here by (source, kernel name, NVRTC options), the options
// holding the defines and the architecture, so compiling a configuration again (a
// repeated test, another problem size of the same source) costs a lookup, also after the
// worker was replaced. Headers the source includes are not part of the key. The worker
// keeps the recently used modules loaded.
//
// Data. load() writes the arguments into a memory file shared with the worker, which
// uploads them once and keeps a pristine copy of every buffer on the device (none of one
// that starts as zeros); before each launch every buffer is restored from it (device to
// device, or by a memset to zeros; outside the timed region), so every launch computes the
// same thing. Outputs come back through the same file. An
// application's launch (launch()) passes its data through the file's application area.
//
// Failures. A configuration that exceeds a limit (threads, shared memory, grid) is
// reported before launching, naming the limit. A launch error is a LaunchError result.
// When it left CUDA unusable (illegal or misaligned address, illegal instruction, trap,
// ...), or a launch was still running at timeout_ms, the worker ends, which also stops
// the kernel; the backend starts a new worker, which uploads the arguments again, so
// tuning goes on. Starting one takes a few hundred milliseconds. The worker bounds every
// launch by timeout_ms; behind it, the backend's watchdog ends a worker that stops
// answering (a driver call that hung), and an interrupt (RunOptions::interrupt) ends the
// worker at once.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <mutex>

#include "backend/cuda/measurement_retry.hpp"
#include "backend/cuda/nvrtc_compiler.hpp"
#include "backend/worker/lru_cache.hpp"
#include "backend/worker/in_process.hpp"
#include "backend/worker/process.hpp"
#include "steer/backend.hpp"

namespace steer {
namespace cuda {
namespace {

using Clock = std::chrono::steady_clock;
using worker::ArgumentSlot;
using worker::RunReply;
using worker::RunRequest;
using worker::SharedLayout;
using worker::SharedMemory;
using worker::WorkerProcess;

// Cubins kept for reuse. A cubin is typically 5-50 KiB, so this holds thousands.
constexpr std::size_t kCubinCacheBytes = std::size_t{256} << 20;

// The program of the last load(), shared with the compiles that use it.
struct LoadedProgram {
  Program program;               // without arguments
  std::uint64_t generation = 0;  // tells kernels of an earlier load() apart
  std::size_t source_hash = 0;
};

class CudaKernel final : public CompiledKernel {
 public:
  CudaKernel(std::shared_ptr<const Cubin> cubin, std::string cache_key, std::uint64_t generation)
      : cubin(std::move(cubin)), cache_key(std::move(cache_key)), program_generation(generation) {}
  std::shared_ptr<const Cubin> cubin;
  std::string cache_key;
  std::uint64_t program_generation;
};

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(const BackendOptions& options);

  DeviceInfo device() const override { return info_; }
  void load(const Program& program) override;
  std::unique_ptr<CompiledKernel> compile(const KernelInstance& instance) override;
  RunResult run(const CompiledKernel& kernel, const KernelInstance& instance, const RunOptions& options) override;
  RunResult launch(const CompiledKernel& kernel, const KernelInstance& instance, const LaunchData& data,
                   double timeout_ms) override;
  bool run_in_this_process(bool yes) override;
  bool expect_outputs(const std::vector<ExpectedOutput>& expected) override;

 private:
  std::shared_ptr<const LoadedProgram> current_program() const;
  // The program `kernel` was compiled for, which must be the one loaded (under device_mutex_).
  std::shared_ptr<const LoadedProgram> program_of(const CudaKernel& kernel, const char* call) const;
  RunRequest request_for(const CudaKernel& kernel, const LoadedProgram& loaded, const KernelInstance& instance,
                         const RunOptions& options) const;
  // Sends `request` to the worker (again in a new one when a measurement failed:
  // measurement_retry.hpp) and makes a result of its reply; a worker that died, hung or lost
  // its CUDA is replaced (under device_mutex_).
  RunResult exchange(const LoadedProgram& loaded, const RunRequest& request);
  // Replaces the worker by a new one serving the current program.
  void restart_worker(const std::string& reason);
  std::vector<std::span<const std::byte>> output_views() const;

  const int device_index_;
  DeviceInfo info_;

  mutable std::mutex program_mutex_;  // guards program_, next_generation_
  std::shared_ptr<const LoadedProgram> program_;
  std::uint64_t next_generation_ = 1;

  std::mutex cubin_mutex_;  // guards cubins_
  worker::LruCache<std::shared_ptr<const Cubin>> cubins_{kCubinCacheBytes};

  std::mutex device_mutex_;  // serialises load(), run() and launch(): they own what follows
  SharedMemory memory_;      // the arguments, and room for the outputs
  SharedLayout layout_;
  worker::ExpectedOutputs expected_;  // what runs that compare outputs compare against
  std::unique_ptr<WorkerProcess> worker_;
  std::unique_ptr<worker::InProcessDevice> in_process_;  // while launches run in this process
};

CudaBackend::CudaBackend(const BackendOptions& options) : device_index_(options.device) {
  // A first worker answers what the device is (this process never initialises CUDA).
  worker_ = std::make_unique<WorkerProcess>("cuda", worker::Setup{.device = device_index_}, nullptr);
  info_ = worker_->hello().device;
  info_.compiler_version = fmt::format("NVRTC {}", nvrtc_version());

  const int architecture = info_.compute_capability_major * 10 + info_.compute_capability_minor;
  const std::vector<int> supported = nvrtc_supported_architectures();
  if (std::find(supported.begin(), supported.end(), architecture) == supported.end()) {
    throw BackendError(fmt::format("NVRTC {} cannot generate code for {} (sm_{}); use a CUDA toolkit that supports it",
                                   nvrtc_version(), info_.name, architecture));
  }
}

std::shared_ptr<const LoadedProgram> CudaBackend::current_program() const {
  std::lock_guard lock(program_mutex_);
  return program_;
}

void CudaBackend::load(const Program& program) {
  if (program.language != Language::Cuda) {
    throw BackendError(fmt::format("the CUDA backend runs CUDA sources; '{}' is {}", program.source_name,
                                   to_string(program.language)));
  }
  auto loaded = std::make_shared<LoadedProgram>();
  // What compiles need; the arguments go to the shared memory instead.
  loaded->program.language = program.language;
  loaded->program.source = program.source;
  loaded->program.source_name = program.source_name;
  loaded->program.kernel_name = program.kernel_name;
  loaded->program.compiler_options = program.compiler_options;
  loaded->program.include_dirs = program.include_dirs;
  loaded->source_hash = std::hash<std::string>{}(program.source);

  SharedLayout layout = worker::layout_arguments(program.arguments);
  SharedMemory memory = worker::share_arguments(program.arguments, layout, "steer-cuda-arguments");

  std::lock_guard device_lock(device_mutex_);
  {
    // Until the new worker holds the new arguments, no kernel may run.
    std::lock_guard lock(program_mutex_);
    program_.reset();
    loaded->generation = next_generation_++;
  }
  in_process_.reset();
  worker_.reset();  // frees the device for the new worker
  expected_.clear();
  worker_ = std::make_unique<WorkerProcess>(
      "cuda", worker::Setup{.device = device_index_, .has_program = true, .layout = layout}, &memory);
  memory_ = std::move(memory);
  layout_ = std::move(layout);
  std::lock_guard lock(program_mutex_);
  program_ = std::move(loaded);
}

std::unique_ptr<CompiledKernel> CudaBackend::compile(const KernelInstance& instance) {
  const auto started = Clock::now();
  std::shared_ptr<const LoadedProgram> loaded = current_program();
  if (!loaded) throw BackendError("CUDA backend: compile() needs a program; call load() first");
  const Program& program = loaded->program;

  std::string key = fmt::format("{:016x}\n{}", loaded->source_hash, program.kernel_name);
  for (const std::string& option :
       nvrtc_options(program, instance, info_.compute_capability_major, info_.compute_capability_minor)) {
    key += '\n';
    key += option;
  }

  std::shared_ptr<const Cubin> cubin;
  {
    std::lock_guard lock(cubin_mutex_);
    if (auto* cached = cubins_.find(key)) cubin = *cached;
  }
  if (!cubin) {
    // Outside the lock, so compiles run in parallel. Two threads compiling the same
    // configuration at once both compile it; the second insert replaces the first.
    cubin = std::make_shared<const Cubin>(
        nvrtc_compile(program, instance, info_.compute_capability_major, info_.compute_capability_minor));
    std::lock_guard lock(cubin_mutex_);
    cubins_.insert(key, cubin, cubin->image.size());
  }

  auto kernel = std::make_unique<CudaKernel>(cubin, std::move(key), loaded->generation);
  kernel->log = cubin->log;
  kernel->compile_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  return kernel;
}

void CudaBackend::restart_worker(const std::string& reason) {
  worker_.reset();
  try {
    worker_ = std::make_unique<WorkerProcess>(
        "cuda", worker::Setup{.device = device_index_, .has_program = true, .layout = layout_}, &memory_);
  } catch (const BackendError& e) {
    throw BackendError(fmt::format("could not restart the CUDA worker process after {}: {}", reason, e.what()));
  }
}

// The worker wrote the outputs into the shared memory: hand out views, copy nothing.
std::vector<std::span<const std::byte>> CudaBackend::output_views() const {
  std::vector<std::span<const std::byte>> outputs;
  for (const ArgumentSlot& slot : layout_.arguments) {
    if (slot.output) outputs.push_back(memory_.bytes().subspan(slot.output_offset, slot.bytes));
  }
  return outputs;
}

const CudaKernel& ours(const CompiledKernel& compiled, const char* call) {
  const auto* kernel = dynamic_cast<const CudaKernel*>(&compiled);
  if (!kernel) {
    throw BackendError(fmt::format("CUDA backend: {} was given a kernel that another backend compiled", call));
  }
  return *kernel;
}

std::shared_ptr<const LoadedProgram> CudaBackend::program_of(const CudaKernel& kernel, const char* call) const {
  std::shared_ptr<const LoadedProgram> loaded = current_program();
  if (!loaded) throw BackendError(fmt::format("CUDA backend: {} needs a program; call load() first", call));
  if (kernel.program_generation != loaded->generation) {
    throw BackendError(fmt::format("CUDA backend: {} was given a kernel compiled for a program loaded earlier", call));
  }
  return loaded;
}

RunRequest CudaBackend::request_for(const CudaKernel& kernel, const LoadedProgram& loaded,
                                    const KernelInstance& instance, const RunOptions& options) const {
  RunRequest request;
  request.key = kernel.cache_key;
  request.symbol = kernel.cubin->symbol;
  request.kernel_name = loaded.program.kernel_name;
  if (!in_process_ || !in_process_->holds_image(kernel.cache_key)) request.image = kernel.cubin->image;
  request.instance = instance;
  request.options = options;
  expected_.prepare(request);
  request.threads = instance.grid[0] * instance.grid[1] * instance.grid[2] * instance.block[0] * instance.block[1] *
                    instance.block[2];
  return request;
}

RunResult CudaBackend::run(const CompiledKernel& compiled, const KernelInstance& instance, const RunOptions& options) {
  const CudaKernel& kernel = ours(compiled, "run()");
  std::lock_guard device_lock(device_mutex_);
  const std::shared_ptr<const LoadedProgram> loaded = program_of(kernel, "run()");
  return exchange(*loaded, request_for(kernel, *loaded, instance, options));
}

// One launch on the application's data in the worker (worker::stage_launch_data): the
// worker writes the inputs over the arguments, launches once, restores nothing and reads the
// outputs back through the shared memory's application area.
RunResult CudaBackend::launch(const CompiledKernel& compiled, const KernelInstance& instance, const LaunchData& data,
                              double timeout_ms) {
  const CudaKernel& kernel = ours(compiled, "launch()");
  std::lock_guard device_lock(device_mutex_);
  const std::shared_ptr<const LoadedProgram> loaded = program_of(kernel, "launch()");
  RunRequest request = request_for(kernel, *loaded, instance, {});
  const bool direct = in_process_ != nullptr;  // the data stay where they are
  worker::stage_launch_data(layout_, memory_, data, timeout_ms, request, direct);
  RunResult result = exchange(*loaded, request);
  if (result.status == Status::Ok && !direct) worker::deliver_launch_outputs(layout_, memory_, data);
  return result;
}

bool CudaBackend::expect_outputs(const std::vector<ExpectedOutput>& expected) {
  std::lock_guard device_lock(device_mutex_);
  if (!current_program()) throw BackendError("CUDA backend: expect_outputs() needs a program; call load() first");
  expected_.set(layout_, memory_, expected);
  return true;
}

bool CudaBackend::run_in_this_process(bool yes) {
  std::lock_guard device_lock(device_mutex_);
  if (!yes) {
    in_process_.reset();
    return false;
  }
  if (!in_process_) {
    if (!current_program()) throw BackendError("CUDA backend: run_in_this_process() needs a program; call load() first");
    in_process_ = std::make_unique<worker::InProcessDevice>(
        worker::make_cuda_device_server(), worker::Setup{.device = device_index_, .has_program = true, .layout = layout_},
        memory_);
  }
  return true;
}

RunResult CudaBackend::exchange(const LoadedProgram& loaded, const RunRequest& request) {
  bool hung = false;
  RunOutcome outcome;
  if (in_process_) {
    outcome.reply = in_process_->run(request);
    if (in_process_->lost()) in_process_.reset();
  } else {
    if (!worker_) restart_worker("an earlier failure to restart it");
    try {
      outcome = run_with_measurement_retry(
          request, WorkerHandle{.run = [&](const RunRequest& r) { return worker_->run(r); },
                                .death =
                                    [&] {
                                      hung = worker_->hung();
                                      return worker_->stop();
                                    },
                                .replace = [&](const std::string& reason) { restart_worker(reason); }});
    } catch (const Interrupted&) {
      worker_.reset();  // ended; the next run starts a new one
      throw;
    }
  }
  std::optional<RunReply>& reply = outcome.reply;

  RunResult result;
  if (!reply) {
    result.status = hung ? Status::Timeout : Status::LaunchError;
    result.message = fmt::format(
        "the CUDA worker process {} during the launch of '{}' (configuration {}): {}; a new worker was started",
        hung ? "stopped answering" : "died", loaded.program.kernel_name, request.instance.config_index, outcome.death);
    return result;
  }
  result.status = reply->status;
  result.message = std::move(reply->message);
  result.independent_of_configuration = reply->independent_of_configuration;
  if (!reply->samples_ms.empty()) result.time = TimingStats::from_samples(std::move(reply->samples_ms));
  if (reply->outputs_written) result.outputs = output_views();
  // Asked for counters or energy on a machine that cannot measure them: an error for the
  // run, not a test that silently lacks them.
  if (!reply->measure_unavailable.empty()) throw MeasurementUnavailable(reply->measure_unavailable);
  result.counters = std::move(reply->counters);
  result.profiling_ms = reply->profiling_ms;
  result.profiling_passes = reply->profiling_passes;
  result.energy = reply->energy;
  result.conditions = std::move(reply->conditions);
  result.warnings = std::move(reply->warnings);
  expected_.take(*reply, result);
  if (reply->context_lost) {
    result.message += reply->status == Status::Timeout
                          ? "; the worker process was replaced to stop the kernel"
                          : "; the error left CUDA unusable in the worker process, so it was replaced";
    restart_worker(to_string(reply->status));
  }
  return result;
}

}  // namespace
}  // namespace cuda

std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& options) {
  return std::make_unique<cuda::CudaBackend>(options);
}

bool cuda_backend_built() noexcept { return true; }

}  // namespace steer
