// The profile-based searcher (Filipovič et al., "Using hardware performance counters to speed
// up autotuning convergence on GPUs", JPDC 2022; method.md §3–6, Algorithm 1): profile a
// configuration, find its bottlenecks with the expert system, turn them into required counter
// changes PC', score every unexplored configuration by how its predicted counters move the way
// PC' asks (eq. 12, 13), test n configurations drawn by score without profiling, and profile
// again near the fastest configuration seen.
//
// Steer never tests a configuration twice, so where Algorithm 1 (and KTT) profiles the fastest
// configuration again, this searcher profiles it only if it has not been tested yet: when the
// fastest seen was itself profiled, its analysis is reused without a test; when it was tested
// without counters, its untested Hamming-1 neighbour that the current reaction favours most is
// profiled instead, standing in for it (docs/models.md says more).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "search/file_cache.hpp"
#include "search/profile_scoring.hpp"
#include "search/search_support.hpp"
#include "steer/expert.hpp"
#include "steer/model.hpp"
#include "steer/searcher.hpp"

namespace steer {
namespace {

struct ProfileBasedOptions {
  std::uint64_t unprofiled = 5;  // n: plain tests per profiled one
  search::Normalisation normalisation;
  ExpertOptions expert;
  std::optional<DeviceFacts> device;  // the tuned GPU; default: known_device_facts(result.device)
  bool predicted_analysis = true;     // analyse predicted counters when a profiled test returns none
  search::ZeroPredictions zeros = search::ZeroPredictions::Drop;
};

class ProfileBasedSearcher final : public Searcher {
 public:
  ProfileBasedSearcher(std::uint64_t seed, std::shared_ptr<const CounterModel> model, ProfileBasedOptions options)
      : random_(seed), model_(std::move(model)), options_(options) {}
  std::string name() const override { return "profile-based"; }

  void start(const Space& space) override {
    space_ = &space;
    memory_.reset(space.size());
    predicted_ = model_->predict(space);
    explored_.assign(space.size(), 0);
    scores_.assign(space.size(), 0.0f);
    weights_.assign(space.size(), 0.0f);
    reactions_.clear();
    analyses_.clear();
    explanations_.clear();
    queue_.clear();
    batch_pending_ = 0;
    awaiting_profile_.reset();
    base_.reset();
    fastest_.reset();
    fastest_cost_ = INFINITY;
    next_profile_ = memory_.random_unseen(space, random_);  // Algorithm 1 starts at random
  }

  std::vector<Proposal> propose(std::size_t max) override {
    std::vector<Proposal> out;
    while (out.size() < max) {
      if (!queue_.empty()) {
        const ConfigIndex c = queue_.front();
        queue_.pop_front();
        memory_.propose(c);
        ++batch_pending_;
        out.push_back({c, {}});
        continue;
      }
      if (awaiting_profile_ || batch_pending_ > 0) break;  // the next step needs those results
      if (!next_profile_) plan_next_iteration();
      if (!next_profile_) {
        if (queue_.empty()) break;  // every configuration is explored
        continue;
      }
      const ConfigIndex c = *next_profile_;
      next_profile_.reset();
      mark_explored(c);
      memory_.propose(c);
      awaiting_profile_ = c;
      Proposal profiled{c, {}};
      profiled.measure.counters = true;
      out.push_back(profiled);
      break;  // its counters decide what comes next
    }
    return out;
  }

  void observe(const Result& result) override {
    const double cost = memory_.observe(result);
    const ConfigIndex c = result.config_index;
    if (cost < fastest_cost_) {
      fastest_cost_ = cost;
      fastest_ = c;
    }
    if (awaiting_profile_ && *awaiting_profile_ == c) {
      awaiting_profile_.reset();
      search::ProfileAnalysis found;
      if (auto reaction = analyse(result, &found)) {
        reactions_[c] = std::move(*reaction);
        analyses_[c] = found;
        base_ = c;
        explanations_.push_back(search::explain(c, found, reactions_[c]));
      } else if (!found.missing_inputs.empty()) {
        explanations_.push_back(search::explain(c, found, {}));
      }
      draw_batch();
    } else {
      --batch_pending_;
    }
  }

