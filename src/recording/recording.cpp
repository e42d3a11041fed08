// A recording laid out over a Space: the dense per-configuration arrays replay reads.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>

#include "steer/counters.hpp"
#include "steer/error.hpp"
#include "steer/recording.hpp"

namespace steer {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

double recorded_runtime_ms(const Result& result, RuntimeStatistic statistic) noexcept {
  if (statistic == RuntimeStatistic::Mean && result.time.mean_ms > 0) return result.time.mean_ms;
  return result.time.median_ms > 0 ? result.time.median_ms : result.time.mean_ms;
}

Recording::Recording(Recording&&) noexcept = default;
Recording& Recording::operator=(Recording&&) noexcept = default;
Recording::~Recording() = default;

Recording Recording::from_import(const ImportedRecording& imported) {
  if (imported.results.empty()) throw Error("the recording holds no results");
  std::vector<Result> merged = merge_repeated_tests(imported.results);

  // Validity is "was recorded": a membership test over whole configurations. The space is
  // the recorded parameters' cross product filtered by it, in the usual lexicographic order.
  auto recorded = std::make_shared<std::set<std::vector<Value>>>();
  SpaceDefinition definition;
  std::vector<std::string> names;
  for (const RecordedParameter& parameter : imported.parameters) {
    definition.add_parameter(parameter.name, parameter.values);
    names.push_back(parameter.name);
  }
  for (const Result& result : merged) {
    std::vector<Value> values;
    for (const auto& [name, value] : result.configuration) values.push_back(value);
    recorded->insert(std::move(values));
  }
  definition.add_constraint(names, [recorded](std::span<const Value> values) {
    return recorded->contains(std::vector<Value>(values.begin(), values.end()));
  }, "recorded in the file");

  Recording recording;
  recording.space_ = std::make_unique<Space>(Space::build(definition));
  recording.fill(imported, std::move(merged));
  return recording;
}

Recording Recording::from_import(const ImportedRecording& imported, const SpaceDefinition& definition) {
  if (imported.results.empty()) throw Error("the recording holds no results");
  for (const Parameter& parameter : definition.parameters()) {
    bool recorded = std::any_of(imported.parameters.begin(), imported.parameters.end(),
                                [&](const RecordedParameter& p) { return p.name == parameter.name; });
    if (!recorded) throw Error(fmt::format("the space's parameter '{}' is not in the recording", parameter.name));
  }
  for (const RecordedParameter& parameter : imported.parameters) {
    // A recorded parameter the space lacks is harmless only when it never varies: otherwise
    // several recorded configurations would land on one configuration of the space.
    if (!definition.find(parameter.name) && parameter.values.size() > 1) {
      throw Error(fmt::format("the recording varies parameter '{}', which the space does not have", parameter.name));
    }
  }
  Recording recording;
  recording.space_ = std::make_unique<Space>(Space::build(definition));
  recording.fill(imported, merge_repeated_tests(imported.results));
  return recording;
}

Recording Recording::load(const std::filesystem::path& file, const SpaceDefinition* definition) {
  return load(file, LoadOptions{.definition = definition});
}

Recording Recording::load(const std::filesystem::path& file, const LoadOptions& options, std::size_t* left_out) {
  ImportedRecording imported = import_recording(file, options.tuning);
  const std::size_t recorded = imported.results.size();
  if (options.only_with_counters) {
    std::erase_if(imported.results, [](const Result& r) { return r.ok() && !has_hardware_counters(r.counters); });
    if (std::none_of(imported.results.begin(), imported.results.end(),
                     [](const Result& r) { return has_hardware_counters(r.counters); }))
      throw Error(fmt::format("{}: no test has counters, so none could have been profiled", file.string()));
  }
  if (options.only_with_energy) {
    std::erase_if(imported.results, [](const Result& r) { return r.ok() && !r.energy; });
    if (std::none_of(imported.results.begin(), imported.results.end(), [](const Result& r) { return r.energy.has_value(); }))
      throw Error(fmt::format("{}: no test has energy, so an energy objective cannot be replayed on it", file.string()));
  }
  if (left_out) *left_out = recorded - imported.results.size();
  try {
    return options.definition ? from_import(imported, *options.definition) : from_import(imported);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", file.string(), e.what()));
  }
}

void Recording::fill(const ImportedRecording& imported, std::vector<Result> merged) {
  device_ = imported.device;
  kernel_ = imported.kernel;
  const Space& space = *space_;
  const std::uint64_t n = space.size();
  slot_.assign(n, kAbsent);
  status_.assign(n, Status::Skipped);
  runtime_ms_.assign(n, kNaN);
  compile_ms_.assign(n, 0);
  energy_joules_.assign(n, kNaN);

  std::set<std::string> counter_names;
  for (Result& result : merged) {
    std::vector<std::pair<std::string, Value>> named;
    for (const auto& entry : result.configuration) {
      if (space.find_parameter(entry.first)) named.push_back(entry);
    }
    std::optional<ConfigIndex> config = space.index_of(named);
    if (!config) {
      ++outside_space_;
      continue;
    }
    if (slot_[*config] != kAbsent) continue;  // merging left one result per configuration; guard anyway
    result.config_index = *config;
    // A format that kept one time per configuration (KTT's Duration) recorded it as the
    // mean; the median of one time is that time, and the loop ranks by the median.
    if (result.time.median_ms == 0 && result.time.mean_ms > 0) result.time.median_ms = result.time.mean_ms;
    slot_[*config] = static_cast<std::uint32_t>(results_.size());
    status_[*config] = result.status;
    if (result.time.median_ms > 0 || result.time.mean_ms > 0) runtime_ms_[*config] = recorded_runtime_ms(result, imported.runtime);
    compile_ms_[*config] = result.compile_ms;
    if (result.energy) energy_joules_[*config] = result.energy->joules_per_launch;
    for (const auto& entry : result.counters) counter_names.insert(entry.first);
    ++present_count_;
    if (result.ok()) {
      ++valid_count_;
      double runtime = runtime_ms_[*config];
      if (!best_runtime_ms_ || runtime < *best_runtime_ms_) best_runtime_ms_ = runtime;
    }
    results_.push_back(std::move(result));
  }

  counter_names_.assign(counter_names.begin(), counter_names.end());
  counters_.assign(counter_names_.size(), std::vector<double>(n, kNaN));
  for (std::size_t c = 0; c < counter_names_.size(); ++c) {
    for (const Result& result : results_) {
      auto value = result.counters.find(counter_names_[c]);
      if (value != result.counters.end()) counters_[c][result.config_index] = value->second;
    }
  }
}

const Result* Recording::recorded(ConfigIndex config) const {
  std::uint32_t slot = slot_.at(config);
  return slot == kAbsent ? nullptr : &results_[slot];
}

Result Recording::replay(ConfigIndex config) const {
  if (const Result* result = recorded(config)) return *result;
  Result missing;
  missing.config_index = config;
  missing.status = Status::Skipped;
  missing.message = "not in the recording";
  for (std::size_t p = 0; p < space_->parameters().size(); ++p) {
    missing.configuration.emplace_back(space_->parameters()[p].name, space_->value(config, p));
  }
  missing.device = device_;
  return missing;
}

}  // namespace steer
