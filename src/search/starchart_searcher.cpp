// Starchart-style model-based tuning (Jia et al., "Starchart: hardware and software
// optimization using recursive partitioning regression trees", PACT 2013; the baseline of
// method.md §8): a regression tree of runtime from the parameters' value indices is trained
// on random configurations until its median relative error on a held-out validation set
// drops below a target (or the training set reaches its cap); then the untested
// configurations are tested in order of predicted runtime. Every training and validation
// configuration is a real test and counts as one.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>

#include "model/regression_tree.hpp"
#include "search/search_support.hpp"
#include "steer/searcher.hpp"

namespace steer {
namespace {

struct StarchartOptions {
  std::uint64_t validation = 200;    // held-out configurations (method.md §8)
  std::uint64_t max_training = 200;  // training stops here even if the error is still high
  double target_error = 0.15;        // median relative error that ends training
};

class StarchartSearcher final : public Searcher {
 public:
  StarchartSearcher(std::uint64_t seed, StarchartOptions options) : random_(seed), options_(options) {}
  std::string name() const override { return "starchart"; }

  void start(const Space& space) override {
    space_ = &space;
    memory_.reset(space.size());
    // Small spaces: validation gets at most half of what is drawn, so some trains the model.
    samples_ = space.sample(random_.engine(), options_.validation + options_.max_training);
    validation_count_ = std::min<std::size_t>(options_.validation, samples_.size() / 2);
    next_sample_ = 0;
    training_measured_ = 0;
    checked_at_ = 0;
    ranking_.clear();
    next_ranked_ = 0;
    model_ready_ = false;
  }

  std::vector<Proposal> propose(std::size_t max) override {
    std::vector<Proposal> out;
    while (out.size() < max) {
      std::optional<ConfigIndex> next = model_ready_ ? next_predicted() : next_sample();
      if (!next) break;
      memory_.propose(*next);
      out.push_back({*next, {}});
    }
    return out;
  }

  void observe(const Result& result) override {
    memory_.observe(result);
    if (model_ready_) return;
    if (!is_validation(result.config_index)) ++training_measured_;
    const bool training_done = next_sample_ == samples_.size() && memory_.pending() == 0;
    if (validation_measured() && (training_measured_ > checked_at_ || training_done)) {
      checked_at_ = training_measured_;
      if (training_done || (training_measured_ >= 2 && validation_error(fit()) < options_.target_error))
        rank();
    }
  }

 private:
  std::optional<ConfigIndex> next_sample() {
    if (next_sample_ == samples_.size()) return std::nullopt;
    return samples_[next_sample_++];
  }

  std::optional<ConfigIndex> next_predicted() {
    while (next_ranked_ < ranking_.size()) {
      const ConfigIndex c = ranking_[next_ranked_++];
      if (!memory_.seen(c)) return c;
    }
    return std::nullopt;
  }

  bool is_validation(ConfigIndex c) const {
    return std::find(samples_.begin(), samples_.begin() + static_cast<std::ptrdiff_t>(validation_count_),
                     c) != samples_.begin() + static_cast<std::ptrdiff_t>(validation_count_);
  }
  bool validation_measured() const {
    return std::all_of(samples_.begin(), samples_.begin() + static_cast<std::ptrdiff_t>(validation_count_),
                       [&](ConfigIndex c) { return memory_.measured(c); });
  }

  // The tree on the measured training configurations. A failed one is taken as twice the
  // slowest successful runtime seen, so the model steers away from failing regions instead of
  // predicting them from their neighbours.
  model::RegressionTree fit() const {
    double slowest = 0;
    for (ConfigIndex c : samples_) {
      if (memory_.measured(c) && std::isfinite(memory_.cost(c))) slowest = std::max(slowest, memory_.cost(c));
    }
    const double failure_target = slowest > 0 ? 2 * slowest : 1.0;
    std::vector<std::vector<double>> features;
    std::vector<double> targets;
    for (std::size_t i = validation_count_; i < samples_.size(); ++i) {
      const ConfigIndex c = samples_[i];
      if (!memory_.measured(c)) continue;
      const ValueIndices v = space_->value_indices(c);
      features.emplace_back(v.begin(), v.end());
      targets.push_back(std::isfinite(memory_.cost(c)) ? memory_.cost(c) : failure_target);
    }
    return model::RegressionTree::fit(features, targets);
  }

  // Median of |predicted - measured| / measured over the successful validation tests
  // (infinite when none succeeded: nothing shows the model is good).
  double validation_error(const model::RegressionTree& tree) const {
    std::vector<double> errors;
    for (std::size_t i = 0; i < validation_count_; ++i) {
      const ConfigIndex c = samples_[i];
      const double measured = memory_.cost(c);
      if (!std::isfinite(measured) || measured <= 0) continue;
      errors.push_back(
          std::abs(tree.predict(std::span<const std::uint32_t>(space_->value_indices(c))) - measured) /
          measured);
    }
    if (errors.empty()) return std::numeric_limits<double>::infinity();
    const auto middle = errors.begin() + static_cast<std::ptrdiff_t>(errors.size() / 2);
    std::nth_element(errors.begin(), middle, errors.end());
    return *middle;
  }

  // Every untested configuration, fastest predicted first (ties by index, for determinism).
  void rank() {
    const model::RegressionTree tree = fit();
    std::vector<std::pair<double, ConfigIndex>> predicted;
    ValueIndices v(space_->parameters().size());
    for (ConfigIndex c = 0; c < space_->size(); ++c) {
      if (memory_.seen(c)) continue;
      space_->value_indices(c, v);
      predicted.emplace_back(tree.predict(std::span<const std::uint32_t>(v)), c);
    }
    std::sort(predicted.begin(), predicted.end());
    ranking_.clear();
    for (const auto& [prediction, c] : predicted) ranking_.push_back(c);
    next_ranked_ = 0;
    model_ready_ = true;
  }

  search::Random random_;
  StarchartOptions options_;
  const Space* space_ = nullptr;
  search::Memory memory_;
  std::vector<ConfigIndex> samples_;  // validation first, then training, in proposal order
  std::size_t validation_count_ = 0;
  std::size_t next_sample_ = 0;
  std::uint64_t training_measured_ = 0;
  std::uint64_t checked_at_ = 0;  // training_measured_ when the model was last checked
  bool model_ready_ = false;
  std::vector<ConfigIndex> ranking_;
  std::size_t next_ranked_ = 0;
};

}  // namespace

std::unique_ptr<Searcher> make_starchart_searcher(const SearcherOptions& options) {
  search::Settings settings("starchart", options.settings);
  StarchartOptions starchart;
  starchart.validation = settings.integer("validation", starchart.validation, 1, 1'000'000);
  starchart.max_training = settings.integer("max_training", starchart.max_training, 2, 1'000'000);
  starchart.target_error = settings.number("target_error", starchart.target_error, 0, 1e9);
  settings.finish();
  return std::make_unique<StarchartSearcher>(options.seed, starchart);
}

}  // namespace steer
