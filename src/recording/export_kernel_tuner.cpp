// Results -> a Kernel Tuner cache file (kernel_tuner/util.py: process_cache, read_cache,
// store_cache), which Kernel Tuner reads to resume tuning or, with simulation_mode=True, to
// replay its strategies against Steer's measurements; import_kernel_tuner.cpp reads it back.
//
//   device_name <- device; kernel_name <- kernel (spec name); objective "time"
//   problem_size <- "4096x4096" -> [4096, 4096], "4096" -> 4096, other text as it is
//     (Kernel Tuner accepts a string problem size)
//   tune_params_keys, tune_params <- each parameter's distinct values in the results,
//     ascending, parameters in configuration order (parameters_found): a store keeps
//     results, not the spec's value lists
//   cache{"v1,v2,...": entry}, one entry per configuration in test order (the first result
//     of a configuration wins); the key is Kernel Tuner's ",".join(str(v)) of the values:
//     entry[p] <- each parameter's value, typed as in the configuration
//     ok: time <- median_ms, the statistic Steer ranks by (Kernel Tuner's own caches hold
//       the mean; a replay in Kernel Tuner then ranks as Steer did), times <- the samples; failed: time <- Kernel Tuner's failure name:
//       compile_error -> CompilationFailedConfig, launch_error, timeout, invalid_output ->
//       RuntimeFailedConfig, skipped -> InvalidConfig (Kernel Tuner has no finer classes;
//       they import back as launch_error and skipped)
//     compile_time <- compile_ms, verification_time <- validation_ms, benchmark_time <- the
//       sum of the samples (0 when failed), strategy_time 0, framework_time <- overhead_ms,
//       all in ms as Kernel Tuner writes them; timestamp <- timestamp. A test with a
//       framework time but no compile time (KTT's, whose overhead includes compiling)
//       writes that time as compile_time and framework_time 0: Kernel Tuner's simulation
//       replays a cache's compile time but measures its own framework time, so the cost of
//       the test is replayed, not dropped.
//     each counter, and energy (J per launch) and power (W) when measured, as a number
//       field (Kernel Tuner's observers write theirs so; they import back as counters).
//       A counter named like a parameter or one of the fields above, or with a non-finite
//       value, is left out: Kernel Tuner's entry has one namespace, and JSON no NaN.
// The error message and profiling details have no place in the format and are left out.
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <ostream>
#include <set>
#include <string>
#include <unordered_set>

#include "steer/recording.hpp"
#include "steer/store.hpp"
#include "recording/formats.hpp"

namespace steer {

namespace {

using store_detail::Json;

const char* failure_name(Status status) {
  switch (status) {
    case Status::Ok: break;
    case Status::CompileError: return "CompilationFailedConfig";
    case Status::LaunchError:
    case Status::Timeout:
    case Status::InvalidOutput: return "RuntimeFailedConfig";
    case Status::Skipped: return "InvalidConfig";
  }
  return "RuntimeFailedConfig";
}

// A value as Python's str() writes it, which is how Kernel Tuner spells its cache keys.
std::string python_str(const Value& value) {
  if (value.is_bool()) return value.as_bool() ? "True" : "False";
  if (value.is_string()) return value.as_string();
  return store_detail::to_json(value).dump();
}

std::string cache_key(const Result& result) {
  std::string key;
  for (const auto& [name, value] : result.configuration) {
    if (!key.empty()) key += ',';
    key += python_str(value);
  }
  return key;
}

// "4096x4096" -> [4096, 4096]; "4096" -> 4096; anything else stays text.
Json problem_size(const std::string& text) {
  Json extents = Json::array();
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('x', start);
    if (end == std::string::npos) end = text.size();
    const std::string part = text.substr(start, end - start);
    if (part.empty() || part.size() > 18 || part.find_first_not_of("0123456789") != std::string::npos) {
      return text;
    }
    extents.push_back(std::stoll(part));
    start = end + 1;
  }
  if (extents.size() == 1) return extents[0];
  return extents;
}

Json cache_entry(const Result& result, const std::set<std::string, std::less<>>& taken) {
  Json entry = Json::object();
  for (const auto& [name, value] : result.configuration) entry[name] = store_detail::to_json(value);
  if (result.ok()) {
    entry["time"] = store_detail::number_or_null(result.time.median_ms);
    Json times = Json::array();
    for (double sample : result.time.samples_ms) times.push_back(store_detail::number_or_null(sample));
    entry["times"] = std::move(times);
  } else {
    entry["time"] = failure_name(result.status);
  }
  const double benchmark =
      result.ok() ? std::accumulate(result.time.samples_ms.begin(), result.time.samples_ms.end(), 0.0) : 0.0;
  const bool compiling_in_overhead = result.compile_ms == 0 && result.overhead_ms > 0;
  entry["compile_time"] = store_detail::number_or_null(compiling_in_overhead ? result.overhead_ms : result.compile_ms);
  entry["verification_time"] = store_detail::number_or_null(result.validation_ms);
  entry["benchmark_time"] = store_detail::number_or_null(benchmark);
  entry["strategy_time"] = 0;
  entry["framework_time"] = store_detail::number_or_null(compiling_in_overhead ? 0.0 : result.overhead_ms);
  if (!result.timestamp.empty()) entry["timestamp"] = result.timestamp;
  auto measurement = [&](const std::string& name, double value) {
    if (std::isfinite(value) && !taken.contains(name) && !entry.contains(name)) entry[name] = value;
  };
  for (const auto& [name, value] : result.counters) measurement(name, value);
  if (result.energy) {
    measurement("energy", result.energy->joules_per_launch);
    measurement("power", result.energy->average_watts);
  }
  return entry;
}

}  // namespace

void export_kernel_tuner(std::ostream& out, const TuningKey& tuning, std::span<const Result> results) {
  const std::vector<RecordedParameter> parameters = store_detail::parameters_found(results);
  std::set<std::string, std::less<>> taken{"time",           "times",         "compile_time", "verification_time",
                                           "benchmark_time", "strategy_time", "framework_time", "timestamp"};
  Json keys = Json::array();
  Json tune_params = Json::object();
  for (const RecordedParameter& parameter : parameters) {
    keys.push_back(parameter.name);
    Json values = Json::array();
    for (const Value& value : parameter.values) values.push_back(store_detail::to_json(value));
    tune_params[parameter.name] = std::move(values);
    taken.insert(parameter.name);
  }
  Json header{{"device_name", tuning.device},
              {"kernel_name", tuning.spec_name},
              {"problem_size", problem_size(tuning.problem_size)},
              {"tune_params_keys", std::move(keys)},
              {"tune_params", std::move(tune_params)},
              {"objective", "time"}};
  std::string text = header.dump();
  text.pop_back();  // reopen the object to append "cache", one entry a line as Kernel Tuner writes it
  out << text << ",\"cache\":{";
  std::unordered_set<std::string> written;
  for (const Result& result : results) {
    std::string key = cache_key(result);
    if (!written.insert(key).second) continue;
    out << (written.size() == 1 ? "\n" : ",\n") << Json(key).dump() << ':' << cache_entry(result, taken).dump();
  }
  out << "}\n}\n";  // Kernel Tuner's closing: read_cache takes a file ending otherwise as cut short
}

}  // namespace steer
