// From tuning to deployment: the best configuration of each tuning of a kernel, written as a
// C++ header of constants or as a wisdom file (JSON) that an application loads at run time.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <tuple>

#include "steer/recording.hpp"
#include "store/result_json.hpp"

namespace steer {
namespace {

constexpr std::string_view kWisdomFormat = "steer-wisdom";
constexpr int kWisdomVersion = 1;

bool is_identifier(const std::string& name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name.front())) || name.front() == '_')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// A kernel's name as a C++ namespace: letters, digits and '_'.
std::string namespace_name(const std::string& kernel) {
  std::string name;
  for (char c : kernel) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front()))) name.insert(0, "kernel_");
  return name;
}

std::string string_literal(std::string_view text) {
  std::string literal = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      literal += '\\';
      literal += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      literal += fmt::format("\\{:03o}", static_cast<unsigned char>(c));
    } else {
      literal += c;
    }
  }
  return literal + '"';
}

std::string defines_of(const Configuration& configuration) {
  std::string text;
  for (const auto& [name, value] : configuration) text += fmt::format("{}-D{}={}", text.empty() ? "" : " ", name, value.to_string());
  return text;
}

// The C++ type of a parameter over every tuning: ints and floats mixed are double.
std::string member_type(const std::string& parameter, std::span<const TunedConfiguration> best) {
  std::optional<ValueType> first;
  for (const auto& [name, value] : best.front().best.configuration) {
    if (name == parameter) first = value.type();
  }
  ValueType type = first.value_or(ValueType::Float);
  for (const TunedConfiguration& tuned : best) {
    for (const auto& [name, value] : tuned.best.configuration) {
      if (name != parameter || value.type() == type) continue;
      const bool numbers = value.is_numeric() && !value.is_bool() && (type == ValueType::Int || type == ValueType::Float);
      if (!numbers) {
        throw Error(fmt::format("parameter '{}' is {} in one tuning and {} in another: one header cannot hold both",
                                parameter, to_string(type), to_string(value.type())));
      }
      type = ValueType::Float;
    }
  }
  switch (type) {
    case ValueType::Int: return "std::int64_t";
    case ValueType::Float: return "double";
    case ValueType::Bool: return "bool";
    case ValueType::String: return "std::string_view";
  }
  return "double";
}

std::string member_value(const Value& value, const std::string& type) {
  if (value.is_string()) return string_literal(value.as_string());
  if (value.is_bool()) return value.as_bool() ? "true" : "false";
  if (type == "double") {
    const std::string text = Value(value.as_double()).to_string();
    return text.find_first_of(".en") == std::string::npos ? text + ".0" : text;
  }
  return value.to_string();
}

// "N=4096,M=512" as its variables, when every one is a positive number.
std::optional<std::map<std::string, double>> size_variables(std::string_view size) {
  std::map<std::string, double> variables;
  while (!size.empty()) {
    const std::size_t comma = size.find(',');
    const std::string_view part = size.substr(0, comma);
    const std::size_t equals = part.find('=');
    if (equals == std::string_view::npos) return std::nullopt;
    try {
      std::size_t used = 0;
      const std::string number(part.substr(equals + 1));
      const double value = std::stod(number, &used);
      if (used != number.size() || !(value > 0)) return std::nullopt;
      variables[std::string(part.substr(0, equals))] = value;
    } catch (const std::exception&) {
      return std::nullopt;
    }
    if (comma == std::string_view::npos) break;
    size.remove_prefix(comma + 1);
  }
  if (variables.empty()) return std::nullopt;
  return variables;
}

}  // namespace

