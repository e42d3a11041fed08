#pragma once
// What the store and the recording formats share: the JSON form of values,
// configurations and results; a JSON cursor that can say where it is for error
// messages; and the helpers every importer needs.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "steer/result.hpp"
#include "steer/store.hpp"
#include "steer/value.hpp"

namespace steer::store_detail {

// ordered_json keeps the order of the file: results stay in measurement order and
// configurations in parameter order.
using Json = nlohmann::ordered_json;
using Configuration = std::vector<std::pair<std::string, Value>>;

// A JSON value and its place in the document ("Results[3].Status"). The path is only
// spelled out when an error is reported, so walking a large file costs nothing extra.
// A Node refers to its parent: children must not outlive the Node they came from.
class Node {
 public:
  explicit Node(const Json& json) : json_(json) {}

  const Json& json() const noexcept { return json_; }
  // A required member of an object; throws StoreError naming the path if absent.
  Node operator[](std::string_view key) const;
  // An optional member (absent or null: nullopt).
  std::optional<Node> find(std::string_view key) const;
  // An element of an array.
  Node operator[](std::size_t index) const;
  // Number of elements of an array (throws if this is not an array).
  std::size_t size() const;
  // Calls f(key, child) for each member of an object, in file order.
  template <typename F>
  void for_each_member(F&& f) const {
    require_object();
    for (const auto& [key, value] : json_.items()) f(std::string_view(key), Node(value, this, key));
  }

  double number() const;       // throws unless a number
  double number_or_nan() const;  // null reads as NaN (JSON has no NaN; it is written as null)
  std::int64_t integer() const;  // throws unless an integer
  std::string string() const;  // throws unless a string
  void require_object() const;

  std::string path() const;
  [[noreturn]] void fail(std::string_view what) const;

 private:
  Node(const Json& json, const Node* parent, std::string_view key) : json_(json), parent_(parent), key_(key) {}
  Node(const Json& json, const Node* parent, std::size_t index)
      : json_(json), parent_(parent), index_(index), is_element_(true) {}

  const Json& json_;
  const Node* parent_ = nullptr;
  std::string_view key_;
  std::size_t index_ = 0;
  bool is_element_ = false;
};

// Values: ints stay JSON integers, floats JSON floats (2.0 keeps its ".0"), bools and
// strings themselves, so the type survives a round trip.
Json to_json(const Value& value);
Value value_from_json(const Node& node);
Json configuration_to_json(const Configuration& configuration);
Configuration configuration_from_json(const Node& object);
// NaN and infinities as null (JSON has neither).
Json number_or_null(double value);

// Steer JSON: every field of a Result.
Json result_to_json(const Result& result);
Result result_from_json(const Node& node);
Json tuning_to_json(const TuningKey& tuning);

// Importers, one per format (import_<format>.cpp). Each gets the parsed document and
// throws StoreError naming the JSON path of what it cannot read.
ImportedRecording import_ktt(const Node& root);
ImportedRecording import_kernel_tuner_cache(const Node& root);
ImportedRecording import_t4(const Node& root);
ImportedRecording import_steer_json(const Node& root);

// A recorded time unit. Conversion to milliseconds is one correctly rounded operation,
// so 3037.408 us becomes exactly the double nearest 3.037408 ms.
struct TimeUnit {
  double multiply = 1, divide = 1;
  double to_ms(double value) const { return value * multiply / divide; }
};
// From the unit's name ("Microseconds", "miliseconds", "s", ...); fails (StoreError with
// the node's path) for a unit it does not know.
TimeUnit time_unit(const Node& name);
// "2023-12-22 09:54:05.502007+00:00", "2022-06-01 13:55:7 UTC" -> "2023-12-22T09:54:05.502007Z".
// Text it cannot read as a UTC time is kept as it is.
std::string iso8601_utc(std::string_view timestamp);
// For formats without declared value lists: each parameter's distinct values, ascending,
// parameters in the order of the first result's configuration.
std::vector<RecordedParameter> parameters_found(std::span<const Result> results);
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
