// T4 results (the shared autotuning results format of Kernel Tuner, KTT and BAT) -> Results.
//
//   metadata.timeunit (default milliseconds; Kernel Tuner writes "miliseconds") scales
//     every time; metadata.device, kernel, problem_size, backend, spec_hash when present
//     (Steer's T4 export writes them; the schema leaves metadata open)
//   results[i]:
//     configuration{} -> configuration (ints stay ints, floats floats, ...). KTT writes
//       every value as a string ("16", "0.500000"): a parameter whose values are all
//       numbers written as strings is read as numbers (ints if all are integers), so that
//       its values are ordered and match a model or spec that has them as numbers. Files
//       Steer wrote (metadata.generator "steer") keep their types as they are.
//     invalidity: correct -> Ok, compile -> CompileError, runtime -> LaunchError,
//       correctness -> InvalidOutput, timeout -> Timeout, constraints -> Skipped;
//       a failure's message is the invalidity
//     times.runtimes -> samples (median, min, max, stddev computed from them);
//     times.compilation (or compilation_time, as the schema spells it) -> compile_ms;
//     times.validation -> validation_ms; times.framework -> overhead_ms;
//     times.profiling_runs + times.profiling_overhead (KTT) -> profiling_ms, and taken
//       out of framework, which in KTT's files includes them;
//     times.search_algorithm is the searcher's time, not the configuration's: left out
//     measurements[{name, value, unit}]: "time" with a number -> mean_ms exactly as
//       recorded (the tuner's objective; the one sample if there are no runtimes);
//       other numbers -> counters under their name; strings (failure markers) are skipped
//     compilation_data (KTT) -> the counters KTT's JSON import gives (import_ktt.cpp):
//       registers -> RegistersCount, local_memory_size -> LocalMemorySize, ...; threads <-
//       global_size x local_size under CUDA (KTT writes CUDA's grid in blocks), global_size
//       otherwise
//     timestamp -> timestamp
#include <fmt/core.h>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>

#include "steer/error.hpp"
#include "steer/recording.hpp"
#include "recording/formats.hpp"

namespace steer::store_detail {

namespace {

const std::map<std::string, Status, std::less<>> kInvalidities{
    {"correct", Status::Ok},           {"compile", Status::CompileError}, {"runtime", Status::LaunchError},
    {"correctness", Status::InvalidOutput}, {"timeout", Status::Timeout}, {"constraints", Status::Skipped},
};

double product_of_dimensions(const Node& size) { return size["x"].number() * size["y"].number() * size["z"].number(); }

// KTT's compilation data as the counters its JSON import names them.
void read_compilation_data(const Node& data, bool grid_in_blocks, Result& result) {
  static constexpr std::pair<const char*, const char*> kFields[] = {{"registers", "RegistersCount"},
                                                                    {"local_memory_size", "LocalMemorySize"},
                                                                    {"private_memory_size", "PrivateMemorySize"},
                                                                    {"constant_memory_size", "ConstantMemorySize"},
                                                                    {"max_work_group_size", "MaxWorkGroupSize"}};
  for (const auto& [field, name] : kFields) {
    if (auto value = data.find(field)) result.counters[name] = value->number();
  }
  if (auto global = data.find("global_size")) {
    double threads = product_of_dimensions(*global);
    if (grid_in_blocks) threads *= product_of_dimensions(data["local_size"]);
    result.counters["threads"] = threads;
  }
}

Result read_result(const Node& node, const TimeUnit& unit, bool grid_in_blocks) {
  Result result;
  result.configuration = configuration_from_json(node["configuration"]);
  Node invalidity = node["invalidity"];
  auto found = kInvalidities.find(invalidity.string());
  if (found == kInvalidities.end()) invalidity.fail(fmt::format("unknown invalidity '{}'", invalidity.string()));
  result.status = found->second;
  if (result.status != Status::Ok) result.message = invalidity.string();

  Node times = node["times"];
  std::vector<double> samples;
  if (auto runtimes = times.find("runtimes")) {
    for (std::size_t i = 0; i < runtimes->size(); ++i) samples.push_back(unit.to_ms((*runtimes)[i].number()));
  }
  if (auto compilation = times.find("compilation")) {
    result.compile_ms = unit.to_ms(compilation->number());
  } else if (auto compilation_time = times.find("compilation_time")) {
    result.compile_ms = unit.to_ms(compilation_time->number());
  }
  if (auto validation = times.find("validation")) result.validation_ms = unit.to_ms(validation->number());
  for (const char* key : {"profiling_runs", "profiling_overhead"}) {
    if (auto profiling = times.find(key)) result.profiling_ms += unit.to_ms(profiling->number());
  }
  if (auto framework = times.find("framework")) {
    result.overhead_ms = std::max(0.0, unit.to_ms(framework->number()) - result.profiling_ms);
  }

  std::optional<double> recorded_time_ms;
  if (auto measurements = node.find("measurements")) {
    for (std::size_t i = 0; i < measurements->size(); ++i) {
      Node measurement = (*measurements)[i];
      Node value = measurement["value"];
      if (!value.json().is_number()) continue;
      std::string name = measurement["name"].string();
      if (name == "time") {
        // Its own unit if it names one (Kernel Tuner leaves it empty), else the file's.
        auto own_unit = measurement.find("unit");
        bool has_own = own_unit && !own_unit->string().empty();
        recorded_time_ms = (has_own ? time_unit(*own_unit) : unit).to_ms(value.number());
      } else {
        result.counters[recorded_counter_name(name)] = value.number();
      }
    }
  }
  if (samples.empty() && recorded_time_ms) samples.push_back(*recorded_time_ms);
  if (!samples.empty()) {
    result.time = TimingStats::from_samples(std::move(samples));
    if (recorded_time_ms) result.time.mean_ms = *recorded_time_ms;
  }
  if (auto data = node.find("compilation_data")) read_compilation_data(*data, grid_in_blocks, result);
  if (auto timestamp = node.find("timestamp")) result.timestamp = iso8601_utc(timestamp->string());
  return result;
}

}  // namespace

ImportedRecording import_t4(const Node& root) {
  ImportedRecording recording;
  recording.format = RecordingFormat::T4;
  recording.runtime = RuntimeStatistic::Mean;  // the tuner's objective
  TimeUnit unit;  // T4's default: milliseconds
  bool written_by_steer = false;
  bool grid_in_blocks = false;
  if (auto metadata = root.find("metadata")) {
    if (auto name = metadata->find("timeunit")) unit = time_unit(*name);
    auto text = [&](const char* key) {
      auto member = metadata->find(key);
      return member ? member->string() : std::string();
    };
    recording.device = text("device");
    recording.kernel = text("kernel");
    recording.problem_size = text("problem_size");
    recording.backend = text("backend");
    recording.spec_hash = text("spec_hash");
    written_by_steer = text("generator") == "steer";
    grid_in_blocks = text("compute_api") == "CUDA";
  }
  Node results = root["results"];
  recording.results.reserve(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) recording.results.push_back(read_result(results[i], unit, grid_in_blocks));
  if (!written_by_steer) read_numeric_strings(recording.results);
  recording.parameters = parameters_found(recording.results);
  return recording;
}

}  // namespace steer::store_detail
