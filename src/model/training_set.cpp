// Training rows from a recording, and model kinds by name.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <span>
#include <unordered_set>

#include "core/content_hash.hpp"
#include "steer/model.hpp"
#include "steer/recording.hpp"

namespace steer {
namespace {

// A tuning-parameter value as a model feature: numbers as they are, strings by position.
double feature_of(const Parameter& parameter, const Value& value) {
  if (value.is_numeric()) return value.as_double();
  for (std::size_t i = 0; i < parameter.values.size(); ++i) {
    if (parameter.values[i] == value) return static_cast<double>(i);
  }
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

const char* to_string(ModelKind kind) noexcept {
  switch (kind) {
    case ModelKind::LeastSquares: return "lsq";
    case ModelKind::Tree: return "tree";
    case ModelKind::Forest: return "forest";
  }
  return "?";
}

std::optional<ModelKind> model_kind_from_string(std::string_view text) noexcept {
  for (ModelKind kind : {ModelKind::LeastSquares, ModelKind::Tree, ModelKind::Forest}) {
    if (text == to_string(kind)) return kind;
  }
  return std::nullopt;
}

TrainingSet TrainingSet::subset(std::span<const std::size_t> which) const {
  TrainingSet out;
  out.parameters = parameters;
  out.counters = counters;
  out.provenance = provenance;
  out.runtimes = runtimes;
  for (std::size_t row : which) {
    out.features.push_back(features.at(row));
    out.targets.push_back(targets.at(row));
  }
  out.provenance.rows = out.features.size();
  return out;
}

namespace {

// Positions of `parameters` in name order.
std::vector<std::size_t> by_name(const std::vector<Parameter>& parameters) {
  std::vector<std::size_t> order(parameters.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return parameters[a].name < parameters[b].name; });
  return order;
}

// One measurement as text, whatever the file's format or order: the parameters in name order,
// the runtime to 6 significant digits.
std::string measurement_text(const std::vector<Parameter>& parameters, std::span<const std::size_t> order,
                             std::span<const std::uint32_t> values, double runtime_ms) {
  std::string text;
  for (std::size_t p : order) {
    text += fmt::format("{}={},", parameters[p].name, parameters[p].values[values[p]].to_string());
  }
  return text + fmt::format("{:.6g}", runtime_ms);
}

}  // namespace

RecordedRuntimes recorded_runtimes(const Recording& recording) {
  const Space& space = recording.space();
  RecordedRuntimes out;
  const std::vector<std::size_t> order = by_name(space.parameters());
  std::vector<std::string> rows;
  ValueIndices indices(space.parameters().size());
  for (ConfigIndex c = 0; c < space.size(); ++c) {
    if (!recording.present(c) || recording.status(c) != Status::Ok) continue;
    const double runtime = recording.runtime_ms(c);
    if (!std::isfinite(runtime)) continue;
    space.value_indices(c, indices);
    out.values.emplace_back(indices.begin(), indices.end());
    out.runtime_ms.push_back(runtime);
    rows.push_back(measurement_text(space.parameters(), order, indices, runtime));
  }
  // The fingerprint is of the measurements, not of how a file holds them: rows sorted.
  std::sort(rows.begin(), rows.end());
  ContentHash hash;
  for (const std::string& row : rows) hash.add(row);
  out.fingerprint = hash.hex();
  return out;
}

bool replays_training_measurements(const Recording& recording, const CounterModel& model) {
  const RecordedRuntimes& trained = model.recorded_runtimes();
  if (trained.rows() == 0) return false;
  const std::vector<Parameter>& parameters = model.parameters();
  const std::vector<std::size_t> order = by_name(parameters);
  std::unordered_set<std::string> measured;
  for (std::size_t r = 0; r < trained.rows(); ++r) {
    measured.insert(measurement_text(parameters, order, trained.values[r], trained.runtime_ms[r]));
  }
  // The recording's configurations in the model's parameters (values by position in the
  // model's lists); one the model's lists lack cannot be among its measurements.
  const Space& space = recording.space();
  std::vector<std::optional<std::size_t>> at(parameters.size());
  for (std::size_t p = 0; p < parameters.size(); ++p) at[p] = space.find_parameter(parameters[p].name);
  std::size_t ran = 0, found = 0;
  std::vector<std::uint32_t> values(parameters.size());
  for (ConfigIndex c = 0; c < space.size(); ++c) {
    if (!recording.present(c) || recording.status(c) != Status::Ok || !std::isfinite(recording.runtime_ms(c))) continue;
    ++ran;
    bool known = true;
    for (std::size_t p = 0; p < parameters.size() && known; ++p) {
      if (!at[p]) {
        known = parameters[p].values.size() == 1;
        values[p] = 0;
        continue;
      }
      const auto value = std::find(parameters[p].values.begin(), parameters[p].values.end(), space.value(c, *at[p]));
      known = value != parameters[p].values.end();
      values[p] = static_cast<std::uint32_t>(value - parameters[p].values.begin());
    }
    found += known && measured.contains(measurement_text(parameters, order, values, recording.runtime_ms(c)));
  }
  return ran > 0 && 10 * found >= 9 * ran;
}

namespace {

// What the imports record beside a profiler's counters: the threads launched and the
// compiled binary's resources. A recording with only these was not profiled.
bool describes_launch_or_binary(std::string_view name) {
  name = name.substr(name.rfind('/') + 1);  // a composition's "<kernel>/<name>" (npos + 1 == 0)
  constexpr std::array<std::string_view, 6> kNames{"threads",           "RegistersCount",    "LocalMemorySize",
                                                   "PrivateMemorySize", "ConstantMemorySize", "MaxWorkGroupSize"};
  return std::ranges::find(kNames, name) != kNames.end();
}

}  // namespace

TrainingSet training_set(const Recording& recording, std::string source) {
  const Space& space = recording.space();
  std::vector<const Result*> profiled;
  const Result* unread = nullptr;  // one carrying counters of no family Steer reads
  for (ConfigIndex c = 0; c < space.size(); ++c) {
    const Result* result = recording.present(c) ? recording.recorded(c) : nullptr;
    if (!result || !result->ok()) continue;
    if (detect_counter_family(result->counters)) {
      profiled.push_back(result);
    } else if (!unread && std::ranges::any_of(result->counters, [](const auto& entry) {
                 return !describes_launch_or_binary(entry.first);
               })) {
      unread = result;
    }
  }
  if (profiled.empty() && unread) {
    // The imports name a composition's counters "<kernel>/<name>", one set per kernel.
    CounterValues unprefixed;
    std::set<std::string> kernels;
    for (const auto& [name, value] : unread->counters) {
      const std::size_t slash = name.rfind('/');
      if (slash == std::string::npos) continue;
      unprefixed[name.substr(slash + 1)] = value;
      kernels.insert(name.substr(0, slash));
    }
    if (detect_counter_family(unprefixed)) {
      throw ModelError(fmt::format("{}: its counters are those of each kernel of a composition ({}); the bottleneck "
                                   "analysis reads one kernel's, so Steer trains models of single kernels only",
                                   source, fmt::join(kernels, ", ")));
    }
    // Another vendor's or profiler's names: say so rather than "no counters".
    std::vector<std::string> names;  // sorted, as the map holds them
    for (const auto& [name, value] : unread->counters) {
      if (!describes_launch_or_binary(name)) names.push_back(name);
    }
    const std::size_t shown = std::min<std::size_t>(names.size(), 4);
    throw ModelError(fmt::format(
        "{}: its counters ({}{}) are none of the NVIDIA counter sets Steer reads (CUPTI's profiling "
        "API or its legacy events and metrics, docs/counters.md), nothing to train on",
        source, fmt::join(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(shown), ", "),
        names.size() > shown ? fmt::format(" and {} more", names.size() - shown) : std::string()));
  }
  if (profiled.empty()) {
    throw ModelError(fmt::format("{}: no configuration that ran carries hardware counters, nothing to train on",
                                 source));
  }
  // The family of the most rows (a recording comes from one profiler).
  std::map<CounterFamily, std::size_t> votes;
  for (const Result* result : profiled) ++votes[*detect_counter_family(result->counters)];
  CounterFamily family = votes.begin()->first;
  for (const auto& [f, n] : votes) {
    if (n > votes[family]) family = f;
  }

  std::vector<CounterValues> canonical;
  for (const Result* result : profiled) canonical.push_back(canonical_counters(result->counters, family).values);
  // Counters most rows have; rows lacking one of them are left out, so every target is known.
  TrainingSet data;
  for (const CounterInfo& info : canonical_counter_infos()) {
    std::size_t have = 0;
    for (const CounterValues& values : canonical) {
      auto found = values.find(std::string(info.abbreviation));
      have += found != values.end() && std::isfinite(found->second);
    }
    if (have > 0 && 2 * have >= canonical.size()) data.counters.emplace_back(info.abbreviation);
  }
  data.parameters = space.parameters();
  for (std::size_t r = 0; r < profiled.size(); ++r) {
    std::vector<double> targets;
    for (const std::string& counter : data.counters) {
      auto found = canonical[r].find(counter);
      if (found == canonical[r].end() || !std::isfinite(found->second)) break;
      targets.push_back(found->second);
    }
    if (targets.size() != data.counters.size()) continue;
    std::vector<double> features;
    const ConfigIndex c = profiled[r]->config_index;
    for (std::size_t p = 0; p < data.parameters.size(); ++p) {
      features.push_back(feature_of(data.parameters[p], space.value(c, p)));
    }
    data.features.push_back(std::move(features));
    data.targets.push_back(std::move(targets));
  }
  data.provenance.source = std::move(source);
  data.provenance.kernel = recording.kernel();
  data.provenance.device = recording.device();
  data.provenance.family = family;
  data.provenance.device_facts = known_device_facts(recording.device());
  if (data.provenance.device_facts) data.provenance.device_facts->family = family;
  data.provenance.rows = data.features.size();
  data.runtimes = recorded_runtimes(recording);
  return data;
}

}  // namespace steer
