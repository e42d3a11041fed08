#pragma once
// The Gaussian-process searcher's settings (src/search/bayes_searcher.cpp), shared by the
// searchers built on it: `bayes` (Kernel Tuner's method, the defaults below), `surrogate`
// (surrogate_searcher.cpp) and `guided` (guided_searcher.cpp), each its own file that sets
// these options and hands them to make_bayes.
#include <cstdint>
#include <memory>
#include <string>

#include "search/profile_scoring.hpp"
#include "search/source_recording.hpp"
#include "steer/expert.hpp"
#include "steer/model.hpp"
#include "steer/searcher.hpp"

namespace steer::search {

enum class Covariance { Matern32, Matern52, Rbf };
enum class Lie { Fastest, Mean, Slowest };

struct BayesOptions {
  std::uint64_t initial_samples = 20;            // tests before the model chooses (KT's popsize)
  std::uint64_t initial_samples_with_source = 0; // the same with a source recording (0: initial_samples)
  bool latin_hypercube = true;                   // KT's samplingmethod: lhs (true) or random
  std::uint64_t candidates = 1000;               // random untested configurations scored per choice
  std::uint64_t max_points = 300;                // measurements a refit keeps (see the top)
  Covariance covariance = Covariance::Matern32;  // KT's covariancekernel
  double lengthscale = 1.5;                      // KT's covariancelengthscale, in scaled units
  double xi = 0.01;                              // expected improvement's exploration margin
  // < 0: xi. Otherwise the margin while no source has proved itself: without a source, or
  // with one whose fastest design_stop found behind the first design point.
  double xi_unproven = -1;
  // > 0: the unproven margin holds for this many measurements at most, then xi: it widens
  // the model's first choices, and later ones refine the fastest found.
  std::uint64_t xi_unproven_tests = 0;
  // Steer's refinements, all off for `bayes` (Kernel Tuner's method) and on for `surrogate`
  // (docs/searchers.md says why each):
  bool log_targets = false;          // model log(runtime): runtimes span orders of magnitude
  std::uint64_t elite = 1;           // the untested neighbours of this many fastest are candidates
  std::uint64_t bred = 0;            // candidates bred from the fastest, as the genetic searcher breeds
  std::uint64_t pair_moves = 0;      // the untested configurations two parameters from this many fastest are candidates
  std::uint64_t pair_moves_after = 20;  // ... once the fastest has stood for this many measurements (0: always)
  std::uint64_t local_every = 0;     // every k-th choice among those two kinds of candidates only
  // > 0: once the fastest has stood for this many measurements, the local choices climb from
  // a jump away from it, as basin hopping's restarts do: a local choice is the model's pick
  // among climb_jumps jumps from the fastest (search::displace), and then among the untested
  // neighbours of the climb's fastest, until climb_tries of them in a row were no faster or
  // none is left; then the next jump. A new fastest ends the climb (the elite's neighbours
  // go on from it). The elite's neighbours lead only down the fastest's own slope; another
  // basin is reached by climbing from elsewhere (gemm_full live, docs/guided-measurements.md).
  std::uint64_t climb_after = 0;
  std::uint64_t climb_tries = 5;
  std::uint64_t climb_jumps = 20;
  // With climb_after: a climb starts from one of the fastest's untested exchanges (two
  // parameters of one value list swapped, search::exchanges) before any random jump. On
  // gemm_full live, guided's tail seeds ended one exchange (16 x 8 threads to 8 x 16) and one
  // step from a configuration within 1.003x of the least measured, and tested neither.
  bool climb_exchanges = false;
  bool fit_length_scales = false;    // a length scale per feature, by marginal likelihood
  std::uint64_t fit_from = 20;       // measurements before the first fit; then at every 1.5 times as many
  // With a counter model: length scales fitted as fit_length_scales does where the model
  // cannot tell the tuned space's configurations apart along some parameter (modelled()):
  // along it only the measurements say how much it matters.
  bool fit_length_scales_unmodelled = false;
  // On one device, up to this many proposals pending at a time when the loop asks for
  // several (its compile-ahead window): each choice beyond the first lies about the pending
  // ones (the constant liar), and the loop compiles them while one runs.
  std::uint64_t batch = 1;
  Lie lie = Lie::Fastest;
  bool adaptive_batch = false;  // fewer pending where compiling is short against running
  // With a counter model: its predicted counters of every configuration join the features.
  std::shared_ptr<const CounterModel> counter_model;
  double counter_weight = 1.0;    // the counters' feature range, over sqrt(counters), relative to a parameter's
  double parameter_weight = 1.0;  // a parameter's feature range (0: the predicted counters alone)
  // >= 0: the range of a parameter the model cannot tell apart, one it was not trained on or
  // with values of the tuned space it never saw (its predictions are the same, or guesses,
  // along it), in place of parameter_weight.
  double unmodelled_weight = -1;
  // With a source recording (another GPU's or input's): its fastest configurations are
  // tested first, and its runtimes are a feature.
  std::shared_ptr<const search::SourceRuntimes> source;
  std::uint64_t source_first = 1;  // the source's fastest tested before the initial samples
  double source_weight = 1.0;      // the source runtime feature's range, as counter_weight is a counter's
  // > 0: the source's standardised log runtime, times a factor b, is the model's prior mean;
  // b is fitted to the measurements (generalised least squares) under a prior N(1,
  // source_prior^2), so that a source that ranks the tuned GPU's configurations well steers
  // the choices toward its fastest, and one that does not fades out. 0: no prior mean.
  double source_prior = 0;
  std::uint64_t source_candidates = 50;  // with source_prior: the source's fastest untested join the candidates
  // > 0, with source_prior: a source that ran the values of less than this share of the tuned
  // configurations (search::source_coverage) ranks only its own slice of the space, yet as
  // prior mean, candidates and design pool it would keep the choices there: it stays a
  // feature only, as with source_prior 0 (a space wider than the source's, whose best lies
  // outside it: gemm's 205,216-configuration spec with the 5,788-configuration spec's model).
  double source_coverage = 0;
  // With source_prior and the source's fastest tested first: once it and the first design
  // point are measured, the rest of the initial design is dropped if the source's fastest was
  // the faster. A source that ranks the tuned space well puts its fastest among the tuned
  // space's fastest few per cent, ahead of a random point 19 times in 20; one that does not is
  // as likely behind, and keeps its full design. One test at a time only.
  bool design_stop = false;
  // > 0: the design's points after the first (and after the source's fastest) are spread in
  // feature space: each the farthest from those before it among this many random
  // configurations; the reaction's draws (reaction_draws) likewise, each the farthest of this
  // many it drew. 0: the Latin hypercube (or random sample) and the reaction's draws as drawn.
  std::uint64_t spread = 0;
  // < 1, with source_prior: the design's points after the source's fastest are drawn from
  // the configurations in the source's fastest share of its runtimes (0.5: its faster half),
  // not from the whole space. A slow test costs its runtime, and even a source whose fastest
  // misleads ranks the tuned space's halves better than chance (gemm at 128^3 for 4096^3).
  double design_share = 1;
  // Without a source, with a counter model: the work the model predicts of each
  // configuration, sqrt(INST_EXE * (DRAM_RT + DRAM_WT + 1)) (instructions and DRAM traffic,
  // what a compute-bound and a memory-bound kernel's runtime grow with; instructions alone
  // where the model predicts no DRAM traffic), stands in for a
  // source's runtimes: the prior mean's shape (source_prior), the design pool (design_share)
  // and candidates (source_candidates), its feature (source_weight), and its lightest
  // configurations are tested first (work_first), judged by design_stop as a source's
  // fastest. The fitted factor b fades it where work does not rank the tuned GPU's runtimes.
  bool work_prior = false;
  std::uint64_t work_first = 0;  // with work_prior: the predicted lightest tested first, as source_first
  // With a source: this many of the predicted lightest (the work of work_prior) are tested
  // after the source's fastest, and count as the source's fastest for design_stop.
  std::uint64_t work_after_source = 0;
  // With a source, design_stop and a model that predicts work: where design_stop finds the
  // source's own fastest behind another of the first tests, the source is set aside and the
  // predicted work takes its place (prior mean, candidates and feature), as without a source.
  // A source's fastest that a random point or the predicted lightest beats ranks the tuned
  // space worse than the predicted work does: another input whose fastest misleads (gemm at
  // 128^3 for 4096^3), or a source recorded over a narrower space.
  bool work_replaces_beaten_source = false;
  // With a prior mean (source_prior): its fitted factor b is kept at 0 or above, so that a
  // prior the first measurements contradict fades instead of turning round. Turned round, a
  // shape's far tail becomes the best prediction: on nbody_h200, after three tests whose
  // lightest predicted was the slowest, b came out -1.5 to -2.5 and the heaviest predicted
  // configuration (10 standard deviations out, 50 times the best runtime) was chosen next.
  bool prior_fades = false;
  std::uint64_t initial_samples_without_prior = 0;  // where work_prior finds no work to rank by (0: initial_samples)
  // With reaction_draws > 0 (and a model): the first design point (after the source's fastest)
  // is profiled, and the expert
  // system's reaction to its bottlenecks draws that many of the initial samples (eq. 12, 13).
  std::uint64_t reaction_draws = 0;
  std::uint64_t reaction_draws_not_time = 0;  // the same when the objective is not time
  ExpertOptions expert;
  search::Normalisation normalisation;
  std::string name = "bayes";
};

// The searcher of `bayes` with these options; with_model: a counter model is loaded from
// options.model_path, and a source recording (`source`) and the model's settings are read.
// The settings of `options` override those of `bayes`, by their names in docs/searchers.md.
std::unique_ptr<Searcher> make_bayes(const SearcherOptions& options, BayesOptions bayes, bool with_model);

}  // namespace steer::search
