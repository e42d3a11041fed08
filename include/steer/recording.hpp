#pragma once
// Recordings: the results of a tuning, in the formats of other tools (KTT JSON, Kernel
// Tuner cache, T4) and of Steer itself, to import and export; and a recording laid out
// over a Space, to replay, train models on and evaluate searchers with.
//
//   steer::Recording recording = steer::Recording::load("pnpoly.ktt.json.gz");
//   recording.best_runtime_ms();   recording.runtime_ms(config);   recording.replay(config);
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "steer/error.hpp"
#include "steer/result.hpp"
#include "steer/space.hpp"
#include "steer/store.hpp"
#include "steer/value.hpp"

namespace steer {

// ---- Recordings: import ---------------------------------------------------------------

enum class RecordingFormat {
  Ktt,               // KTT 2.x JSON output: Metadata + Results[].Configuration[{Name, Value}]
  KernelTunerCache,  // Kernel Tuner cache file: tune_params_keys + cache{"v1,v2,...": {...}}
  T4,                // the shared autotuning results format: results[].configuration{}
  Steer,             // Steer JSON (export_steer_json): every Result field
  KttCsv,            // KTT's CSV output: "Kernel name,Computation duration (us),Global size,..."
};
const char* to_string(RecordingFormat format) noexcept;  // "ktt", "kerneltuner", "t4", "steer", "ktt-csv"

// A tuning parameter of a recording and the values it takes there, enough to rebuild
// a Space: the declared value list where the format has one (Kernel Tuner), otherwise
// the distinct values found in the results, ascending.
struct RecordedParameter {
  std::string name;
  std::vector<Value> values;
};

// Which statistic of a configuration's timed launches is its runtime: the median (Steer's
// own, robust to a disturbed launch) or the mean, where that is the tuner's recorded
// objective (Kernel Tuner's "time", T4's): then Steer ranks and scores as that tuner did.
enum class RuntimeStatistic { Median, Mean };

struct ImportedRecording {
  RecordingFormat format = RecordingFormat::Ktt;
  RuntimeStatistic runtime = RuntimeStatistic::Median;
  std::string device;
  std::string kernel;        // kernel (or spec) name
  std::string problem_size;  // as text; empty when the format does not record it (KTT)
  std::string backend;       // "cuda", "opencl"; empty when not recorded
  std::string spec_hash;     // Steer recordings only
  std::vector<RecordedParameter> parameters;  // in configuration order
  std::vector<Result> results;                // in the order of the file
};

// Reads a recording in any of the formats above, detected by content, or one tuning of a
// Steer results store (SQLite); gzip-compressed files are read transparently. Times become
// milliseconds, failures statuses, counters and other per-configuration measurements
// Result::counters (the mapping of each format is described at the top of
// src/recording/import_<format>.cpp). A store with several tunings needs `tuning` (the error
// lists them); `tuning` on a recording file is an Error. Throws StoreError naming the file
// and what is wrong (a file that does not exist included).
ImportedRecording import_recording(const std::filesystem::path& file, std::optional<std::int64_t> tuning = {});

// One Result per configuration, in order of first appearance, for recordings that test a
// configuration more than once (KTT's profile-based searcher runs configurations again to
// profile them, so their counters are only on the repeat). A configuration's valid runs
// pool their timing samples (statistics recomputed) and counters (the first value of a
// name wins); its other fields are those of its first valid run, or of its first run if
// none was valid. Results of configurations tested once are returned unchanged.
std::vector<Result> merge_repeated_tests(std::span<const Result> results);

// The name under which a counter recorded by another tool is stored. Identity for now
// (hardware names as recorded); the place to map them to canonical abbreviations.
std::string recorded_counter_name(std::string_view raw_name);

// ---- Recordings: export ---------------------------------------------------------------

enum class ExportFormat {
  Csv,   // one row per test: parameters, status, times, errors, then one column per counter
  T4,    // T4 JSON (schema_version 1.0.0), for other autotuning tools
  Json,  // Steer JSON: full fidelity, imports back to equal Results
  KernelTuner,  // Kernel Tuner cache file, for Kernel Tuner's simulation mode (and import back)
};
// csv, t4, json, kerneltuner
std::optional<ExportFormat> export_format_from_string(std::string_view name) noexcept;

void export_csv(std::ostream& out, std::span<const Result> results);
void export_t4(std::ostream& out, const TuningKey& tuning, std::span<const Result> results);
void export_steer_json(std::ostream& out, const TuningKey& tuning, std::span<const Result> results);
void export_kernel_tuner(std::ostream& out, const TuningKey& tuning, std::span<const Result> results);
void export_results(std::ostream& out, ExportFormat format, const TuningKey& tuning,
                    std::span<const Result> results);

// ---- From tuning to deployment ---------------------------------------------------------

// The best configuration of one tuning: the valid test of the smallest median time.
struct TunedConfiguration {
  TuningKey tuning;
  Result best;
};

// The best configuration of each tuning of kernel (spec) `spec_name` in `store`, one per
// device, backend and problem size, in the store's order. Of tunings that share all three
// (the spec was changed in between), the newest is taken; each tuning left out, and each
// without a valid test, gets a line in `notes`. Throws Error when none has a valid test.
std::vector<TunedConfiguration> best_configurations(const Store& store, const std::string& spec_name,
                                                    std::vector<std::string>* notes = nullptr);

// A C++ header (C++17) of `best`: per device and problem size, its configuration as typed
// constants and as compiler definitions, with a look-up, in namespace steer_tuned::KERNEL.
// Throws Error when a parameter's name is not a C identifier or the tunings do not share
// their parameters.
void export_header(std::ostream& out, const std::string& kernel, std::span<const TunedConfiguration> best);
// A wisdom file (JSON) of `best`: device and problem size -> configuration, for Wisdom::load.
void export_wisdom(std::ostream& out, const std::string& kernel, std::span<const TunedConfiguration> best);

// A wisdom file, loaded at run time: the configuration to use for a device and problem size.
//
//   steer::Wisdom wisdom = steer::Wisdom::load("saxpy.wisdom.json");
//   if (const auto* entry = wisdom.find("NVIDIA H200", "N=1048576")) use(entry->configuration);
class Wisdom {
 public:
  struct Entry {
    std::string device, backend, problem_size;
    double time_ms = 0;
    Configuration configuration;
  };
  // Throws Error naming the file and the place of what is malformed.
  static Wisdom load(const std::filesystem::path& file);
  static Wisdom parse(std::string_view json, const std::string& origin = {});

