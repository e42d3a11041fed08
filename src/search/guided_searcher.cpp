// `guided`, Steer's counter-guided searcher: the Gaussian-process searcher of
// bayes_searcher.cpp over the counters a model predicts for every configuration, with the
// settings below (docs/searchers.md, `guided`; the measurements behind each:
// docs/guided-measurements.md).
#include "search/bayes_options.hpp"
#include "steer/error.hpp"
#include "steer/searcher.hpp"

namespace steer {

// The counter-guided searcher: Bayesian optimisation whose features include the counters a
// model (trained on another GPU or input) predicts for every configuration.
std::unique_ptr<Searcher> make_guided_searcher(const SearcherOptions& options) {
  if (options.model_path.empty()) {
    throw Error("searcher 'guided' needs a counter model: --model FILE (train one with `steer model train`, docs/models.md)");
  }
  // Chosen by cross-validation over the recordings with counters (docs/searchers.md).
  search::BayesOptions guided;
  guided.name = "guided";
  guided.initial_samples = 4;
  // A source's prior mean informs the first choices already: half the initial samples.
  guided.initial_samples_with_source = 2;
  guided.source_prior = 2;
  // ... and the second point is left out when the source's fastest beats the first.
  guided.design_stop = true;
  // For energy and mixes the source's fastest is tested first and the source's runtimes are
  // no prior mean; the reaction to the profiled first design point draws the next 3: on the
  // recordings with counters and energy it raised P most (docs/searchers.md, "guided").
  guided.reaction_draws_not_time = 3;
  // Its design spread over the predicted counters (the best of 5 random configurations each),
  // with a source tuning for time drawn from the source's faster half.
  guided.spread = 5;
  guided.design_share = 0.5;
  // Without a source, the model's predicted work stands in for one: it raised P on most pairs
  // of recordings where the model comes from another GPU or input and no source is given, and
  // on the mean of those tuned with their own model (docs/searchers.md).
  guided.work_prior = true;
  // ... and its lightest configuration is tested first, as a source's fastest is: the
  // predicted work ranks the tuned space well enough that its lightest is often among the
  // fastest (pnpoly on the RTX 2080 Ti: the ten lightest all within 1.09x of the best).
  guided.work_first = 1;
  // With a source the predicted lightest is tested right after the source's fastest (and
  // design_stop, tuning for time, judges both): where the source is another input whose
  // fastest misleads (gemm at 128^3 for 4096^3) the predicted work still ranks the tuned
  // space, and less work costs less energy too.
  guided.work_after_source = 1;
  // ... and a source whose own fastest either of them beats is set aside for the predicted
  // work: over ten pairs of recordings it never lowered P and raised it where the source is
  // another input (gemm at 128^3 and 4096^3, either way).
  guided.work_replaces_beaten_source = true;
  // ... and a source that ran the values of under half the tuned configurations (a narrower
  // spec's recording: the 205,216-configuration gemm with the 5,788-configuration gemm's
  // model) is a feature only, no prior mean: it ranks its own slice alone.
  guided.source_coverage = 0.5;
  guided.parameter_weight = 0.1;
  // ... but at full weight, as in `bayes`, a parameter the model cannot tell apart.
  guided.unmodelled_weight = 1;
  // ... and where there is such a parameter, length scales fitted as `surrogate` fits them.
  guided.fit_length_scales_unmodelled = true;
  guided.counter_weight = 2.5;
  guided.source_weight = 0.3;
  guided.lengthscale = 3;
  // What the time-only surrogate gained by cross-validation over spaces helps here too: log
  // runtime, candidates bred from the fastest, every other choice local (docs/searchers.md).
  guided.log_targets = true;
  guided.elite = 3;
  guided.bred = 200;
  guided.local_every = 2;
  // Tuning for time, a wider margin until a source proves itself (none: throughout): over
  // the nine recordings it raised the mean P, most on those without a source; for energy and
  // mixes it lowered gemm_h200's, so there the margin stays (docs/searchers.md).
  if (options.objective == "time") guided.xi_unproven = 0.05;
  // ... for its first 10 measurements at most: on nbody_h200, where no source proves itself,
  // a margin narrowed from then on raised P by 0.03-0.05; 32 other cases did not move.
  guided.xi_unproven_tests = 10;
  // The prior mean's factor kept at 0 or above: a prior the first tests contradict fades
  // instead of sending the next choice to the far end of its shape. On nbody_h200 it raised
  // P over time from 0.25-0.32 to 0.53-0.58 with the recorded compile times; the other eight
  // recordings did not move (docs/guided-measurements.md, "A prior that fades").
  guided.prior_fades = true;
  return search::make_bayes(options, guided, true);
}

}  // namespace steer
