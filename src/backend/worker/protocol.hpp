#pragma once
// The messages between a backend and its worker process, in the order they flow:
//   backend -> worker  Setup      device, where the arguments lie in shared memory
//   worker  -> backend Hello      the device's description, or why it cannot be used
//   backend -> worker  RunRequest a compiled kernel and a launch        (repeated)
//   worker  -> backend RunReply   status, times; outputs in shared memory
// The same messages serve every backend: the kernel travels as the image its compiler made
// in the backend's process (a CUDA cubin, an OpenCL program binary). A RunRequest is either
// a test (warm-up, timed launches, inputs restored before each) or one launch on an
// application's own data (Backend::launch), which travels through the shared memory too.
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backend/worker/channel.hpp"
#include "backend/worker/output_comparison.hpp"
#include "steer/backend.hpp"

namespace steer::worker {

// Where one argument lies in the shared memory. Inputs are stored once and never written
// again, so a new worker can upload them after its predecessor was killed; outputs are
// read back into a separate area.
struct ArgumentSlot {
  std::string name;
  bool is_buffer = true;
  ElementType type = ElementType::F32;
  bool output = false;
  std::size_t offset = 0;  // of the initial contents
  std::size_t bytes = 0;
  std::size_t output_offset = 0;  // outputs only: where the worker writes the result
  // Backend::launch: where the application's bytes for this argument lie, written by the
  // backend before the launch and, for an output, by the worker after it.
  std::size_t application_offset = 0;
  // Outputs only: where their expected contents lie (Backend::expect_outputs), which the
  // worker copies to the device to compare the outputs there.
  std::size_t expected_offset = 0;
};

// The shared memory: the heartbeat (below) on a page of its own, then the inputs, then the
// outputs area, then the application area (Backend::launch), then the expected outputs
// (Backend::expect_outputs). Each area starts on a page boundary, so that a worker can
// protect the inputs from its kernels' stray writes. The memory file is sparse: the
// application and expected areas take memory only once they are written.
struct SharedLayout {
  std::vector<ArgumentSlot> arguments;
  std::size_t inputs_offset = 0;
  std::size_t outputs_offset = 0;
  std::size_t application_offset = 0;
  std::size_t expected_offset = 0;
  std::size_t total_bytes = 0;
};

SharedLayout layout_arguments(const std::vector<HostArgument>& arguments);
// A new memory file (named `name`, for /proc) holding the arguments where `layout` puts them.
SharedMemory share_arguments(const std::vector<HostArgument>& arguments, const SharedLayout& layout, const char* name);

// The worker's promise of progress, in the first bytes of the shared memory: the steady
// clock's time (both processes read the same CLOCK_MONOTONIC) by which it will have
// finished what it is doing, or 0 while it waits for a request. The backend's watchdog
// ends a worker that overruns its promise by more than a grace period: a driver call that
// never returns would otherwise hang the tuner with it.
class Heartbeat {
 public:
  using Clock = std::chrono::steady_clock;
  Heartbeat() = default;
  explicit Heartbeat(std::span<std::byte> memory);  // the shared memory; empty: no heartbeat

  // The worker: "done within `limit` from now".
  void promise(std::chrono::duration<double, std::milli> limit) noexcept;
  void idle() noexcept;
  // The backend: the promised time, if the worker made one.
  std::optional<Clock::time_point> deadline() const noexcept;

 private:
  std::int64_t* slot_ = nullptr;
};

// Limits of the device a launch is checked against before it is made.
struct DeviceLimits {
  std::array<std::uint64_t, 3> max_block{1024, 1024, 64};
  std::array<std::uint64_t, 3> max_grid{2147483647, 65535, 65535};
  std::uint64_t max_threads_per_block = 1024;
  std::uint64_t max_shared_per_block_optin = 48 * 1024;  // with the kernel's opt-in
};

struct Setup {
  int platform = -1;  // OpenCL: the platform, -1: any (BackendOptions)
  int device = 0;
  bool has_program = false;  // false: only describe the device
  SharedLayout layout;
};

struct Hello {
  std::string problem;  // empty: ready
  DeviceInfo device;
  DeviceLimits limits;
};

struct RunRequest {
  std::string key;          // identifies the image, for the worker's cache of loaded kernels
  std::string symbol;       // the kernel in the image
  std::string kernel_name;  // as the program names it, for messages
  // Sent once per worker (WorkerProcess::run): a worker that was sent the image under `key`
  // before is sent none (image_left_out, on its side), and asks for it
  // (RunReply::image_needed) if it no longer holds it.
  std::vector<char> image;
  bool image_left_out = false;
  KernelInstance instance;  // geometry only: the defines are in the image already
  RunOptions options;       // incl. what to measure beyond time (counters, energy)
  std::uint64_t threads = 0;  // launched threads, reported with the counters
  // Backend::launch rather than a test: one launch on the application's data, with no
  // warm-up and nothing restored before it (options.timeout_ms bounds it). Per argument:
  // written[i] when its bytes in its application slot replace the device's (a buffer's
  // contents; a scalar's value, for this launch only), read[i] when it is an output to read
  // back into its application slot after the launch.
  bool application = false;
  std::vector<std::uint8_t> written, read;
  // RunOptions::compare_outputs: the outputs to compare on the device, and which expected
  // contents the shared memory holds (a number the backend changes whenever it writes new
  // ones): a worker that has not uploaded those yet does so first.
  std::vector<ComparedOutput> compared;
  std::uint64_t expected_generation = 0;
  // In the backend's own process only (InProcessDevice), never sent: the application's
  // memory itself, per argument, written from and read into in place of the application
  // slots (empty spans: the slots), which saves copying every input and output once more.
  std::vector<std::span<const std::byte>> direct_inputs;
  std::vector<std::span<std::byte>> direct_outputs;
};

// Backend::launch in the backend's process: checks `data` against the loaded arguments
// (BackendError when it does not fit: one input per argument or none, each of the argument's
// size; outputs likewise), copies the inputs given into their application slots and makes
// `request` an application launch, bounded by `timeout_ms`, that writes them and reads back
// the outputs asked for. With `direct` (a launch in this process: InProcessDevice) nothing
// is copied: the request points at the application's memory (direct_inputs, direct_outputs),
// and there is nothing to deliver afterwards.
void stage_launch_data(const SharedLayout& layout, const SharedMemory& memory, const LaunchData& data,
                       double timeout_ms, RunRequest& request, bool direct = false);
// After the worker's reply: the outputs it read back, from their application slots into the
// application's memory.
void deliver_launch_outputs(const SharedLayout& layout, const SharedMemory& memory, const LaunchData& data);

struct RunReply;

// The backend's side of comparing outputs on the device (Backend::expect_outputs): the
// expected contents written to their area of the shared memory, added to each request that
// asks for a comparison, and the reply's comparisons taken into the result.
class ExpectedOutputs {
 public:
  // Checks each output against `layout` (an output buffer of the same size; Ignore is left
  // out) and writes its contents to its slot. Throws BackendError naming the one that does not fit.
  void set(const SharedLayout& layout, const SharedMemory& memory, const std::vector<ExpectedOutput>& expected);
  void clear() noexcept { compared_.clear(); }
  // A request whose options ask to compare: what the worker needs, or, with nothing to
  // compare against, the outputs read back instead.
  void prepare(RunRequest& request) const;
  // The reply's comparisons into `result`. A worker that could not compare read the outputs
  // back instead; comparing then stops, with a warning in `result` that says why. Call it
  // after the reply's own warnings were moved into `result`.
  void take(RunReply& reply, RunResult& result);