  const std::string& kernel() const noexcept { return kernel_; }
  const std::vector<Entry>& entries() const noexcept { return entries_; }
  // The entry of `device` for `problem_size`; when the device has none for that size, its
  // entry of the nearest size: sizes named as variables ("N=4096,M=512") are compared by the
  // sum of |log(a / b)| over their variables, and only with sizes of the same variables.
  // nullptr when nothing fits.
  const Entry* find(std::string_view device, std::string_view problem_size) const;

 private:
  std::string kernel_;
  std::vector<Entry> entries_;
};

// ---- Recordings laid out over a space --------------------------------------------------

// A recording laid out over a Space: dense per-configuration arrays (status, runtime,
// compile time, counters, energy) and the recorded Result of each configuration.
class Recording {
 public:
  // Over a space built from the recording itself: each recorded parameter with its value
  // list, and as the only validity rule "was recorded" (the original tool's constraints are
  // not known, but the configurations it recorded are exactly those it found valid), so
  // searchers only ever propose recorded configurations. Repeated tests of a configuration
  // are merged first (merge_repeated_tests). Throws Error when nothing was recorded.
  static Recording from_import(const ImportedRecording& imported);
  // Over the space of `definition` (e.g. a spec's): recorded configurations are placed by
  // parameter name and value; space configurations the recording lacks are not present()
  // and replay as Skipped "not in the recording"; recorded ones outside the space are
  // counted in outside_space(). Throws Error when a space parameter is not recorded.
  static Recording from_import(const ImportedRecording& imported, const SpaceDefinition& definition);
  // import_recording(file), then from_import (over `definition` when given). Errors name
  // the file.
  static Recording load(const std::filesystem::path& file, const SpaceDefinition* definition = nullptr);
  struct LoadOptions {
    const SpaceDefinition* definition = nullptr;  // lay the recording over this space
    std::optional<std::int64_t> tuning;           // of a results store (import_recording)
    // Leave out valid tests without hardware counters (failed ones, which never have
    // counters, stay): a recording whose counters are still being added, replayed for a
    // counter-guided searcher over the configurations it could have profiled. Throws Error
    // when no test has counters.
    bool only_with_counters = false;
    // Leave out valid tests without energy (failed ones stay): a recording that measured
    // energy for a sample and the near-best band, replayed for an energy objective over the
    // configurations it can score. Throws Error when no test has energy.
    bool only_with_energy = false;
  };
  // `left_out`, if given, receives how many tests only_with_counters and only_with_energy
  // left out.
  static Recording load(const std::filesystem::path& file, const LoadOptions& options,
                        std::size_t* left_out = nullptr);

