// Kernel Tuner cache file -> Results.
//
//   device_name -> device; kernel_name -> kernel; problem_size ([4096, 4096] -> "4096x4096")
//   tune_params_keys + tune_params -> parameters, with their declared value lists
//   cache{"v1,v2,...": entry}, in file order:
//     entry[p] for p in tune_params_keys -> configuration (parsed from the key when the
//       entry is only a failure string)
//     time (ms), a number -> Ok, and mean_ms = time exactly as recorded (Kernel Tuner's
//       objective, the mean of times, and the recording's runtime: RuntimeStatistic::Mean);
//       times -> samples, from which median, min, max and
//       stddev are computed (no times: time is the one sample)
//     a failure string as time, or as the whole entry -> status, message = that string:
//       InvalidConfig -> Skipped, CompilationFailedConfig -> CompileError,
//       RuntimeFailedConfig and ErrorConfig -> LaunchError
//     compile_time -> compile_ms, verification_time -> validation_ms,
//     framework_time -> overhead_ms, timestamp -> timestamp
//     other numeric fields (GFLOP/s, observers' energy, power, counters) -> counters;
//     benchmark_time and strategy_time describe the tuning run, not the configuration,
//     and are left out.
#include <fmt/core.h>
#include <map>
#include <set>

#include "steer/error.hpp"
#include "steer/recording.hpp"
#include "recording/formats.hpp"

namespace steer::store_detail {

namespace {

const std::map<std::string, Status, std::less<>> kFailures{
    {"InvalidConfig", Status::Skipped},
    {"CompilationFailedConfig", Status::CompileError},
    {"RuntimeFailedConfig", Status::LaunchError},
    {"ErrorConfig", Status::LaunchError},
};

// Fields with a Result field of their own, or left out (see above).
const std::set<std::string, std::less<>> kNotCounters{
    "time",         "times",          "compile_time",  "verification_time",
    "framework_time", "benchmark_time", "strategy_time", "timestamp",
};

// A JSON scalar as Python's str() writes it: how Kernel Tuner builds its cache keys.
std::string python_str(const Json& value) {
  if (value.is_boolean()) return value.get<bool>() ? "True" : "False";
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

struct Declared {
  std::vector<std::string> names;                 // tune_params_keys
  std::vector<const Json*> values;                // tune_params[name], same order
  std::set<std::string, std::less<>> name_set;    // for "is this field a parameter?"
};

// The configuration spelled by a cache key, each value found in its declared list.
Configuration configuration_from_key(std::string_view key, const Declared& declared, const Node& where) {
  Configuration configuration;
  std::size_t start = 0;
  for (std::size_t p = 0; p < declared.names.size(); ++p) {
    std::size_t end = p + 1 < declared.names.size() ? key.find(',', start) : key.size();
    if (end == std::string_view::npos) where.fail(fmt::format("key has fewer than {} values", declared.names.size()));
    std::string_view text = key.substr(start, end - start);
    const Json* match = nullptr;
    for (const Json& value : *declared.values[p]) {
      if (python_str(value) == text) match = &value;
    }
    if (match == nullptr) {
      where.fail(fmt::format("key value '{}' is not among the values of '{}'", text, declared.names[p]));
    }
    configuration.emplace_back(declared.names[p], value_from_json(Node(*match)));
    start = end + 1;
  }
  return configuration;
}

Status failure_status(const Node& text) {
  auto found = kFailures.find(text.string());
  if (found == kFailures.end()) text.fail(fmt::format("unknown Kernel Tuner failure '{}'", text.string()));
  return found->second;
}

Result read_entry(std::string_view key, const Node& entry, const Declared& declared) {
  Result result;
  if (entry.json().is_string()) {  // an old-style cache: the failure is the whole entry
    result.configuration = configuration_from_key(key, declared, entry);
    result.status = failure_status(entry);
    result.message = entry.string();
    return result;
  }
  for (const std::string& name : declared.names) {
    if (auto value = entry.find(name)) {
      result.configuration.emplace_back(name, value_from_json(*value));
    } else {
      result.configuration = configuration_from_key(key, declared, entry);
      break;
    }
  }
  Node time = entry["time"];
  if (time.json().is_string()) {
    result.status = failure_status(time);
    result.message = time.string();
  } else {
    result.status = Status::Ok;
    std::vector<double> samples;
    if (auto times = entry.find("times")) {
      for (std::size_t i = 0; i < times->size(); ++i) samples.push_back((*times)[i].number());
    } else {
      samples.push_back(time.number());
    }
    result.time = TimingStats::from_samples(std::move(samples));
    result.time.mean_ms = time.number();
  }
  if (auto compile = entry.find("compile_time")) result.compile_ms = compile->number();
  if (auto verification = entry.find("verification_time")) result.validation_ms = verification->number();
  if (auto framework = entry.find("framework_time")) result.overhead_ms = framework->number();
  if (auto timestamp = entry.find("timestamp")) result.timestamp = iso8601_utc(timestamp->string());
  entry.for_each_member([&](std::string_view name, const Node& value) {
    if (value.json().is_number() && !kNotCounters.contains(name) && !declared.name_set.contains(name)) {
      result.counters[recorded_counter_name(name)] = value.number();
    }
  });
  return result;
}

std::string problem_size_text(const Json& size) {
  if (!size.is_array()) return python_str(size);
  std::string text;
  for (const Json& extent : size) {
    if (!text.empty()) text += 'x';
    text += python_str(extent);
  }
  return text;
}

}  // namespace

ImportedRecording import_kernel_tuner_cache(const Node& root) {
  ImportedRecording recording;
  recording.format = RecordingFormat::KernelTunerCache;
  recording.runtime = RuntimeStatistic::Mean;  // the tuner's objective
  if (auto device = root.find("device_name")) recording.device = device->string();
  if (auto kernel = root.find("kernel_name")) recording.kernel = kernel->string();
  if (auto size = root.find("problem_size")) recording.problem_size = problem_size_text(size->json());

  Declared declared;
  Node keys = root["tune_params_keys"];
  Node tune_params = root["tune_params"];
  for (std::size_t i = 0; i < keys.size(); ++i) {
    std::string name = keys[i].string();
    Node values = tune_params[name];
    RecordedParameter parameter{name, {}};
    for (std::size_t v = 0; v < values.size(); ++v) parameter.values.push_back(value_from_json(values[v]));
    recording.parameters.push_back(std::move(parameter));
    declared.names.push_back(name);
    declared.values.push_back(&values.json());
    declared.name_set.insert(name);
  }

  Node cache = root["cache"];
  recording.results.reserve(cache.json().size());
  cache.for_each_member([&](std::string_view key, const Node& entry) {
    recording.results.push_back(read_entry(key, entry, declared));
  });
  return recording;
}

}  // namespace steer::store_detail