  std::vector<Explanation> take_explanations() override { return std::exchange(explanations_, {}); }

 private:
  void mark_explored(ConfigIndex c) { explored_[c] = 1; }

  std::optional<CounterValues> analyse(const Result& result, search::ProfileAnalysis* found) {
    return search::reaction_to(result, predicted_, *model_, options_.device, options_.expert,
                               options_.predicted_analysis, found);
  }

  // Scores every configuration against the current base (eq. 12, 13) and queues n draws; with
  // no analysis yet (the first profiled test failed) the draws are uniform.
  void draw_batch() {
    double total = 0;
    if (base_) {
      const std::vector<search::ReactionTerm> terms = search::reaction_terms(reactions_.at(*base_), predicted_);
      search::score_configurations(terms, *base_, scores_, options_.zeros);
      total = search::normalise_scores(scores_, explored_, options_.normalisation, weights_);
    } else {
      for (std::size_t c = 0; c < weights_.size(); ++c) total += weights_[c] = explored_[c] ? 0.0f : 1.0f;
    }
    // The draws an analysis led to: the explanation made for the base, when it is still open.
    Explanation* open = !explanations_.empty() && base_ && explanations_.back().profiled == *base_ &&
                                explanations_.back().next.empty()
                            ? &explanations_.back()
                            : nullptr;
    for (std::uint64_t c : search::weighted_draws(weights_, total, options_.unprofiled, random_)) {
      mark_explored(c);
      queue_.push_back(c);
      if (open) open->next.push_back(c);
    }
  }

  // After a batch: the fastest configuration seen decides the next profiled one.
  void plan_next_iteration() {
    if (!fastest_ || !std::isfinite(fastest_cost_)) {
      next_profile_ = random_unexplored();  // nothing ran yet: start again at random
      return;
    }
    if (reactions_.contains(*fastest_)) {
      // Profiled already: its analysis holds; draw the next batch around it without a test.
      base_ = *fastest_;
      explanations_.push_back(search::explain(*base_, analyses_.at(*base_), reactions_.at(*base_), true));
      draw_batch();
      return;
    }
    next_profile_ = favoured_neighbour(*fastest_);
    if (!next_profile_) next_profile_ = random_unexplored();
  }

  // The unexplored Hamming-1 neighbour of `c` that the current reaction scores highest against
  // `c` (eq. 12; ties: lowest index), or a random one before any analysis.
  std::optional<ConfigIndex> favoured_neighbour(ConfigIndex c) {
    std::vector<ConfigIndex> candidates;
    for (ConfigIndex n : space_->neighbours(c)) {
      if (!explored_[n]) candidates.push_back(n);
    }
    if (candidates.empty()) return std::nullopt;
    if (!base_) return candidates[random_.below(candidates.size())];
    const std::vector<search::ReactionTerm> terms = search::reaction_terms(reactions_.at(*base_), predicted_);
    std::optional<ConfigIndex> best;
    float best_score = -INFINITY;
    for (ConfigIndex n : candidates) {
      float score = 0;
      for (const search::ReactionTerm& term : terms) {
        const float xc = term.predicted[n], xp = term.predicted[c];
        if (xc > 0 && xp > 0) score += term.change * (xc - xp) / (xc + xp);
      }
      if (score > best_score) {
        best_score = score;
        best = n;
      }
    }
    return best;
  }

  std::optional<ConfigIndex> random_unexplored() {
    for (int attempt = 0; attempt < 64; ++attempt) {
      const ConfigIndex c = random_.below(explored_.size());
      if (!explored_[c]) return c;
    }
    const std::uint64_t from = random_.below(explored_.size());
    for (std::uint64_t step = 0; step < explored_.size(); ++step) {
      const ConfigIndex c = (from + step) % explored_.size();
      if (!explored_[c]) return c;
    }
    return std::nullopt;
  }

