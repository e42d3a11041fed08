#pragma once
// What the recording formats share: the importers of each format and the helpers every
// importer needs. The JSON form of values and results is the store's (store/result_json.hpp).
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "steer/recording.hpp"
#include "store/result_json.hpp"
#include "steer/result.hpp"
#include "steer/store.hpp"
#include "steer/value.hpp"

namespace steer::store_detail {

// Importers, one per format (import_<format>.cpp). Each gets the parsed document and
// throws StoreError naming the JSON path of what it cannot read.
ImportedRecording import_ktt(const Node& root);
ImportedRecording import_kernel_tuner_cache(const Node& root);
ImportedRecording import_t4(const Node& root);
ImportedRecording import_steer_json(const Node& root);
// KTT's CSV output (import_ktt_csv.cpp), which is not JSON: the file's text.
ImportedRecording import_ktt_csv(std::string_view text);
// Whether `text` is KTT's CSV output: its first line begins "Kernel name,".
bool is_ktt_csv(std::string_view text);

// A recorded time unit. Conversion to milliseconds is one correctly rounded operation,
// so 3037.408 us becomes exactly the double nearest 3.037408 ms.
struct TimeUnit {
  double multiply = 1, divide = 1;
  double to_ms(double value) const { return value * multiply / divide; }
};
// From the unit's name ("Microseconds", "miliseconds", "s", ...); fails (StoreError with
// the node's path) for a unit it does not know.
TimeUnit time_unit(const Node& name);
// The same from a name alone; nullopt for a unit it does not know.
std::optional<TimeUnit> time_unit_named(std::string_view name);
// "2023-12-22 09:54:05.502007+00:00", "2022-06-01 13:55:7 UTC" -> "2023-12-22T09:54:05.502007Z".
// Text it cannot read as a UTC time is kept as it is.
std::string iso8601_utc(std::string_view timestamp);
// For formats without declared value lists: each parameter's distinct values, ascending,
// parameters in the order of the first result's configuration.
std::vector<RecordedParameter> parameters_found(std::span<const Result> results);
// Every parameter whose values are all numbers written as strings (as KTT's T4 and CSV
// files write them) becomes numeric: floats if any value has a fraction or exponent, else
// ints. Parameters with any other value keep their strings.
void read_numeric_strings(std::vector<Result>& results);
// Fills device and problem size of results that do not carry their own.
void stamp_results(ImportedRecording& recording);

// A Steer results store (SQLite) whose bytes, gunzipped, are `contents`: one tuning of it
// (import_recording explains `tuning`). Reads `file` itself when it is not compressed, else
// a temporary copy.
ImportedRecording import_results_store(const std::filesystem::path& file, const std::string& contents,
                                       std::optional<std::int64_t> tuning);
// The first bytes of every SQLite database, its terminating NUL included.
inline constexpr std::string_view kSqliteHeader{"SQLite format 3\0", 16};

// The marker of a Steer JSON document.
inline constexpr std::string_view kSteerFormatName = "steer-results";
inline constexpr int kSteerFormatVersion = 1;

}  // namespace steer::store_detail