 private:
  std::vector<ComparedOutput> compared_;
  std::uint64_t generation_ = 0;
};

struct RunReply {
  Status status = Status::Ok;
  std::string message;
  // The failure lies in the arguments or the program, not in this configuration's kernel
  // (RunResult::independent_of_configuration).
  bool independent_of_configuration = false;
  std::vector<double> samples_ms;
  bool outputs_written = false;
  // The outputs compared on the device (RunRequest::compared), and how long that took. Where
  // the worker could not compare them (no double precision, out of device memory, ...),
  // comparison_failed says why, and the outputs were read back instead.
  std::vector<OutputComparison> comparisons;
  double comparison_ms = 0;
  std::string comparison_failed;
  // The worker's device is unusable (a sticky error, or a kernel still running): it ends
  // after this reply, and the backend starts a new one.
  bool context_lost = false;
  // The request came without its image, and the worker holds none under its key: nothing
  // ran; WorkerProcess::run sends the request again with the image.
  bool image_needed = false;
  std::map<std::string, double> counters;  // hardware metric name -> value, when asked for
  double profiling_ms = 0;
  int profiling_passes = 0;
  std::optional<EnergyStats> energy;
  std::optional<DeviceConditions> conditions;  // clocks, power, temperature after the timed launches
  std::vector<std::string> warnings;       // e.g. metrics this device lacks (dropped)
  // Counters or energy were asked for and cannot be measured on this machine at all
  // (no CUPTI, no NVML): the backend turns this into an error for the whole run.
  std::string measure_unavailable;
  // Counters or energy were asked for and their measurement failed in this run (a CUPTI or
  // NVML call), after the time and the outputs were taken: the status stays Ok.
  std::string measure_failed;
};

// A worker's part of a request that compares outputs (RunRequest::compared): where it does
// not hold the request's expected contents yet (`held`, the generation it uploaded),
// `upload(argument)` for each compared output; then `compare(output)` for each, into the
// reply, with the time it all took. An Error fails the comparison (its message in
// comparison_failed, nothing compared) and returns false: the worker then reads the outputs
// back. An exception of type `Passed` (a kernel that timed out, say) propagates.
struct NothingPassed {};

// Output `argument`'s comparison from its groups' summaries (`partials`, of
// comparison_groups(elements) groups). Where elements differ, the first one's value is read
// by `read_actual(byte_offset, destination)` from the device and its expected value from the
// shared memory.
OutputComparison summarise_comparison(const ArgumentSlot& slot, std::size_t argument,
                                      std::span<const std::uint64_t> partials, const SharedMemory& memory,
                                      const std::function<void(std::size_t, std::span<std::byte>)>& read_actual);
template <typename Passed = NothingPassed, typename Upload, typename Compare>
bool compare_outputs(const RunRequest& request, RunReply& reply, std::uint64_t& held, Upload&& upload,
                     Compare&& compare) {
  const auto started = std::chrono::steady_clock::now();
  try {
    if (held != request.expected_generation) {
      held = 0;
      for (const ComparedOutput& output : request.compared) upload(output.argument);
      held = request.expected_generation;
    }
    for (const ComparedOutput& output : request.compared) reply.comparisons.push_back(compare(output));
  } catch (const Passed&) {
    throw;
  } catch (const Error& e) {
    reply.comparisons.clear();
    reply.comparison_failed = e.what();
    return false;
  }
  reply.comparison_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return true;
}

MessageWriter encode(const Setup& setup);
MessageWriter encode(const Hello& hello);
// Without `with_image`, the request's image is left out (RunRequest::image).
MessageWriter encode(const RunRequest& request, bool with_image = true);
MessageWriter encode(const RunReply& reply);
Setup decode_setup(MessageReader message);
Hello decode_hello(MessageReader message);
RunRequest decode_run_request(MessageReader message);
RunReply decode_run_reply(MessageReader message);

}  // namespace steer::worker
