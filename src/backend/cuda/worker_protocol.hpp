#pragma once
// The messages between the CUDA backend and its worker process, in the order they flow:
//   backend -> worker  Setup      device index, where the arguments lie in shared memory
//   worker  -> backend Hello      the device's description, or why it cannot be used
//   backend -> worker  RunRequest a cubin and a launch            (repeated)
//   worker  -> backend RunReply   status, times; outputs in shared memory
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backend/cuda/launch_check.hpp"
#include "backend/cuda/worker_channel.hpp"
#include "steer/backend.hpp"

namespace steer::cuda {

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
};

struct SharedLayout {
  std::vector<ArgumentSlot> arguments;
  std::size_t total_bytes = 0;
};

// Inputs first, then the outputs area.
SharedLayout layout_arguments(const std::vector<HostArgument>& arguments);

struct Setup {
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
  std::string key;          // identifies the cubin, for the worker's module cache
  std::string symbol;       // the kernel in the cubin
  std::string kernel_name;  // as the program names it, for messages
  std::vector<char> image;
  KernelInstance instance;  // geometry only: the defines are in the cubin already
  RunOptions options;       // incl. what to measure beyond time (counters, energy)
  std::uint64_t threads = 0;  // launched threads, reported with the counters
};

struct RunReply {
  Status status = Status::Ok;
  std::string message;
  std::vector<double> samples_ms;
  bool outputs_written = false;
  bool context_lost = false;  // the worker's CUDA is unusable (sticky error, or a kernel still running)
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

MessageWriter encode(const Setup& setup);
MessageWriter encode(const Hello& hello);
MessageWriter encode(const RunRequest& request);
MessageWriter encode(const RunReply& reply);
Setup decode_setup(MessageReader message);
Hello decode_hello(MessageReader message);
RunRequest decode_run_request(MessageReader message);
RunReply decode_run_reply(MessageReader message);

}  // namespace steer::cuda
