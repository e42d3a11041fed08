// KTT 2.x JSON output -> Results.
//
//   Metadata.Device -> device; Metadata.ComputeApi -> backend ("cuda", "opencl");
//   Metadata.TimeUnit (default Microseconds) scales every duration and overhead to ms;
//   Metadata.Timestamp -> every result's timestamp (KTT records none per result).
//   Results[i]:
//     KernelName (of the first result) -> the recording's kernel
//     Configuration[{Name, Value}] -> configuration (ints stay ints, floats floats, ...)
//     Status: Ok -> Ok, ComputationFailed -> LaunchError, ValidationFailed -> InvalidOutput,
//             CompilationFailed -> CompileError, DeviceLimitsExceeded -> LaunchError;
//             a failure's message is KTT's status name (KTT records no error text)
//     ComputationResults[]: one per kernel the test ran (one unless the tuned unit is a
//       composition of kernels); with several, each kernel's counters are named
//       "<KernelFunction>/<name>" and their durations add up.
//       Duration -> the test's one timing sample (KTT keeps one duration per test)
//       ProfilingData.Counters[{Name, Value}] -> counters, named by recorded_counter_name
//       GlobalSize x LocalSize -> counter "threads": threads launched, which the expert
//         system needs (with GlobalSizeType "CUDA" GlobalSize counts blocks, otherwise
//         threads, as in OpenCL)
//       CompilationData: KTT 2.1 records the kernel's resource usage there, not a compile
//         time, so compile_ms stays 0 and RegistersCount, LocalMemorySize (shared memory),
//         PrivateMemorySize, ConstantMemorySize and MaxWorkGroupSize become counters of
//         those names.
//       Overhead of a kernel with ProfilingData -> profiling_ms (the profiling passes; KTT
//         records no pass count, so profiling_passes stays 0)
//     ValidationOverhead -> validation_ms; TotalOverhead less validation and profiling ->
//       overhead_ms (KTT's framework time for the test: compiling, data movement, searcher;
//       KTT records no compile time of its own)
#include <algorithm>
#include <cctype>
#include <fmt/core.h>
#include <map>

#include "steer/error.hpp"
#include "steer/recording.hpp"
#include "recording/formats.hpp"

namespace steer::store_detail {

namespace {

const std::map<std::string, Status, std::less<>> kKttStatuses{
    {"Ok", Status::Ok},
    {"ComputationFailed", Status::LaunchError},
    {"ValidationFailed", Status::InvalidOutput},
    {"CompilationFailed", Status::CompileError},
    {"DeviceLimitsExceeded", Status::LaunchError},
};

constexpr const char* kCompilationDataFields[] = {"RegistersCount", "LocalMemorySize", "PrivateMemorySize",
                                                  "ConstantMemorySize", "MaxWorkGroupSize"};

double product_of_dimensions(const Node& size) {
  return size["X"].number() * size["Y"].number() * size["Z"].number();
}

struct KttContext {
  TimeUnit unit{1, 1e3};           // Metadata.TimeUnit; KTT's default is microseconds
  bool global_size_in_blocks = false;  // Metadata.GlobalSizeType == "CUDA"
  std::string timestamp;
};

// Adds one kernel's measurements to `result`; returns its duration in ms.
double read_computation(const Node& computation, const std::string& prefix, const KttContext& ktt, Result& result) {
  auto add_counter = [&](std::string_view name, double value) {
    result.counters[prefix + recorded_counter_name(name)] = value;
  };
  if (auto global = computation.find("GlobalSize")) {
    double threads = product_of_dimensions(*global);
    if (ktt.global_size_in_blocks) threads *= product_of_dimensions(computation["LocalSize"]);
    add_counter("threads", threads);
  }
  if (auto compilation = computation.find("CompilationData")) {
    for (const char* field : kCompilationDataFields) {
      if (auto value = compilation->find(field)) add_counter(field, value->number());
    }
  }
  if (auto profiling = computation.find("ProfilingData")) {
    if (auto counters = profiling->find("Counters")) {
      for (std::size_t i = 0; i < counters->size(); ++i) {
        Node counter = (*counters)[i];
        add_counter(counter["Name"].string(), counter["Value"].number());
      }
    }
  }
  if (computation.find("ProfilingData")) {
    if (auto overhead = computation.find("Overhead")) result.profiling_ms += ktt.unit.to_ms(overhead->number());
  }
  return ktt.unit.to_ms(computation["Duration"].number());
}

Result read_result(const Node& node, const KttContext& ktt) {
  Result result;
  Node configuration = node["Configuration"];
  for (std::size_t i = 0; i < configuration.size(); ++i) {
    Node parameter = configuration[i];
    result.configuration.emplace_back(parameter["Name"].string(), value_from_json(parameter["Value"]));
  }
  Node status = node["Status"];
  auto found = kKttStatuses.find(status.string());
  if (found == kKttStatuses.end()) status.fail(fmt::format("unknown KTT status '{}'", status.string()));
  result.status = found->second;
  if (result.status != Status::Ok) result.message = status.string();

  Node computations = node["ComputationResults"];
  const bool several = computations.size() > 1;
  double duration_ms = 0;
  for (std::size_t i = 0; i < computations.size(); ++i) {
    Node computation = computations[i];
    std::string prefix = several ? computation["KernelFunction"].string() + "/" : std::string();
    duration_ms += read_computation(computation, prefix, ktt, result);
  }
  if (computations.size() > 0) result.time = TimingStats::from_samples({duration_ms});
  if (auto validation = node.find("ValidationOverhead")) result.validation_ms = ktt.unit.to_ms(validation->number());
  if (auto overhead = node.find("TotalOverhead")) {
    result.overhead_ms = std::max(0.0, ktt.unit.to_ms(overhead->number()) - result.validation_ms - result.profiling_ms);
  }
  result.timestamp = ktt.timestamp;
  return result;
}

}  // namespace

ImportedRecording import_ktt(const Node& root) {
  ImportedRecording recording;
  recording.format = RecordingFormat::Ktt;
  KttContext ktt;
  if (auto metadata = root.find("Metadata")) {
    if (auto device = metadata->find("Device")) recording.device = device->string();
    if (auto api = metadata->find("ComputeApi")) {
      std::string name = api->string();
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      recording.backend = name;
    }
    if (auto unit = metadata->find("TimeUnit")) ktt.unit = time_unit(*unit);
    if (auto type = metadata->find("GlobalSizeType")) ktt.global_size_in_blocks = type->string() == "CUDA";
    if (auto timestamp = metadata->find("Timestamp")) ktt.timestamp = iso8601_utc(timestamp->string());
  }
  Node results = root["Results"];
  recording.results.reserve(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) recording.results.push_back(read_result(results[i], ktt));
  if (results.size() > 0) {
    Node first = results[0];
    if (auto kernel = first.find("KernelName")) recording.kernel = kernel->string();
  }
  recording.parameters = parameters_found(recording.results);
  return recording;
}

}  // namespace steer::store_detail
