#pragma once
// Path-aware access to a parsed spec file: every value knows where it sits
// ("kernel.launch.grid[1]"), so every complaint can name the file and the place.
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "steer/value.hpp"

namespace steer::spec_detail {

// Keeps the order keys were written in (sizes, the first size is the default).
using Json = nlohmann::ordered_json;

// Parses JSON text. Malformed text and duplicate keys (nlohmann would keep the last one
// silently) throw SpecError naming `file` and the line/column or the JSON path.
Json parse_json(std::string_view text, const std::string& file);

// "a number", "a list", ...: the JSON type of `json` as a message would say it.
std::string describe_type(const Json& json);

class Node {
 public:
  Node(const Json& json, const std::string& file, std::string path = {})
      : json_(&json), file_(&file), path_(std::move(path)) {}

  const Json& json() const noexcept { return *json_; }
  const std::string& path() const noexcept { return path_; }
  const std::string& file() const noexcept { return *file_; }
  // "file: path" (either part left out when empty), the prefix of every message.
  std::string where() const;
  [[noreturn]] void fail(std::string_view message) const;

  Node child(std::string_view key) const;    // json must be an object holding key
  Node element(std::size_t index) const;     // json must be a list
  std::size_t list_size() const;             // fails unless a list
  std::vector<Node> elements() const;        // fails unless a list

  std::string as_string() const;             // fails unless a string
  std::string as_nonempty_string() const;
  bool as_bool() const;
  double as_number() const;
  std::int64_t as_int() const;               // an integer that fits int64
  Value as_value() const;                    // number, bool or string
  // An expression given as a string, or as a number for convenience ("grid": [64, 1, 1]).
  std::string as_expression() const;

 private:
  const Json* json_;
  const std::string* file_;
  std::string path_;
};

// Reads one JSON object whose allowed keys are known up front. Unknown keys are
// rejected at construction, before any missing-key complaint, so that a typo ("blok")
// is reported as a typo and not as the key it was meant to be ("block").
class ObjectReader {
 public:
  ObjectReader(const Node& node, std::initializer_list<std::string_view> allowed_keys);

  bool has(std::string_view key) const;
  Node required(std::string_view key) const;
  std::optional<Node> optional(std::string_view key) const;
  const Node& node() const noexcept { return node_; }

 private:
  Node node_;
};

}  // namespace steer::spec_detail
