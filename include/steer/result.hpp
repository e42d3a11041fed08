#pragma once
// The outcome of one empirical test of one configuration.
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "steer/value.hpp"

namespace steer {

enum class Status {
  Ok,             // ran and (if a reference exists) validated
  CompileError,   // the compiler rejected it; message holds the log
  LaunchError,    // the launch failed (too many resources, illegal address, ...)
  InvalidOutput,  // ran but the output differs from the reference
  Timeout,        // exceeded the time limit
  Skipped,        // removed by a constraint, or not run (e.g. missing from a recording)
};
const char* to_string(Status status) noexcept;        // "ok", "compile_error", ...
std::optional<Status> status_from_string(std::string_view text) noexcept;

struct TimingStats {
  int repetitions = 0;
  double median_ms = 0, min_ms = 0, mean_ms = 0, max_ms = 0, stddev_ms = 0;
  std::vector<double> samples_ms;  // every timed launch
  static TimingStats from_samples(std::vector<double> samples_ms);
};

struct EnergyStats {
  double joules_per_launch = 0;
  double spread = 0;         // relative (max-min)/mean over sub-windows
  double average_watts = 0;
  double window_s = 0;
  int launches = 0;
  double sm_clock_mhz = 0;
  double temperature_c = 0;
};

// The state of the device while a test's timed launches ran, as far as the backend can
// read it (NaN: not read). On an NVIDIA GPU the worker reads NVML right after the last timed
// launch; for a device that runs on the host's CPU cores the tuner measures how busy other
// processes kept those cores. A slowed clock, a power cap or heat makes a configuration
// look slower than it is; the tuning loop warns when it sees one (steer/tuner.hpp).
struct DeviceConditions {
  double sm_clock_mhz = std::numeric_limits<double>::quiet_NaN();
  double memory_clock_mhz = std::numeric_limits<double>::quiet_NaN();
  double power_watts = std::numeric_limits<double>::quiet_NaN();
  double power_limit_watts = std::numeric_limits<double>::quiet_NaN();  // the limit the driver enforces
  double temperature_c = std::numeric_limits<double>::quiet_NaN();
  // Why the driver held the clocks below their maximum, as it reports it ("power cap",
  // "thermal slowdown", ...; comma-separated). Empty: no reason, or none was read.
  std::string throttle;
  // A device on the host's cores: the share (0 to 1) of the cores this process may use that
  // other processes kept busy during the test.
  double other_load = std::numeric_limits<double>::quiet_NaN();
};

// What a searcher asks to be measured on a configuration.
struct MeasureRequest {
  bool counters = false;
  // A searcher's wish rather than a need: where counters cannot be collected, the test runs
  // without them (one warning) instead of ending the run.
  bool counters_optional = false;
  std::vector<std::string> metrics;  // empty: the default set
  bool energy = false;
  double energy_window_s = 0.5;
};

struct Result {
  std::vector<std::pair<std::string, Value>> configuration;  // name -> value, definition order
  std::uint64_t config_index = 0;                            // in the Space it was tuned over
  Status status = Status::Skipped;
  std::string message;                                       // error text, compiler log, ...
  TimingStats time;
  double compile_ms = 0;
  double validation_ms = 0;
  double overhead_ms = 0;                                    // framework time for this test
  double profiling_ms = 0;                                   // time spent collecting counters
  int profiling_passes = 0;                                  // launches the counters took (0: not profiled)
  double max_abs_error = 0;                                  // validation: largest |out - ref|
  std::map<std::string, double> counters;                    // as measured (metric name -> value); see counters.hpp
  std::optional<EnergyStats> energy;
  std::optional<DeviceConditions> conditions;                // absent when the backend read nothing
  // The tuning objective's score (lower is better) when the loop tunes for something
  // other than time; searchers rank by it (not stored: derived from the above).
  std::optional<double> score;
  // The test failed for a reason that may lie in the spec or the program rather than in this
  // configuration (RunResult::independent_of_configuration, or a launch geometry that does
  // not evaluate): when the first tests of a run all fail alike so, the run stops
  // (kFailEarlyTests in tuner.hpp). Not stored.
  bool independent_of_configuration = false;
  std::string device;
  std::string problem_size;
  std::string timestamp;                                     // ISO 8601 UTC

  bool ok() const noexcept { return status == Status::Ok; }
  // The configuration's canonical key "NAME=VALUE,..." (matches Space::key).
  std::string key() const;
};

}  // namespace steer
