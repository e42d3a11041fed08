// T4 results (the shared autotuning results format of Kernel Tuner, KTT and BAT) -> Results.
//
//   metadata.timeunit (default milliseconds; Kernel Tuner writes "miliseconds") scales
//     every time; metadata.device, kernel, problem_size, backend, spec_hash when present
//     (Steer's T4 export writes them; the schema leaves metadata open)
//   results[i]:
//     configuration{} -> configuration (ints stay ints, floats floats, ...)
//     invalidity: correct -> Ok, compile -> CompileError, runtime -> LaunchError,
//       correctness -> InvalidOutput, timeout -> Timeout, constraints -> Skipped;
//       a failure's message is the invalidity
//     times.runtimes -> samples (median, min, max, stddev computed from them);
//     times.compilation (or compilation_time, as the schema spells it) -> compile_ms;
//     times.validation -> validation_ms; times.framework -> overhead_ms;
//     times.search_algorithm is the searcher's time, not the configuration's: left out
//     measurements[{name, value, unit}]: "time" with a number -> mean_ms exactly as
//       recorded (the tuner's objective; the one sample if there are no runtimes);
//       other numbers -> counters under their name; strings (failure markers) are skipped
//     timestamp -> timestamp
#include <fmt/core.h>
#include <map>

#include "steer/error.hpp"
#include "steer/recording.hpp"
#include "recording/formats.hpp"

namespace steer::store_detail {

namespace {

const std::map<std::string, Status, std::less<>> kInvalidities{
    {"correct", Status::Ok},           {"compile", Status::CompileError}, {"runtime", Status::LaunchError},
    {"correctness", Status::InvalidOutput}, {"timeout", Status::Timeout}, {"constraints", Status::Skipped},
};

Result read_result(const Node& node, const TimeUnit& unit) {
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
  if (auto framework = times.find("framework")) result.overhead_ms = unit.to_ms(framework->number());

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
  if (auto timestamp = node.find("timestamp")) result.timestamp = iso8601_utc(timestamp->string());
  return result;
}

}  // namespace

ImportedRecording import_t4(const Node& root) {
  ImportedRecording recording;
  recording.format = RecordingFormat::T4;
  recording.runtime = RuntimeStatistic::Mean;  // the tuner's objective
  TimeUnit unit;  // T4's default: milliseconds
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
  }
  Node results = root["results"];
  recording.results.reserve(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) recording.results.push_back(read_result(results[i], unit));
  recording.parameters = parameters_found(recording.results);
  return recording;
}

}  // namespace steer::store_detail
