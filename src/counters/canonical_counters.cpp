// Reads the family tables of counter_tables.cpp: family detection and translation of raw
// hardware counters to canonical abbreviations.
#include <algorithm>
#include <array>

#include "steer/counters.hpp"

namespace steer {
namespace {

double apply(Transform transform, double value) {
  switch (transform) {
    case Transform::PercentToTenths: return value / 10.0;
    case Transform::FractionToPercent: return value * 100.0;
    case Transform::WarpRatioToPercent: return value * 100.0 / 32.0;  // 32 threads per warp
    case Transform::Identity:
    case Transform::Summand:
    case Transform::KeepRaw: return value;
  }
  return value;
}

bool table_names(std::span<const CounterMapping> table, std::string_view name) {
  return std::ranges::find(table, name, &CounterMapping::hardware_name) != table.end();
}

}  // namespace

const char* to_string(CounterFamily family) noexcept {
  switch (family) {
    case CounterFamily::PreVolta: return "pre-volta";
    case CounterFamily::VoltaPlus: return "volta+";
    case CounterFamily::Ktt: return "ktt";
  }
  return "unknown";
}

const CounterInfo* find_counter_info(std::string_view abbreviation) noexcept {
  auto infos = canonical_counter_infos();
  auto found = std::ranges::find(infos, abbreviation, &CounterInfo::abbreviation);
  return found == infos.end() ? nullptr : &*found;
}

CounterFamily counter_family_for(ComputeCapability capability) noexcept {
  // Volta (7.0) introduced the CUPTI profiler metrics; older GPUs only have nvprof's.
  return capability < ComputeCapability{7, 0} ? CounterFamily::PreVolta : CounterFamily::VoltaPlus;
}

std::optional<CounterFamily> detect_counter_family(const CounterValues& raw) {
  // In preference order: a tie keeps the earlier family.
  constexpr std::array candidates{CounterFamily::VoltaPlus, CounterFamily::Ktt, CounterFamily::PreVolta};
  std::optional<CounterFamily> best;
  std::size_t best_matches = 0;
  for (CounterFamily family : candidates) {
    auto table = counter_table(family);
    auto matches = static_cast<std::size_t>(std::ranges::count_if(raw, [&](const auto& entry) {
      return entry.first != abbr::THREADS && table_names(table, entry.first);
    }));
    if (matches > best_matches) {
      best = family;
      best_matches = matches;
    }
  }
  return best;
}

bool has_hardware_counters(const CounterValues& raw) {
  if (detect_counter_family(raw)) return true;
  for (CounterFamily family : {CounterFamily::VoltaPlus, CounterFamily::Ktt, CounterFamily::PreVolta}) {
    for (const CounterMapping& row : counter_table(family)) {
      if (!row.abbreviation.empty() && row.abbreviation != abbr::THREADS && raw.contains(std::string(row.abbreviation)))
        return true;
    }
  }
  return false;
}

CanonicalCounters canonical_counters(const CounterValues& raw, CounterFamily family) {
  auto table = counter_table(family);
  CanonicalCounters result;
  // Alternatives: the first row present wins. Summands: every row present adds.
  for (const CounterMapping& row : table) {
    if (row.transform == Transform::KeepRaw) continue;
    auto found = raw.find(std::string(row.hardware_name));
    if (found == raw.end()) continue;
    std::string key(row.abbreviation);
    double value = apply(row.transform, found->second);
    if (row.transform == Transform::Summand) {
      result.values[key] += value;
    } else {
      result.values.try_emplace(key, value);
    }
  }
  // Everything the table does not translate stays available under its own name.
  for (const auto& [name, value] : raw) {
    auto row = std::ranges::find(table, name, &CounterMapping::hardware_name);
    if (row == table.end() || row->transform == Transform::KeepRaw) result.values.try_emplace(name, value);
  }
  for (const CounterInfo& info : canonical_counter_infos()) {
    if (!result.values.contains(std::string(info.abbreviation))) result.missing.push_back(info.abbreviation);
  }
  return result;
}

}  // namespace steer
