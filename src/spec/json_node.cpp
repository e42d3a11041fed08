#include "spec/json_node.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fmt/core.h>
#include <limits>

#include "steer/error.hpp"

namespace steer::spec_detail {
namespace {

using ParseEvent = nlohmann::json::parse_event_t;

// One open object or list while parsing, to name where a duplicate key sits.
struct OpenContainer {
  bool is_object = false;
  std::string segment;            // how the parent reaches it: "kernel" or "[2]"
  std::vector<std::string> keys;  // objects: keys read so far
  std::size_t elements = 0;       // lists: elements read so far
};

std::string join_path(const std::vector<OpenContainer>& open) {
  std::string path;
  for (const OpenContainer& container : open) {
    if (container.segment.empty()) continue;
    if (!path.empty() && container.segment.front() != '[') path += '.';
    path += container.segment;
  }
  return path;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The allowed key closest to a misspelt one, if it is close enough to be a typo.
std::optional<std::string_view> closest_key(std::string_view key,
                                            std::initializer_list<std::string_view> allowed) {
  std::optional<std::string_view> best;
  std::size_t best_distance = std::min<std::size_t>(2, key.size() / 2) + 1;
  for (std::string_view candidate : allowed) {
    std::size_t distance = edit_distance(lower(key), lower(candidate));
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

std::string join(std::initializer_list<std::string_view> items) {
  std::string out;
  for (std::string_view item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

std::string child_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : fmt::format("{}.{}", parent, key);
}

// Numbers the JSON parser would take wrongly or fail on without saying where: integers past
// 64 bits (read as doubles, silently rounded) and numbers past a double's range. Strings are
// skipped; what is not valid JSON is left to the parser to report.
void check_numbers(std::string_view text, const std::string& file) {
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = i + 1;
    } else if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
    } else if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
      const std::size_t begin = i;
      bool integer = true;
      // (strchr finds the terminating NUL too: a NUL byte is not part of a number.)
      while (i + 1 < text.size() && text[i + 1] != '\0' &&
             (std::isdigit(static_cast<unsigned char>(text[i + 1])) || std::strchr(".eE+-", text[i + 1]) != nullptr)) {
        if (std::strchr(".eE", text[i + 1]) != nullptr) integer = false;
        ++i;
      }
      const std::string number(text.substr(begin, i + 1 - begin));
      const auto where = [&] {
        return fmt::format("{}{}line {}, column {}: ", file, file.empty() ? "" : ": ", line, begin - line_start + 1);
      };
      if (integer) {
        const bool negative = number[0] == '-';
        std::string digits = number.substr(negative ? 1 : 0);
        digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size() - 1));
        const std::string_view limit = negative ? "9223372036854775808" : "18446744073709551615";
        if (digits.size() > limit.size() || (digits.size() == limit.size() && digits > limit)) {
          throw SpecError(where() + fmt::format("the integer {} does not fit in 64 bits", number));
        }
      } else if (std::isinf(std::strtod(number.c_str(), nullptr))) {
        throw SpecError(where() + fmt::format("the number {} is too large", number));
      }
    }
  }
}

}  // namespace

Json parse_json(std::string_view text, const std::string& file) {
  check_numbers(text, file);
  std::vector<OpenContainer> open;
  auto segment_of_next_value = [&open]() -> std::string {
    if (open.empty()) return {};
    const OpenContainer& parent = open.back();
    return parent.is_object ? parent.keys.back() : fmt::format("[{}]", parent.elements);
  };
  auto value_finished = [&open] {
    if (!open.empty() && !open.back().is_object) ++open.back().elements;
  };
  Json::parser_callback_t track = [&](int, ParseEvent event, Json& parsed) {
    switch (event) {
      case ParseEvent::object_start:
      case ParseEvent::array_start:
        open.push_back({event == ParseEvent::object_start, segment_of_next_value(), {}, 0});
        break;
      case ParseEvent::object_end:
      case ParseEvent::array_end:
        open.pop_back();
        value_finished();
        break;
      case ParseEvent::key: {
        std::string key = parsed.get<std::string>();
        std::vector<std::string>& keys = open.back().keys;
        if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
          std::string path = join_path(open);
          throw SpecError(fmt::format("{}{}{}duplicate key '{}'", file, file.empty() ? "" : ": ",
                                      path.empty() ? "" : path + ": ", key));
        }
        keys.push_back(std::move(key));
        break;
      }
      case ParseEvent::value:
        value_finished();
        break;
    }
    return true;
  };
  try {
    return Json::parse(text.begin(), text.end(), track);
  } catch (const Json::parse_error& e) {
    // what() is "[json.exception.parse_error.101] parse error at line 3, column 5: ...".
    std::string_view message = e.what();
    if (auto end_of_tag = message.find("] "); end_of_tag != std::string_view::npos) {
      message.remove_prefix(end_of_tag + 2);
    }
    throw SpecError(fmt::format("{}{}malformed JSON: {}", file, file.empty() ? "" : ": ", message));
  }
}

