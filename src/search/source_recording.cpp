#include "search/source_recording.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "steer/error.hpp"

namespace steer::search {

SourceRuntimes source_runtimes(const Recording& recording) {
  return {recording.space().parameters(), recorded_runtimes(recording), {}};
}

SourceRuntimes source_runtimes(const CounterModel& model) {
  return {model.parameters(), model.recorded_runtimes(), {}};
}

namespace {

// The positions of the parameters both spaces have, matched by name: in the tuned space and
// in the source.
struct SharedParameters {
  std::vector<std::size_t> tuned_at, source_at;
};

SharedParameters shared_parameters(const Space& tuned, const SourceRuntimes& source) {
  SharedParameters shared;
  for (std::size_t p = 0; p < tuned.parameters().size(); ++p) {
    for (std::size_t q = 0; q < source.parameters.size(); ++q) {
      if (source.parameters[q].name != tuned.parameters()[p].name) continue;
      shared.tuned_at.push_back(p);
      shared.source_at.push_back(q);
      break;
    }
  }
  return shared;
}

}  // namespace

std::vector<std::pair<double, ConfigIndex>> source_order(const Space& tuned, const SourceRuntimes& source) {
  const auto [tuned_at, source_at] = shared_parameters(tuned, source);
  if (tuned_at.empty()) {
    const auto names = [](const std::vector<Parameter>& parameters) {
      std::vector<std::string> out;
      for (const Parameter& p : parameters) out.push_back(p.name);
      return out.empty() ? std::string("none") : fmt::format("{}", fmt::join(out, ", "));
    };
    throw Error(fmt::format(
        "source recording {} shares no parameter with the tuned space (its parameters: {}; the space's: {}): a "
        "source is the same kernel recorded on another GPU or input",
        source.origin.empty() ? std::string("(unnamed)") : source.origin, names(source.parameters),
        names(tuned.parameters())));
  }
  std::map<std::vector<Value>, double> fastest;  // shared values -> fastest recorded runtime
  std::vector<Value> key(tuned_at.size());
  const RecordedRuntimes& runs = source.runtimes;
  for (std::size_t r = 0; r < runs.rows(); ++r) {
    for (std::size_t k = 0; k < source_at.size(); ++k) {
      key[k] = source.parameters[source_at[k]].values[runs.values[r][source_at[k]]];
    }
    auto [it, inserted] = fastest.try_emplace(key, runs.runtime_ms[r]);
    if (!inserted) it->second = std::min(it->second, runs.runtime_ms[r]);
  }
  std::vector<std::pair<double, ConfigIndex>> order;
  for (ConfigIndex c = 0; c < tuned.size(); ++c) {
    for (std::size_t k = 0; k < tuned_at.size(); ++k) key[k] = tuned.value(c, tuned_at[k]);
    if (auto it = fastest.find(key); it != fastest.end()) order.emplace_back(it->second, c);
  }
  std::sort(order.begin(), order.end());
  return order;
}

std::vector<std::pair<double, ConfigIndex>> source_order(const Space& tuned, const Recording& source) {
  return source_order(tuned, source_runtimes(source));
}

double source_coverage(const Space& tuned, const SourceRuntimes& source) {
  if (tuned.size() == 0) return 1;
  const auto [tuned_at, source_at] = shared_parameters(tuned, source);
  std::vector<std::vector<bool>> ran;  // [shared][tuned value]: whether the source ran it
  for (std::size_t k = 0; k < tuned_at.size(); ++k) {
    const std::vector<Value>& tuned_values = tuned.parameters()[tuned_at[k]].values;
    const std::vector<Value>& source_values = source.parameters[source_at[k]].values;
    std::vector<bool> source_ran(source_values.size(), false);
    for (const std::vector<std::uint32_t>& row : source.runtimes.values) source_ran[row[source_at[k]]] = true;
    std::vector<bool> seen(tuned_values.size(), false);
    for (std::size_t v = 0; v < tuned_values.size(); ++v) {
      const auto it = std::find(source_values.begin(), source_values.end(), tuned_values[v]);
      seen[v] = it != source_values.end() && source_ran[static_cast<std::size_t>(it - source_values.begin())];
    }
    ran.push_back(std::move(seen));
  }
  std::size_t covered = 0;
  std::vector<std::uint32_t> at(tuned.parameters().size());
  for (ConfigIndex c = 0; c < tuned.size(); ++c) {
    tuned.value_indices(c, at);
    bool all = true;
    for (std::size_t k = 0; k < tuned_at.size() && all; ++k) all = ran[k][at[tuned_at[k]]];
    covered += all ? 1 : 0;
  }
  return static_cast<double>(covered) / static_cast<double>(tuned.size());
}

}  // namespace steer::search