std::vector<TunedConfiguration> best_configurations(const Store& store, const std::string& spec_name,
                                                    std::vector<std::string>* notes) {
  // Newest first, so that the first tuning of each device, backend and size is kept.
  std::vector<std::pair<std::int64_t, TuningKey>> tunings = store.tunings();
  std::erase_if(tunings, [&](const auto& tuning) { return tuning.second.spec_name != spec_name; });
  if (tunings.empty()) throw Error(fmt::format("the store holds no tuning of '{}'", spec_name));
  std::vector<TunedConfiguration> best;
  std::vector<TuningKey> kept;
  for (auto it = tunings.rbegin(); it != tunings.rend(); ++it) {
    const std::int64_t id = it->first;
    const TuningKey& key = it->second;  // not a structured binding: lambdas capture it (clang 15)
    const auto same = std::find_if(kept.begin(), kept.end(), [&](const TuningKey& other) {
      return std::tie(other.device, other.backend, other.problem_size) == std::tie(key.device, key.backend, key.problem_size);
    });
    if (same != kept.end()) {
      if (notes) notes->push_back(fmt::format("tuning {} ({}, size {}) is left out: a newer tuning of the same device and "
                                              "size replaces it", id, key.device, key.problem_size));
      continue;
    }
    kept.push_back(key);
    const std::vector<Result> results = store.results(id);
    const Result* fastest = nullptr;
    for (const Result& result : results) {
      if (result.ok() && (!fastest || result.time.median_ms < fastest->time.median_ms)) fastest = &result;
    }
    if (!fastest) {
      if (notes) notes->push_back(fmt::format("tuning {} ({}, size {}) has no valid test", id, key.device, key.problem_size));
      continue;
    }
    best.push_back(TunedConfiguration{key, *fastest});
  }
  if (best.empty()) throw Error(fmt::format("no tuning of '{}' in the store has a valid test", spec_name));
  std::reverse(best.begin(), best.end());  // the store's order
  return best;
}

void export_header(std::ostream& out, const std::string& kernel, std::span<const TunedConfiguration> best) {
  if (best.empty()) throw Error("a header needs at least one tuned configuration");
  const Configuration& first = best.front().best.configuration;
  std::vector<std::pair<std::string, std::string>> members;  // name, type
  for (const auto& [name, value] : first) {
    if (!is_identifier(name)) throw Error(fmt::format("parameter '{}' is not a C identifier: a header cannot name it", name));
    members.emplace_back(name, member_type(name, best));
  }
  for (const TunedConfiguration& tuned : best) {
    const Configuration& configuration = tuned.best.configuration;
    const bool same = configuration.size() == first.size() &&
                      std::equal(configuration.begin(), configuration.end(), first.begin(),
                                 [](const auto& a, const auto& b) { return a.first == b.first; });
    if (!same) {
      throw Error(fmt::format("the tunings of '{}' differ in their parameters ({} and {}): one header cannot hold both",
                              kernel, defines_of(first), defines_of(configuration)));
    }
  }
  const std::string space = namespace_name(kernel);
  out << "// Generated by `steer export --format header`: the best configuration of kernel '" << kernel << "'\n"
      << "// found for each device and problem size it was tuned for (by median time).\n"
      << "#pragma once\n#include <cstdint>\n#include <string_view>\n\n"
      << "namespace steer_tuned::" << space << " {\n\n"
      << "struct Configuration {\n"
      << "  std::string_view device;\n  std::string_view backend;\n  std::string_view problem_size;\n"
      << "  double time_ms;           // median time of a launch\n"
      << "  std::string_view defines;  // the compiler options that select it: \"-DNAME=VALUE ...\"\n";
  for (const auto& [name, type] : members) out << "  " << type << ' ' << name << ";\n";
  out << "};\n\ninline constexpr Configuration configurations[] = {\n";
  for (const TunedConfiguration& tuned : best) {
    out << "    {" << string_literal(tuned.tuning.device) << ", " << string_literal(tuned.tuning.backend) << ", "
        << string_literal(tuned.tuning.problem_size) << ", " << member_value(Value(tuned.best.time.median_ms), "double")
        << ", " << string_literal(defines_of(tuned.best.configuration));
    for (std::size_t p = 0; p < members.size(); ++p) {
      out << ", " << member_value(tuned.best.configuration[p].second, members[p].second);
    }
    out << "},\n";
  }
  out << "};\n\n"
      << "// The configuration tuned for `device` and `problem_size`; nullptr when there is none.\n"
      << "constexpr const Configuration* find(std::string_view device, std::string_view problem_size) {\n"
      << "  for (const Configuration& configuration : configurations) {\n"
      << "    if (configuration.device == device && configuration.problem_size == problem_size) return &configuration;\n"
      << "  }\n  return nullptr;\n}\n\n"
      << "}  // namespace steer_tuned::" << space << "\n";
}

