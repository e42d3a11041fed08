// Eq. 12 and 13 over whole spaces: flat loops over counter-major float arrays, so that the
// compiler vectorises them (205,216 configurations in a few milliseconds, bench/profile_based_scoring.cpp).
#include "search/profile_scoring.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "steer/error.hpp"

namespace steer::search {

std::vector<ReactionTerm> reaction_terms(const CounterValues& reaction, const PredictedCounters& predicted) {
  std::vector<ReactionTerm> terms;
  for (const auto& [counter, change] : reaction) {
    if (change == 0) continue;
    if (const float* values = predicted.counter(counter)) terms.push_back({values, static_cast<float>(change)});
  }
  return terms;
}

void score_configurations(std::span<const ReactionTerm> terms, std::uint64_t profiled, std::span<float> scores,
                          ZeroPredictions zeros) {
  std::fill(scores.begin(), scores.end(), 0.0f);
  const std::size_t n = scores.size();
  float* out = scores.data();
  const bool count = zeros == ZeroPredictions::Count;
  for (const ReactionTerm& term : terms) {
    const float at_profiled = term.predicted[profiled];
    const float* x = term.predicted;
    const float change = term.change;
    if (!(at_profiled > 0)) {
      // Drop: a zero prediction for p leaves the counter out for every c. Count: every c
      // with the counter scores the full +change (0 -> anything is the largest rise).
      if (count) {
        for (std::size_t c = 0; c < n; ++c) out[c] += x[c] > 0 ? change : 0.0f;
      }
      continue;
    }
    for (std::size_t c = 0; c < n; ++c) {
      const float xc = x[c];
      // xc >= 0, so xc + at_profiled > 0: the division is safe; xc == 0 gives -change,
      // which Drop leaves out.
      const float contribution = change * (xc - at_profiled) / (xc + at_profiled);
      out[c] += (xc > 0 || count) ? contribution : 0.0f;
    }
  }
}

double normalise_scores(std::span<const float> scores, std::span<const std::uint8_t> explored,
                        const Normalisation& normalisation, std::span<float> weights) {
  const std::size_t n = scores.size();
  float s_min = std::numeric_limits<float>::infinity(), s_max = -std::numeric_limits<float>::infinity();
  for (std::size_t c = 0; c < n; ++c) {
    const float s = explored[c] ? 0.0f : scores[c];
    s_min = std::min(s_min, s);
    s_max = std::max(s_max, s);
  }
  // (Explored configurations took part as 0 above; that only widens [s_min, s_max] to include
  // 0, which eq. 13 implies anyway: s_max is used for s > 0 only, s_min for s <= 0 only.)
  const auto gamma = static_cast<float>(normalisation.gamma);
  const auto min_weight = static_cast<float>(normalisation.min_weight);
  const auto exponent = static_cast<float>(normalisation.exponent);
  const bool exponent_is_8 = normalisation.exponent == 8;
  const float inverse_max = s_max > 0 ? 1.0f / s_max : 0.0f;
  const float inverse_min = s_min < 0 ? 1.0f / s_min : 0.0f;  // s_min = 0: every s <= 0 is 0 and weighs 1
  auto power = [&](float base) {
    if (exponent_is_8) {
      const float b2 = base * base, b4 = b2 * b2;
      return b4 * b4;
    }
    return std::pow(base, exponent);
  };
  double total = 0;
  for (std::size_t c = 0; c < n; ++c) {
    const float s = scores[c];
    float w;
    if (s > 0) {
      w = power(1.0f + s * inverse_max);
    } else if (s > gamma) {
      w = std::max(min_weight, power(1.0f - s * inverse_min));
    } else {
      w = min_weight;
    }
    w = explored[c] ? 0.0f : w;
    weights[c] = w;
    total += w;
  }
  return total;
}

std::vector<std::uint64_t> weighted_draws(std::span<float> weights, double total, std::size_t count, Random& random) {
  std::vector<std::uint64_t> drawn;
  while (drawn.size() < count && total > 0) {
    const double target = random.unit() * total;
    double running = 0;
    std::uint64_t chosen = weights.size();
    std::uint64_t last_positive = weights.size();
    for (std::uint64_t c = 0; c < weights.size(); ++c) {
      if (weights[c] <= 0) continue;
      last_positive = c;
      running += weights[c];
      if (running > target) {
        chosen = c;
        break;
      }
    }
    if (chosen == weights.size()) chosen = last_positive;  // rounding left the target past the end
    if (chosen == weights.size()) break;                   // nothing left to draw
    drawn.push_back(chosen);
    total -= weights[chosen];
    weights[chosen] = 0;
  }
  return drawn;
}

namespace {

// The canonical counters of a profiled test and the family they follow, or nullopt when it
// carries no hardware counters ("threads" alone is not a measurement). Backends may report
// canonical names already (then `fallback_family`, the tuned GPU's, applies).
std::optional<std::pair<CounterValues, CounterFamily>> measured_counters(const Result& result,
                                                                       CounterFamily fallback_family) {
  if (auto family = detect_counter_family(result.counters)) {
    return std::pair{canonical_counters(result.counters, *family).values, *family};
  }
  for (std::string_view needed : expert_input_counters()) {
    if (needed != abbr::THREADS && result.counters.contains(std::string(needed))) {
      return std::pair{result.counters, fallback_family};
    }
  }
  return std::nullopt;
}

// The tuned GPU's facts: those given, else those known for the GPU the result names; nullopt
// for a GPU not in the table, whose analysis then leaves out b_paral (analyse_bottlenecks).
std::optional<DeviceFacts> tuned_device(const Result& result, const std::optional<DeviceFacts>& device) {
  if (device) return device;
  return known_device_facts(result.device);
}

}  // namespace

std::optional<CounterValues> reaction_to(const Result& result, const PredictedCounters& predicted,
                                         const CounterModel& model, const std::optional<DeviceFacts>& device,
                                         const ExpertOptions& expert, bool predicted_analysis,
                                         ProfileAnalysis* found) {
  if (!result.ok()) return std::nullopt;
  ProfileAnalysis analysis;
  const auto react = [&](const Bottlenecks& bottlenecks) {
    analysis.bottlenecks = bottlenecks;
    if (found) *found = analysis;
    return required_counter_changes(bottlenecks, expert);
  };
  const auto predicted_value = [&](std::string_view counter) -> std::optional<double> {
    const auto k = std::ranges::find(predicted.counters, counter);
    if (k == predicted.counters.end()) return std::nullopt;
    return predicted.values[static_cast<std::size_t>(k - predicted.counters.begin())][result.config_index];
  };
  // Inputs still missing: no analysis, and the caller is told which.
  const auto complete = [&](CounterValues& values, bool predict) {
    for (std::string_view name : missing_expert_inputs(values)) {
      const std::optional<double> value = predict ? predicted_value(name) : std::nullopt;
      if (value) {
        values[std::string(name)] = *value;
        analysis.predicted_inputs.emplace_back(name);
      } else {
        analysis.missing_inputs.emplace_back(name);
      }
    }
    if (found && !analysis.missing_inputs.empty()) *found = analysis;
    return analysis.missing_inputs.empty();
  };
  const CounterFamily reported = device ? device->family : CounterFamily::VoltaPlus;
  if (auto measured = measured_counters(result, reported)) {
    if (!complete(measured->first, predicted_analysis)) return std::nullopt;
    std::optional<DeviceFacts> facts = tuned_device(result, device);
    if (!facts) return react(analyse_bottlenecks(measured->first, measured->second, expert));
    facts->family = measured->second;
    return react(analyse_bottlenecks(measured->first, *facts, expert));
  }
  // A recording with times only (or a profiler that returned nothing): the model's
  // predictions for this configuration stand in, read with the facts of the model's GPU
  // (without b_paral where that GPU is unknown).
  if (!predicted_analysis) return std::nullopt;
  CounterValues values;
  for (std::size_t k = 0; k < predicted.counters.size(); ++k) {
    values[predicted.counters[k]] = predicted.values[k][result.config_index];
  }
  if (auto threads = result.counters.find(std::string(abbr::THREADS)); threads != result.counters.end()) {
    values[std::string(abbr::THREADS)] = threads->second;  // measured, so better than predicted
  }
  if (!complete(values, false)) return std::nullopt;  // the model does not predict every input
  for (std::string_view name : expert_input_counters()) {
    if (predicted_value(name) && !(name == abbr::THREADS && result.counters.contains(std::string(name)))) {
      analysis.predicted_inputs.emplace_back(name);
    }
  }
  try {
    const ModelProvenance& trained = model.provenance();
    return react(trained.device_facts ? analyse_bottlenecks(values, *trained.device_facts, expert)
                                      : analyse_bottlenecks(values, trained.family, expert));
  } catch (const CounterError&) {
    return std::nullopt;  // facts of the model's GPU the analysis cannot read
  }
}

Explanation explain(ConfigIndex profiled, const ProfileAnalysis& analysis, const CounterValues& reaction,
                    bool reused) {
  Explanation e;
  e.profiled = profiled;
  e.reused = reused;
  for (const auto& [name, value] : named_bottlenecks(analysis.bottlenecks)) {
    if (value > 0) e.bottlenecks.emplace_back(name, value);
  }
  for (const auto& [counter, change] : reaction) {
    if (change != 0) e.changes.emplace_back(counter, change);
  }
  std::stable_sort(e.bottlenecks.begin(), e.bottlenecks.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::stable_sort(e.changes.begin(), e.changes.end(),
                   [](const auto& a, const auto& b) { return std::abs(a.second) > std::abs(b.second); });
  e.predicted_inputs = analysis.predicted_inputs;
  e.missing_inputs = analysis.missing_inputs;
  return e;
}

}  // namespace steer::search
