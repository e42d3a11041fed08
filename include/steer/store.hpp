#pragma once
// The results store: every finished test, committed as it is produced, in one SQLite file
// that survives the tuner being killed; and the recording formats of other tools
// (KTT JSON, Kernel Tuner cache, T4) and of Steer itself, to import and export.
//
//   steer::Store store = steer::Store::open("results.db");
//   std::int64_t tuning = store.tuning({"gemm", spec.hash, "NVIDIA H200", "cuda", "N=4096"});
//   auto done = store.measured_keys(tuning);   // resume: skip these
//   store.append(tuning, result);              // durable once it returns
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "steer/error.hpp"
#include "steer/result.hpp"
#include "steer/value.hpp"

namespace steer {

// What identifies one tuning: the same spec (name and content hash) on the same device,
// backend and problem size. Results of one tuning are interchangeable; a resumed run
// continues the tuning with the same key.
struct TuningKey {
  std::string spec_name;
  std::string spec_hash;     // empty for recordings imported from other tools
  std::string device;
  std::string backend;       // "cuda", "opencl", "replay"; empty when not recorded
  std::string problem_size;  // text, e.g. "N=4096" or "4096x4096"

  friend bool operator==(const TuningKey&, const TuningKey&) = default;
};

// A results store in one SQLite file (WAL mode). One Store object is used by one thread;
// several processes may share the file (writers wait for each other, up to a timeout).
class Store {
 public:
  // Opens the store, creating the file if it does not exist and upgrading an older schema.
  // Throws StoreError naming the file (not a database, not a Steer store, newer schema, ...).
  static Store open(const std::filesystem::path& file);
  // Like open(), but a missing file is an error instead of a new, empty store.
  static Store open_existing(const std::filesystem::path& file);

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  const std::filesystem::path& path() const noexcept;

  // The id of the tuning with this key, created if new.
  std::int64_t tuning(const TuningKey& key);
  // The key of tuning `id`; throws StoreError if there is none.
  TuningKey tuning_key(std::int64_t id) const;
  // Every tuning, by id.
  std::vector<std::pair<std::int64_t, TuningKey>> tunings() const;

  // Commits one test in its own transaction; once this returns, the test survives the
  // process being killed. A configuration the tuning already holds is not written again:
  // the first measurement is kept and append returns false.
  bool append(std::int64_t tuning, const Result& result);
  // Commits `result` in place of the tuning's earlier test of the same configuration (a
  // re-measurement that adds counters or energy, say), as the newest test; true when
  // there was one to replace.
  bool replace(std::int64_t tuning, const Result& result);
  // Commits many tests in one transaction (all or none); returns how many were new.
  std::size_t append(std::int64_t tuning, std::span<const Result> results);

  // The tests of a tuning in the order they were appended.
  std::vector<Result> results(std::int64_t tuning) const;
  // The configuration keys (Result::key) a tuning holds: what a resumed run skips.
  std::unordered_set<std::string> measured_keys(std::int64_t tuning) const;
  std::size_t count(std::int64_t tuning) const;

  // The schema version this build writes (PRAGMA user_version).
  static int schema_version() noexcept;

 private:
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ---- Recordings: import ---------------------------------------------------------------

enum class RecordingFormat {
  Ktt,               // KTT 2.x JSON output: Metadata + Results[].Configuration[{Name, Value}]
  KernelTunerCache,  // Kernel Tuner cache file: tune_params_keys + cache{"v1,v2,...": {...}}
  T4,                // the shared autotuning results format: results[].configuration{}
  Steer,             // Steer JSON (export_steer_json): every Result field
};
const char* to_string(RecordingFormat format) noexcept;  // "ktt", "kerneltuner", "t4", "steer"

// A tuning parameter of a recording and the values it takes there, enough to rebuild
// a Space: the declared value list where the format has one (Kernel Tuner), otherwise
// the distinct values found in the results, ascending.
struct RecordedParameter {
  std::string name;
  std::vector<Value> values;
};

struct ImportedRecording {
  RecordingFormat format = RecordingFormat::Ktt;
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
// src/store/import_<format>.cpp). A store with several tunings needs `tuning` (the error
// lists them); `tuning` on a recording file is an Error. Throws StoreError naming the file
// and what is wrong.
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

}  // namespace steer