void export_wisdom(std::ostream& out, const std::string& kernel, std::span<const TunedConfiguration> best) {
  using store_detail::Json;
  Json entries = Json::array();
  for (const TunedConfiguration& tuned : best) {
    entries.push_back(Json{{"device", tuned.tuning.device},
                           {"backend", tuned.tuning.backend},
                           {"problem_size", tuned.tuning.problem_size},
                           {"spec_hash", tuned.tuning.spec_hash},
                           {"time_ms", tuned.best.time.median_ms},
                           {"configuration", store_detail::configuration_to_json(tuned.best.configuration)}});
  }
  const Json wisdom{{"format", kWisdomFormat}, {"version", kWisdomVersion}, {"kernel", kernel}, {"entries", entries}};
  out << wisdom.dump(1) << '\n';
}

Wisdom Wisdom::load(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot read the wisdom file '{}'", file.string()));
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return parse(text, file.string());
}

Wisdom Wisdom::parse(std::string_view json, const std::string& origin) {
  using store_detail::Json;
  const std::string where = origin.empty() ? "wisdom" : origin;
  Json document;
  try {
    document = Json::parse(json);
  } catch (const std::exception& e) {
    throw Error(fmt::format("{}: malformed JSON: {}", where, e.what()));
  }
  try {
    const store_detail::Node root(document);
    if (root["format"].string() != kWisdomFormat) {
      throw Error(fmt::format("{}: not a wisdom file (format '{}', expected '{}')", where, root["format"].string(),
                              kWisdomFormat));
    }
    if (root["version"].integer() > kWisdomVersion) {
      throw Error(fmt::format("{}: wisdom version {} is newer than this Steer reads ({})", where,
                              root["version"].integer(), kWisdomVersion));
    }
    Wisdom wisdom;
    wisdom.kernel_ = root["kernel"].string();
    const store_detail::Node entries = root["entries"];
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const store_detail::Node entry = entries[i];
      wisdom.entries_.push_back(Entry{.device = entry["device"].string(),
                                      .backend = entry["backend"].string(),
                                      .problem_size = entry["problem_size"].string(),
                                      .time_ms = entry["time_ms"].number(),
                                      .configuration = store_detail::configuration_from_json(entry["configuration"])});
    }
    return wisdom;
  } catch (const StoreError& e) {
    throw Error(fmt::format("{}: {}", where, e.what()));
  }
}

const Wisdom::Entry* Wisdom::find(std::string_view device, std::string_view problem_size) const {
  const auto wanted = size_variables(problem_size);
  const Entry* nearest = nullptr;
  double nearest_distance = std::numeric_limits<double>::infinity();
  for (const Entry& entry : entries_) {
    if (entry.device != device) continue;
    if (entry.problem_size == problem_size) return &entry;
    const auto variables = size_variables(entry.problem_size);
    if (!wanted || !variables || variables->size() != wanted->size()) continue;
    double distance = 0;
    for (const auto& [name, value] : *wanted) {
      const auto other = variables->find(name);
      if (other == variables->end()) {
        distance = std::numeric_limits<double>::infinity();
        break;
      }
      distance += std::fabs(std::log(value / other->second));
    }
    if (distance < nearest_distance) {
      nearest = &entry;
      nearest_distance = distance;
    }
  }
  return nearest;
}

}  // namespace steer
