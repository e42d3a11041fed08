// The JSON form of values, configurations and results (Steer JSON, the store's
// configuration column), and the Node cursor used by every importer.
#include <cmath>
#include <fmt/core.h>

#include "steer/error.hpp"
#include "store/result_json.hpp"

namespace steer::store_detail {

Node Node::operator[](std::string_view key) const {
  require_object();
  auto it = json_.find(key);
  if (it == json_.end()) fail(fmt::format("missing '{}'", key));
  return Node(*it, this, key);
}

std::optional<Node> Node::find(std::string_view key) const {
  require_object();
  auto it = json_.find(key);
  if (it == json_.end() || it->is_null()) return std::nullopt;
  return Node(*it, this, key);
}

Node Node::operator[](std::size_t index) const {
  if (!json_.is_array()) fail("expected an array");
  return Node(json_.at(index), this, index);
}

std::size_t Node::size() const {
  if (!json_.is_array()) fail(fmt::format("expected an array, found {}", json_.type_name()));
  return json_.size();
}

void Node::require_object() const {
  if (!json_.is_object()) fail(fmt::format("expected an object, found {}", json_.type_name()));
}

double Node::number() const {
  if (!json_.is_number()) fail(fmt::format("expected a number, found {}", json_.dump()));
  return json_.get<double>();
}

double Node::number_or_nan() const { return json_.is_null() ? std::nan("") : number(); }

std::int64_t Node::integer() const {
  if (json_.is_number_integer() && !(json_.is_number_unsigned() && json_.get<std::uint64_t>() > INT64_MAX))
    return json_.get<std::int64_t>();
  fail(fmt::format("expected an integer, found {}", json_.dump()));
}

std::string Node::string() const {
  if (!json_.is_string()) fail(fmt::format("expected a string, found {}", json_.dump()));
  return json_.get<std::string>();
}

std::string Node::path() const {
  if (parent_ == nullptr) return "(top level)";
  std::string prefix = parent_->parent_ == nullptr ? std::string() : parent_->path();
  if (is_element_) return fmt::format("{}[{}]", prefix, index_);
  return prefix.empty() ? std::string(key_) : fmt::format("{}.{}", prefix, key_);
}

void Node::fail(std::string_view what) const { throw StoreError(fmt::format("{}: {}", path(), what)); }

Json to_json(const Value& value) {
  switch (value.type()) {
    case ValueType::Int: return value.as_int();
    case ValueType::Float: return number_or_null(value.as_double());
    case ValueType::Bool: return value.as_bool();
    case ValueType::String: return value.as_string();
  }
  return nullptr;
}

Value value_from_json(const Node& node) {
  const Json& json = node.json();
  if (json.is_boolean()) return Value(json.get<bool>());
  if (json.is_number_integer()) return Value(node.integer());
  if (json.is_number_float()) return Value(json.get<double>());
  if (json.is_string()) return Value(json.get<std::string>());
  if (json.is_null()) return Value(std::nan(""));  // how to_json writes a NaN float
  node.fail(fmt::format("expected a parameter value (number, bool or string), found {}", json.dump()));
}

Json configuration_to_json(const Configuration& configuration) {
  Json object = Json::object();
  for (const auto& [name, value] : configuration) object[name] = to_json(value);
  return object;
}

Configuration configuration_from_json(const Node& object) {
  Configuration configuration;
  object.for_each_member([&](std::string_view name, const Node& value) {
    configuration.emplace_back(std::string(name), value_from_json(value));
  });
  return configuration;
}

Json number_or_null(double value) {
  if (!std::isfinite(value)) return nullptr;
  return value;
}

Json tuning_to_json(const TuningKey& tuning) {
  return Json{{"spec_name", tuning.spec_name},
              {"spec_hash", tuning.spec_hash},
              {"device", tuning.device},
              {"backend", tuning.backend},
              {"problem_size", tuning.problem_size},
              {"content_key", tuning.content_key}};
}

Json result_to_json(const Result& result) {
  Json samples = Json::array();
  for (double sample : result.time.samples_ms) samples.push_back(number_or_null(sample));
  Json counters = Json::object();
  for (const auto& [name, value] : result.counters) counters[name] = number_or_null(value);
  Json energy = nullptr;
  if (result.energy) {
    const EnergyStats& e = *result.energy;
    energy = Json{{"joules_per_launch", number_or_null(e.joules_per_launch)},
                  {"spread", number_or_null(e.spread)},
                  {"average_watts", number_or_null(e.average_watts)},
                  {"window_s", number_or_null(e.window_s)},
                  {"launches", e.launches},
                  {"sm_clock_mhz", number_or_null(e.sm_clock_mhz)},
                  {"temperature_c", number_or_null(e.temperature_c)}};
  }
  Json conditions = nullptr;
  if (result.conditions) {
    const DeviceConditions& c = *result.conditions;
    conditions = Json{{"sm_clock_mhz", number_or_null(c.sm_clock_mhz)},
                      {"memory_clock_mhz", number_or_null(c.memory_clock_mhz)},
                      {"power_watts", number_or_null(c.power_watts)},
                      {"power_limit_watts", number_or_null(c.power_limit_watts)},
                      {"temperature_c", number_or_null(c.temperature_c)},
                      {"throttle", c.throttle},
                      {"other_load", number_or_null(c.other_load)}};
  }
  const TimingStats& t = result.time;
  return Json{{"configuration", configuration_to_json(result.configuration)},
              {"config_index", result.config_index},
              {"status", to_string(result.status)},
              {"message", result.message},
              {"time",
               {{"repetitions", t.repetitions},
                {"median_ms", number_or_null(t.median_ms)},
                {"min_ms", number_or_null(t.min_ms)},
                {"mean_ms", number_or_null(t.mean_ms)},
                {"max_ms", number_or_null(t.max_ms)},
                {"stddev_ms", number_or_null(t.stddev_ms)},
                {"samples_ms", std::move(samples)}}},
              {"compile_ms", number_or_null(result.compile_ms)},
              {"validation_ms", number_or_null(result.validation_ms)},
              {"overhead_ms", number_or_null(result.overhead_ms)},
              {"profiling_ms", number_or_null(result.profiling_ms)},
              {"profiling_passes", result.profiling_passes},
              {"max_abs_error", number_or_null(result.max_abs_error)},
              {"counters", std::move(counters)},
              {"energy", std::move(energy)},
              {"conditions", std::move(conditions)},
              {"device", result.device},
              {"problem_size", result.problem_size},
              {"timestamp", result.timestamp}};
}

namespace {

// A number member: absent reads as 0 (hand-written files may leave it out), null as NaN
// (the way NaN is written).
double number_member(const Node& object, std::string_view key) {
  if (auto member = object.find(key)) return member->number();
  return object.json().contains(key) ? std::nan("") : 0.0;
}

int int_member(const Node& object, std::string_view key) {
  auto member = object.find(key);
  return member ? static_cast<int>(member->integer()) : 0;
}

// A reading that may be missing: absent or null reads as NaN (not read).
double reading_member(const Node& object, std::string_view key) {
  auto member = object.find(key);
  return member ? member->number() : std::nan("");
}

std::string string_member(const Node& object, std::string_view key) {
  auto member = object.find(key);
  return member ? member->string() : std::string();
}

}  // namespace

Result result_from_json(const Node& node) {
  Result result;
  result.configuration = configuration_from_json(node["configuration"]);
  if (auto index = node.find("config_index")) {
    std::int64_t value = index->integer();
    if (value < 0) index->fail("expected a non-negative integer");
    result.config_index = static_cast<std::uint64_t>(value);
  }
  Node status = node["status"];
  auto parsed = status_from_string(status.string());
  if (!parsed) status.fail(fmt::format("unknown status '{}'", status.string()));
  result.status = *parsed;
  result.message = string_member(node, "message");
  if (auto time = node.find("time")) {
    TimingStats& t = result.time;
    t.repetitions = int_member(*time, "repetitions");
    t.median_ms = number_member(*time, "median_ms");
    t.min_ms = number_member(*time, "min_ms");
    t.mean_ms = number_member(*time, "mean_ms");
    t.max_ms = number_member(*time, "max_ms");
    t.stddev_ms = number_member(*time, "stddev_ms");
    if (auto samples = time->find("samples_ms")) {
      for (std::size_t i = 0; i < samples->size(); ++i) t.samples_ms.push_back((*samples)[i].number_or_nan());
    }
  }
  result.compile_ms = number_member(node, "compile_ms");
  result.validation_ms = number_member(node, "validation_ms");
  result.overhead_ms = number_member(node, "overhead_ms");
  result.profiling_ms = number_member(node, "profiling_ms");
  if (auto passes = node.find("profiling_passes")) result.profiling_passes = static_cast<int>(passes->number_or_nan());
  result.max_abs_error = number_member(node, "max_abs_error");
  if (auto counters = node.find("counters")) {
    counters->for_each_member([&](std::string_view name, const Node& value) {
      result.counters.emplace(std::string(name), value.number_or_nan());
    });
  }
  if (auto energy = node.find("energy")) {
    EnergyStats e;
    e.joules_per_launch = number_member(*energy, "joules_per_launch");
    e.spread = number_member(*energy, "spread");
    e.average_watts = number_member(*energy, "average_watts");
    e.window_s = number_member(*energy, "window_s");
    e.launches = int_member(*energy, "launches");
    e.sm_clock_mhz = number_member(*energy, "sm_clock_mhz");
    e.temperature_c = number_member(*energy, "temperature_c");
    result.energy = e;
  }
  if (auto conditions = node.find("conditions")) {
    DeviceConditions c;
    c.sm_clock_mhz = reading_member(*conditions, "sm_clock_mhz");
    c.memory_clock_mhz = reading_member(*conditions, "memory_clock_mhz");
    c.power_watts = reading_member(*conditions, "power_watts");
    c.power_limit_watts = reading_member(*conditions, "power_limit_watts");
    c.temperature_c = reading_member(*conditions, "temperature_c");
    c.throttle = string_member(*conditions, "throttle");
    c.other_load = reading_member(*conditions, "other_load");
    result.conditions = std::move(c);
  }
  result.device = string_member(node, "device");
  result.problem_size = string_member(node, "problem_size");
  result.timestamp = string_member(node, "timestamp");
  return result;
}

}  // namespace steer::store_detail