  Recording(Recording&&) noexcept;
  Recording& operator=(Recording&&) noexcept;
  ~Recording();

  const Space& space() const noexcept { return *space_; }
  const std::string& device() const noexcept { return device_; }
  const std::string& kernel() const noexcept { return kernel_; }

  std::uint64_t present_count() const noexcept { return present_count_; }  // recorded configs in the space
  std::uint64_t valid_count() const noexcept { return valid_count_; }      // of those, status Ok
  std::uint64_t outside_space() const noexcept { return outside_space_; }
  // The fastest valid runtime in the space; nullopt when no configuration is valid.
  std::optional<double> best_runtime_ms() const noexcept { return best_runtime_ms_; }

  // Per configuration of space(). Absent configurations: status Skipped, NaN times.
  bool present(ConfigIndex config) const { return slot_[config] != kAbsent; }
  Status status(ConfigIndex config) const { return status_[config]; }
  double runtime_ms(ConfigIndex config) const { return runtime_ms_[config]; }  // NaN: no timing
  double compile_ms(ConfigIndex config) const { return compile_ms_[config]; }  // 0: not recorded
  double energy_joules(ConfigIndex config) const { return energy_joules_[config]; }  // NaN: none
  // Counter names, sorted; counter(c, i) is NaN where configuration c lacks counter i.
  const std::vector<std::string>& counter_names() const noexcept { return counter_names_; }
  double counter(ConfigIndex config, std::size_t which) const { return counters_[which][config]; }

  // The recorded Result of a present configuration (config_index = its space index; a
  // single recorded time, such as KTT's Duration, is also its time.median_ms), or nullptr
  // when absent. Stable for the Recording's lifetime.
  const Result* recorded(ConfigIndex config) const;
  // What replaying `config` yields: the recorded Result, or for an absent configuration a
  // Result with status Skipped and message "not in the recording" (never invented values).
  Result replay(ConfigIndex config) const;

 private:
  static constexpr std::uint32_t kAbsent = UINT32_MAX;
  Recording() = default;
  void fill(const ImportedRecording& imported, std::vector<Result> merged);

  std::unique_ptr<Space> space_;  // heap-held so its address survives moves of the Recording
  std::string device_, kernel_;
  std::vector<Result> results_;              // recorded, one per present configuration
  std::vector<std::uint32_t> slot_;          // config -> index into results_, or kAbsent
  std::vector<Status> status_;
  std::vector<double> runtime_ms_, compile_ms_, energy_joules_;
  std::vector<std::string> counter_names_;
  std::vector<std::vector<double>> counters_;  // [counter][config]
  std::uint64_t present_count_ = 0, valid_count_ = 0, outside_space_ = 0;
  std::optional<double> best_runtime_ms_;
};

// The runtime a test of `result` is credited with: the median (or mean) of its timed
// launches, or the one recorded time when the format kept only that (e.g. KTT's Duration).
double recorded_runtime_ms(const Result& result, RuntimeStatistic statistic = RuntimeStatistic::Median) noexcept;

}  // namespace steer