std::string describe_type(const Json& json) {
  switch (json.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float: return "a number";
    case Json::value_t::string: return "a string";
    case Json::value_t::array: return "a list";
    case Json::value_t::object: return "an object";
    default: return "an unsupported JSON value";
  }
}

std::string Node::where() const {
  if (file_->empty()) return path_.empty() ? "spec" : path_;
  return path_.empty() ? *file_ : fmt::format("{}: {}", *file_, path_);
}

void Node::fail(std::string_view message) const {
  throw SpecError(fmt::format("{}: {}", where(), message));
}

Node Node::child(std::string_view key) const {
  return Node(json_->at(std::string(key)), *file_, child_path(path_, key));
}

Node Node::element(std::size_t index) const {
  return Node(json_->at(index), *file_, fmt::format("{}[{}]", path_, index));
}

std::size_t Node::list_size() const {
  if (!json_->is_array()) fail(fmt::format("expected a list, got {}", describe_type(*json_)));
  return json_->size();
}

std::vector<Node> Node::elements() const {
  std::vector<Node> out;
  std::size_t count = list_size();
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) out.push_back(element(i));
  return out;
}

std::string Node::as_string() const {
  if (!json_->is_string()) fail(fmt::format("expected a string, got {}", describe_type(*json_)));
  return json_->get<std::string>();
}

std::string Node::as_nonempty_string() const {
  std::string text = as_string();
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) fail("expected a non-empty string");
  return text;
}

bool Node::as_bool() const {
  if (!json_->is_boolean()) fail(fmt::format("expected true or false, got {}", describe_type(*json_)));
  return json_->get<bool>();
}

double Node::as_number() const {
  if (!json_->is_number()) fail(fmt::format("expected a number, got {}", describe_type(*json_)));
  return json_->get<double>();
}

std::int64_t Node::as_int() const {
  if (json_->is_number_unsigned()) {
    auto value = json_->get<std::uint64_t>();
    if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      fail(fmt::format("{} is too large (at most 2^63-1)", value));
    }
    return static_cast<std::int64_t>(value);
  }
  if (json_->is_number_integer()) return json_->get<std::int64_t>();
  if (json_->is_number_float()) fail(fmt::format("expected an integer, got {}", json_->dump()));
  fail(fmt::format("expected an integer, got {}", describe_type(*json_)));
}

Value Node::as_value() const {
  if (json_->is_number_integer()) return Value(as_int());
  if (json_->is_number_float()) return Value(json_->get<double>());
  if (json_->is_boolean()) return Value(json_->get<bool>());
  if (json_->is_string()) return Value(json_->get<std::string>());
  fail(fmt::format("expected a number, boolean or string, got {}", describe_type(*json_)));
}

std::string Node::as_expression() const {
  if (json_->is_number_integer()) return std::to_string(as_int());
  if (json_->is_number_float()) return json_->dump();
  if (!json_->is_string()) {
    fail(fmt::format("expected an expression (a string or a number), got {}", describe_type(*json_)));
  }
  return as_nonempty_string();
}

ObjectReader::ObjectReader(const Node& node, std::initializer_list<std::string_view> allowed_keys)
    : node_(node) {
  if (!node.json().is_object()) {
    node.fail(fmt::format("expected an object, got {}", describe_type(node.json())));
  }
  for (const auto& [key, value] : node.json().items()) {
    if (std::find(allowed_keys.begin(), allowed_keys.end(), key) != allowed_keys.end()) continue;
    std::string hint;
    if (auto suggestion = closest_key(key, allowed_keys)) hint = fmt::format(" (did you mean '{}'?)", *suggestion);
    node.fail(fmt::format("unknown key '{}'{}; expected one of: {}", key, hint, join(allowed_keys)));
  }
}

bool ObjectReader::has(std::string_view key) const {
  return node_.json().contains(std::string(key));
}

Node ObjectReader::required(std::string_view key) const {
  if (!has(key)) node_.fail(fmt::format("missing required key '{}'", key));
  return node_.child(key);
}

std::optional<Node> ObjectReader::optional(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return node_.child(key);
}

}  // namespace steer::spec_detail
