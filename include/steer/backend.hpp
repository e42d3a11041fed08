#pragma once
// The compute backend: compiles a configuration's kernel, runs it with timing, returns
// its outputs. CUDA, OpenCL and replay implement it; nothing above it names an API.
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "steer/error.hpp"
#include "steer/result.hpp"
#include "steer/spec.hpp"
#include "steer/device.hpp"
#include "steer/types.hpp"

namespace steer {

// A host buffer or scalar argument, already initialised.
struct HostArgument {
  std::string name;
  bool is_buffer = true;
  ElementType type = ElementType::F32;
  std::vector<std::byte> data;  // buffer contents, or the scalar's bytes
  bool output = false;
};

// What the backend needs once per tuning run: the kernel source and the arguments.
struct Program {
  Language language = Language::Cuda;
  std::string source;       // full text
  std::string source_name;  // file name, for compiler messages
  std::string kernel_name;
  std::vector<std::string> compiler_options;
  std::vector<std::string> include_dirs;
  std::vector<HostArgument> arguments;
};

// One configuration, resolved: preprocessor definitions and launch geometry.
struct KernelInstance {
  std::uint64_t config_index = 0;
  std::vector<std::pair<std::string, std::string>> defines;
  std::array<std::uint64_t, 3> grid{1, 1, 1};   // blocks / work-groups
  std::array<std::uint64_t, 3> block{1, 1, 1};  // threads / work-items per block
  std::size_t shared_memory_bytes = 0;
};

// A compiled kernel, owned by the backend that made it.
class CompiledKernel {
 public:
  virtual ~CompiledKernel() = default;
  double compile_ms = 0;
  std::string log;  // compiler warnings
};

// Thrown by compile(): the compiler rejected the source; what() holds the log.
class CompileError : public Error {
 public:
  using Error::Error;
};

struct RunOptions {
  int warmup = 1;
  int repetitions = 10;          // timed launches (at least)
  double min_total_ms = 0;       // keep repeating until this much kernel time was timed
  // Stop repeating once this much kernel time was timed, even before `repetitions` (0: no
  // cap). At least one launch is timed. Slow configurations then cost a bounded time: an
  // exhaustive recording spends its time where the fast ones are. Below min_total_ms it
  // has no effect.
  double max_total_ms = 0;
  // A launch slower than this is a timeout. A backend that runs kernels in a worker
  // process (CUDA, OpenCL) then replaces the worker, which stops the kernel.
  double timeout_ms = 10'000;
  bool read_outputs = true;      // copy outputs back for validation
  // Compare the outputs on the device against those given to Backend::expect_outputs, in
  // place of reading them back (RunResult::comparisons). Where the device cannot, the
  // outputs are read back instead, as read_outputs does. (Given to Executor::start: whether
  // the executor may have large outputs compared on the device; TuneOptions::validate_on_device.)
  bool compare_outputs = false;
  MeasureRequest measure;        // counters / energy, where the backend supports them
  // Once set (e.g. by SIGINT), run() abandons the test in progress, stopping its kernel, and
  // throws Interrupted: a hanging kernel does not hold up Ctrl-C.
  const std::atomic<bool>* interrupt = nullptr;
};

// One output's expected contents and how it is compared (Backend::expect_outputs).
struct ExpectedOutput {
  std::size_t argument = 0;           // the output's index among the program's arguments
  std::span<const std::byte> bytes;   // its expected contents, of the argument's size
  Comparison comparison;              // Tolerance or Ulps
};

// An output compared on the device: what validate_output (measure/validation.hpp) finds on
// the host, element for element the same test.
struct OutputComparison {
  std::size_t argument = 0;
  std::uint64_t elements = 0;
  std::uint64_t mismatches = 0;
  double max_abs_error = 0;     // largest |actual - expected| over the elements without NaN
  std::uint64_t first_mismatch = 0;  // its index, when there are mismatches
  double first_actual = 0, first_expected = 0;
};

struct RunResult {
  Status status = Status::Ok;  // Ok, LaunchError or Timeout
  std::string message;
  // The launch failed for a reason that lies in the program or its arguments rather than in
  // this configuration (an argument list the kernel does not take): every configuration
  // would likely fail the same way (Result::independent_of_configuration).
  bool independent_of_configuration = false;
  TimingStats time;
  // One view per output argument, in argument order, into host buffers the backend owns
  // and reuses: valid until its next run() or load(). (Outputs can be gigabytes; copying
  // or reallocating them per test would cost more than the test.)
  std::vector<std::span<const std::byte>> outputs;
  // RunOptions::compare_outputs: one per output compared on the device, and the time that
  // took (the comparison and reading back its summary). Empty when the outputs were read
  // back instead (`outputs`).
  std::vector<OutputComparison> comparisons;
  double comparison_ms = 0;
  std::map<std::string, double> counters;
  std::optional<EnergyStats> energy;
  std::optional<DeviceConditions> conditions;  // clocks, power, temperature: where the backend reads them
  double profiling_ms = 0;     // wall time of collecting the counters (all passes)
  int profiling_passes = 0;    // launches the counters took
  std::vector<std::string> warnings;  // said once per run, e.g. a metric the device lacks
};

// The application's own data for one launch (Backend::launch): per argument of the loaded
// program, in order, the bytes to write to the device before the launch (empty: the device's
// copy as it is; a scalar's bytes replace its value), and per output argument where to read
// it back to after the launch (empty: not read).
struct LaunchData {
  std::vector<std::span<const std::byte>> inputs;
  std::vector<std::span<std::byte>> outputs;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual DeviceInfo device() const = 0;
  // Sets the program for later compiles and uploads the arguments. Throws BackendError.
  virtual void load(const Program& program) = 0;
  // Thread-safe: may be called from several threads while run() executes.
  // Throws CompileError with the compiler log.
  virtual std::unique_ptr<CompiledKernel> compile(const KernelInstance& instance) = 0;
  // Restores every input before each launch (so each launch computes the same thing),
  // warms up, times repeated launches. A launch failure is a RunResult status, not an
  // exception; a failure that poisons the device context recovers it before returning.
  virtual RunResult run(const CompiledKernel& kernel, const KernelInstance& instance,
                        const RunOptions& options) = 0;
  // One launch on the application's data, as an application would launch it itself: writes
  // the inputs given, launches once (no warm-up, nothing restored), reads back the outputs
  // asked for, and times the launch (RunResult::time, one sample; no outputs views). A
  // launch failure or a launch slower than `timeout_ms` is a status, as in run(). Throws
  // BackendError when the data does not fit the loaded program, or when the backend cannot
  // launch on an application's data (the default).
  virtual RunResult launch(const CompiledKernel& kernel, const KernelInstance& instance, const LaunchData& data,
                           double timeout_ms);
  // Where run() and launch() execute kernels: in a worker process (the default), where a
  // kernel that crashes or hangs fails alone, or, with `yes`, in this process, which spares
  // each launch the round trip to the worker (OnlineTuner does this once converged, for a
  // configuration that ran cleanly many times). In this process a crashing kernel ends the
  // process, and a hanging one, once past its timeout, is left running while launches return
  // to a worker. Returns whether launches now run in this process (by default: false, a
  // backend that cannot). Throws BackendError when the device cannot be opened in this
  // process; launches then stay in the worker.
  virtual bool run_in_this_process(bool yes);
  // Copies the expected outputs to the device, so that a run() asked to compare the outputs
  // (RunOptions::compare_outputs) compares them there instead of reading them back: for
  // outputs of gigabytes, reading back and comparing on the host costs more than the test.
  // Holds until the next load(). Returns whether this backend compares on its device (by
  // default: false). Throws BackendError when an output does not fit its argument.
  virtual bool expect_outputs(const std::vector<ExpectedOutput>& expected);
};

inline bool Backend::run_in_this_process(bool) { return false; }
inline bool Backend::expect_outputs(const std::vector<ExpectedOutput>&) { return false; }

inline RunResult Backend::launch(const CompiledKernel&, const KernelInstance&, const LaunchData&, double) {
  throw BackendError("the " + device().backend + " backend cannot launch a kernel on an application's own data");
}

struct BackendOptions {
  int device = 0;      // device index (OpenCL: across all platforms, in order)
  int platform = -1;   // OpenCL platform, -1: any
};

// Factories. A backend that was not built throws BackendError saying why.
std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& options);
std::unique_ptr<Backend> make_opencl_backend(const BackendOptions& options);
bool cuda_backend_built() noexcept;
// "cuda", "opencl" or "auto" (CUDA if a GPU answers, else OpenCL). `note`, if given,
// receives why auto fell back. Throws BackendError naming what each backend said.
std::unique_ptr<Backend> open_backend(const std::string& kind, const BackendOptions& options,
                                      std::string* note = nullptr);
bool opencl_backend_built() noexcept;

}  // namespace steer
