#pragma once
// The JSON form of values, configurations and results, shared by the store (it keeps
// configurations as JSON) and the recording formats; and a JSON cursor that can say where
// it is for error messages.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
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

}  // namespace steer::store_detail
