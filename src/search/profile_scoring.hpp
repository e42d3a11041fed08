#pragma once
// The scoring of the profile-based searcher (method.md §6), internal to src/search/ and kept
// apart from the searcher so that each equation can be tested and benchmarked on its own:
// eq. 12 (how far each configuration moves the predicted counters the way the reaction
// asks), eq. 13 (scores to selection weights) and the weighted draw without replacement.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "search/search_support.hpp"
#include "steer/counters.hpp"
#include "steer/device.hpp"
#include "steer/expert.hpp"
#include "steer/model.hpp"
#include "steer/result.hpp"
#include "steer/searcher.hpp"

namespace steer::search {

// One term of eq. 12: the predictions of a counter over the space and the required change
// pc'_k of the reaction.
struct ReactionTerm {
  const float* predicted = nullptr;  // [ConfigIndex], >= 0
  float change = 0;
};

// The reaction's non-zero changes for the counters the model predicts (others cannot be scored).
std::vector<ReactionTerm> reaction_terms(const CounterValues& reaction, const PredictedCounters& predicted);

// Which counters of a pair eq. 12 sums over.
enum class ZeroPredictions {
  Drop,   // the method (method.md §6, the paper's PC_used): only counters non-zero for both p and c
  Count,  // KTT's predictor code: only 0/0 drops out, so a move that removes a counter altogether
          // (e.g. no shared memory: SHR_LT 0) gets the full ±pc'_k
};

// Eq. 12 for every configuration c of the space, against the profiled configuration p:
//   s(c) = Σ_k pc'_k · (pc_k(c) − pc_k(p)) / (pc_k(c) + pc_k(p)),
// over the counters `zeros` admits. `scores` has one slot per configuration.
void score_configurations(std::span<const ReactionTerm> terms, std::uint64_t profiled, std::span<float> scores,
                          ZeroPredictions zeros = ZeroPredictions::Drop);

// Eq. 13, with s_max, s_min over the unexplored configurations:
//   s > 0: (1 + s/s_max)^exponent;  gamma < s <= 0: max(min_weight, (1 − s/s_min)^exponent)
//   (1 when s_min = 0, i.e. s = 0 is the lowest score);  s <= gamma: min_weight;
//   explored configurations: 0.
struct Normalisation {
  double gamma = -0.25;
  double exponent = 8;
  double min_weight = 0.0001;
};
// Writes the weights and returns their sum (0: every configuration is explored).
double normalise_scores(std::span<const float> scores, std::span<const std::uint8_t> explored,
                        const Normalisation& normalisation, std::span<float> weights);

// Up to `count` configurations drawn with probability proportional to `weights`, without
// replacement (a drawn configuration's weight becomes 0). `total` is the sum of the weights.
std::vector<std::uint64_t> weighted_draws(std::span<float> weights, double total, std::size_t count, Random& random);

// What reaction_to found: the bottlenecks, and the analysis's inputs the profiled test lacked
// (another counter set, a metric its profiler left out) with the model's predictions for the
// configuration in their place; or, when there was no analysis, the inputs neither gave.
struct ProfileAnalysis {
  Bottlenecks bottlenecks;
  std::vector<std::string> predicted_inputs;
  std::vector<std::string> missing_inputs;
};

// The reaction PC' (method.md §5) to the bottlenecks of a profiled test: from its measured
// counters, read with the facts of `device` (default: the known facts of the GPU the result
// names; for a GPU not in that table, the analysis without b_paral); when the test carries no
// hardware counters and `predicted_analysis`, from the model's predictions for it, read with
// the facts of the model's GPU (likewise without b_paral where they are unknown). Inputs of
// the analysis that measured counters lack are, with `predicted_analysis`, the model's
// predictions for the configuration. nullopt when there is nothing to analyse (a failed test;
// no counters and no usable prediction; an input neither measured nor predicted).
// `found`, when given, receives what the reaction answers.
std::optional<CounterValues> reaction_to(const Result& result, const PredictedCounters& predicted,
                                         const CounterModel& model, const std::optional<DeviceFacts>& device,
                                         const ExpertOptions& expert, bool predicted_analysis,
                                         ProfileAnalysis* found = nullptr);

// An Explanation of a profiled configuration's analysis: its non-zero bottlenecks and
// changes, largest first, and the inputs the model predicted or nobody gave; `next` is left
// for the searcher to fill.
Explanation explain(ConfigIndex profiled, const ProfileAnalysis& analysis, const CounterValues& reaction,
                    bool reused = false);

}  // namespace steer::search