  search::Random random_;
  std::shared_ptr<const CounterModel> model_;
  ProfileBasedOptions options_;
  const Space* space_ = nullptr;
  search::Memory memory_;
  PredictedCounters predicted_;
  std::vector<std::uint8_t> explored_;  // proposed or queued
  std::vector<float> scores_, weights_;
  std::map<ConfigIndex, CounterValues> reactions_;  // per profiled configuration with an analysis
  std::map<ConfigIndex, search::ProfileAnalysis> analyses_;  // what each of those reactions answers
  std::vector<Explanation> explanations_;           // not yet taken
  std::deque<ConfigIndex> queue_;                   // drawn, not yet proposed
  std::uint64_t batch_pending_ = 0;                 // plain tests proposed, not yet observed
  std::optional<ConfigIndex> awaiting_profile_;
  std::optional<ConfigIndex> next_profile_;
  std::optional<ConfigIndex> base_;  // the profiled configuration eq. 12 compares against
  std::optional<ConfigIndex> fastest_;
  double fastest_cost_ = INFINITY;
};

// "8.6" -> {8, 6}.
ComputeCapability parse_capability(double value) {
  const auto major = static_cast<int>(std::floor(value));
  const auto minor = static_cast<int>(std::lround((value - major) * 10));
  return {major, minor};
}

}  // namespace

std::unique_ptr<Searcher> make_profile_based_searcher(const SearcherOptions& options) {
  search::Settings settings("profile-based", options.settings);
  ProfileBasedOptions profile;
  profile.unprofiled = settings.integer("n", profile.unprofiled, 1, 1'000'000);
  profile.normalisation.gamma = settings.number("gamma", profile.normalisation.gamma, -1e9, 0);
  profile.normalisation.exponent = settings.number("exponent", profile.normalisation.exponent, 0, 64);
  profile.normalisation.min_weight = settings.number("min_weight", profile.normalisation.min_weight, 1e-30, 1);
  profile.expert.inst_reaction = settings.number("inst_reaction", profile.expert.inst_reaction, 0, 0.999);
  profile.expert.compute_bound_inst_reaction =
      settings.number("compute_bound_inst_reaction", profile.expert.compute_bound_inst_reaction, 0, 0.999);
  profile.expert.compute_bound = settings.flag("compute_bound", false);
  profile.predicted_analysis = settings.flag("predicted_analysis", profile.predicted_analysis);
  profile.zeros = settings.choice("zeros", "drop", {"drop", "count"}) == "count" ? search::ZeroPredictions::Count
                                                                                : search::ZeroPredictions::Drop;
  const double sm_count = settings.number("sm_count", 0, 0, 100'000);
  const double capability = settings.number("compute_capability", 0, 0, 99);
  settings.finish();
  if ((sm_count > 0) != (capability > 0)) {
    throw Error("searcher 'profile-based': give sm_count and compute_capability together");
  }
  if (sm_count > 0) {
    if (sm_count != std::floor(sm_count)) throw Error("searcher 'profile-based': sm_count must be a whole number");
    DeviceFacts facts{static_cast<int>(sm_count), parse_capability(capability), CounterFamily::VoltaPlus};
    facts.family = counter_family_for(facts.compute_capability);
    fp32_cores_per_sm(facts.compute_capability);  // an unknown capability is an error now, not at the first profile
    profile.device = facts;
  }
  if (options.model_path.empty()) {
    throw Error(
        "searcher 'profile-based' needs a counter model: --model FILE (train one with `steer model train`, "
        "docs/models.md)");
  }
  return std::make_unique<ProfileBasedSearcher>(options.seed, search::load_model_cached(options.model_path), profile);
}

}  // namespace steer
