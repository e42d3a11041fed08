// Results -> T4 JSON (schema_version 1.0.0: results[] with configuration, times,
// invalidity, correctness, measurements), the format other autotuning tools read.
//
//   times: runtimes = the samples, compilation = compile_ms, validation = validation_ms,
//     framework = overhead_ms, search_algorithm = 0 (a per-test searcher time is not kept);
//     all in milliseconds (metadata.timeunit)
//   invalidity: ok -> correct, compile_error -> compile, launch_error -> runtime,
//     invalid_output -> correctness, timeout -> timeout, skipped -> constraints;
//     correctness 1 for ok, else 0
//   measurements: time (median_ms, the statistic Steer ranks by) for valid tests, each counter, and
//     energy (J per launch) and power (W) when measured; non-finite values are left out
//     (the schema allows numbers, strings and arrays, not null)
//   metadata: timeunit, and the tuning's device, kernel (spec name), problem_size,
//     backend, spec_hash, which import_recording reads back
#include <cmath>
#include <ostream>

#include "steer/recording.hpp"
#include "steer/store.hpp"
#include "recording/formats.hpp"

namespace steer {

namespace {

using store_detail::Json;

const char* invalidity(Status status) {
  switch (status) {
    case Status::Ok: return "correct";
    case Status::CompileError: return "compile";
    case Status::LaunchError: return "runtime";
    case Status::InvalidOutput: return "correctness";
    case Status::Timeout: return "timeout";
    case Status::Skipped: return "constraints";
  }
  return "runtime";
}

Json t4_result(const Result& result) {
  Json runtimes = Json::array();
  for (double sample : result.time.samples_ms) runtimes.push_back(store_detail::number_or_null(sample));
  Json measurements = Json::array();
  auto measure = [&](const std::string& name, double value, const char* unit) {
    if (std::isfinite(value)) measurements.push_back(Json{{"name", name}, {"value", value}, {"unit", unit}});
  };
  if (result.ok()) measure("time", result.time.median_ms, "ms");
  for (const auto& [name, value] : result.counters) measure(name, value, "");
  if (result.energy) {
    measure("energy", result.energy->joules_per_launch, "J");
    measure("power", result.energy->average_watts, "W");
  }
  Json t4 = Json::object();
  if (!result.timestamp.empty()) t4["timestamp"] = result.timestamp;
  t4["configuration"] = store_detail::configuration_to_json(result.configuration);
  t4["objectives"] = Json::array({"time"});
  t4["times"] = Json{{"compilation", store_detail::number_or_null(result.compile_ms)},
                     {"framework", store_detail::number_or_null(result.overhead_ms)},
                     {"search_algorithm", 0},
                     {"validation", store_detail::number_or_null(result.validation_ms)},
                     {"runtimes", std::move(runtimes)}};
  t4["invalidity"] = invalidity(result.status);
  t4["correctness"] = result.ok() ? 1 : 0;
  t4["measurements"] = std::move(measurements);
  return t4;
}

}  // namespace

void export_t4(std::ostream& out, const TuningKey& tuning, std::span<const Result> results) {
  Json header{{"schema_version", "1.0.0"},
              {"metadata",
               {{"timeunit", "milliseconds"},
                {"generator", "steer"},
                {"device", tuning.device},
                {"kernel", tuning.spec_name},
                {"problem_size", tuning.problem_size},
                {"backend", tuning.backend},
                {"spec_hash", tuning.spec_hash}}}};
  std::string text = header.dump();
  text.pop_back();  // reopen the object to append "results"
  out << text << ",\"results\":[";
  for (std::size_t i = 0; i < results.size(); ++i) out << (i == 0 ? "\n" : ",\n") << t4_result(results[i]).dump();
  out << "\n]}\n";
}

}  // namespace steer
