// `surrogate`, Steer's time-only searcher and `default` without a counter model: the
// Gaussian-process searcher of bayes_searcher.cpp with the settings below (docs/searchers.md,
// `surrogate`).
#include "search/bayes_options.hpp"
#include "steer/searcher.hpp"

namespace steer {

// Steer's time-only searcher: Bayesian optimisation of log runtime with a length scale per
// feature, candidates bred from the fastest as well as drawn at random, and every other
// choice local. Chosen by cross-validation over recordings (docs/searchers.md, "surrogate").
std::unique_ptr<Searcher> make_surrogate_searcher(const SearcherOptions& options) {
  search::BayesOptions surrogate;
  surrogate.name = "surrogate";
  surrogate.initial_samples = 8;
  surrogate.log_targets = true;
  surrogate.elite = 3;
  surrogate.bred = 200;
  surrogate.local_every = 2;
  surrogate.fit_length_scales = true;
  surrogate.fit_from = 20;
  // One proposal at a time: with one compile stream (the replay's conservative reading of
  // compiles side by side), pending proposals cost tests and gain no time (docs/searchers.md,
  // "One proposal at a time"). `batch` N keeps up to N pending, lying with the mean cost.
  surrogate.batch = 1;
  surrogate.lie = search::Lie::Mean;
  surrogate.adaptive_batch = true;
  return search::make_bayes(options, surrogate, false);
}

}  // namespace steer
