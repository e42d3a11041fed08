// Results -> CSV (RFC 4180): one row per test. Columns: every parameter (in the order
// first seen), status, timing statistics (empty for a test that was never timed),
// compile/validation/overhead/profiling times, max_abs_error, energy per launch and
// power (empty when not measured), the device's conditions (clocks, power, its limit,
// temperature, throttle reasons, other processes' load; empty where not read),
// timestamp, message, then one column per counter
// (sorted by name; empty where a test lacks it). Numbers in the shortest form that
// reads back exactly.
#include <algorithm>
#include <cmath>
#include <fmt/core.h>
#include <map>
#include <ostream>
#include <set>

#include "steer/recording.hpp"
#include "recording/csv.hpp"
#include "steer/store.hpp"

namespace steer {

namespace {

using csv::field;

// Every number is written: a test that was never timed has 0, not NaN, in its times.
std::string number(double value) { return fmt::format("{}", value); }

constexpr const char* kFixedColumns[] = {
    "status",       "median_ms",     "min_ms",      "mean_ms",     "max_ms",        "stddev_ms",
    "repetitions",  "compile_ms",    "validation_ms", "overhead_ms", "profiling_ms", "profiling_passes", "max_abs_error",
    "energy_joules_per_launch", "energy_average_watts",
    "sm_clock_mhz", "memory_clock_mhz", "power_watts", "power_limit_watts", "temperature_c", "throttle", "other_load",
    "timestamp", "message",
};

// A reading: empty when not read (NaN).
std::string reading(double value) { return std::isnan(value) ? std::string() : number(value); }

}  // namespace

void export_csv(std::ostream& out, std::span<const Result> results) {
  std::vector<std::string> parameters;
  std::map<std::string, std::size_t, std::less<>> parameter_column;
  std::set<std::string, std::less<>> counters;
  for (const Result& result : results) {
    for (const auto& [name, value] : result.configuration) {
      if (parameter_column.try_emplace(name, parameters.size()).second) parameters.push_back(name);
    }
    for (const auto& [name, value] : result.counters) counters.insert(name);
  }

  std::string line;
  std::size_t fields = 0;  // in `line` so far: an empty first field still needs its comma
  auto add = [&](std::string_view field) {
    if (fields++ > 0) line += ',';
    line += field;
  };
  for (const std::string& name : parameters) add(field(name));
  for (const char* name : kFixedColumns) add(name);
  for (const std::string& name : counters) add(field(name));
  out << line << '\n';

  std::vector<std::string> values(parameters.size());
  for (const Result& result : results) {
    line.clear();
    fields = 0;
    std::fill(values.begin(), values.end(), std::string());
    for (const auto& [name, value] : result.configuration) values[parameter_column.find(name)->second] = value.to_string();
    for (const std::string& value : values) add(field(value));
    add(to_string(result.status));
    const TimingStats& t = result.time;
    const bool timed = t.repetitions > 0 || !t.samples_ms.empty();
    for (double stat : {t.median_ms, t.min_ms, t.mean_ms, t.max_ms, t.stddev_ms}) add(timed ? number(stat) : "");
    add(timed ? fmt::format("{}", t.repetitions) : "");
    add(number(result.compile_ms));
    add(number(result.validation_ms));
    add(number(result.overhead_ms));
    add(number(result.profiling_ms));
    add(std::to_string(result.profiling_passes));
    add(number(result.max_abs_error));
    add(result.energy ? number(result.energy->joules_per_launch) : "");
    add(result.energy ? number(result.energy->average_watts) : "");
    const DeviceConditions none;
    const DeviceConditions& c = result.conditions ? *result.conditions : none;
    for (double value : {c.sm_clock_mhz, c.memory_clock_mhz, c.power_watts, c.power_limit_watts, c.temperature_c}) {
      add(reading(value));
    }
    add(field(c.throttle));
    add(reading(c.other_load));
    add(field(result.timestamp));
    add(field(result.message));
    for (const std::string& name : counters) {
      auto it = result.counters.find(name);
      add(it == result.counters.end() ? "" : number(it->second));
    }
    out << line << '\n';
  }
}

}  // namespace steer
