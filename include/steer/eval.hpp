#pragma once
// Simulated tuning: searchers replayed against a Recording many times, counting the tests
// (and simulated seconds) until the first well-performing configuration (method.md §1, §8),
// and scoring them against the calculated random-search baseline (the performance score P).
//
//   steer::Recording recording = steer::Recording::load("pnpoly_rtx2080ti.ktt.json.gz");
//   steer::EvaluationOptions options;          // 1,000 runs, target 1.1x the best
//   steer::Evaluation e = steer::evaluate(recording, {"random", "exhaustive"}, options);
//   e.searchers[0].mean_tests;
//   options.score = true;                      // also P, over tests and simulated time
//   steer::evaluate(recording, {"genetic"}, options).searchers[0].score.fevals;
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "steer/objective.hpp"
#include "steer/recording.hpp"
#include "steer/searcher.hpp"
#include "steer/tuner.hpp"

namespace steer {

// How far a run of the performance score goes (SimulationOptions::horizon).
struct RunHorizon {
  std::uint64_t tests = 0;
  double seconds = 0;  // simulated
};

struct SimulationOptions {
  double target = 1.1;                  // well-performing: runtime <= target x the best valid runtime
  std::optional<std::uint64_t> budget;  // tests per run; unset: the whole space
  // Proposals asked for at a time (TuneOptions::window): what the loop asks for with its
  // compile-ahead window on a device. 1 is a strictly sequential search; 0 the loop's own,
  // twice cost.compile_threads (1 without them).
  std::size_t ahead = 0;
  // Devices tuned on at once (ReplayExecutor's simulated devices): the runs go as they would
  // on that many devices of the recording's kind, and their time is the simulated clock's.
  std::size_t devices = 1;
  // The searcher's likely next proposals compiled on idle compile streams
  // (TuneOptions::guesses; none with one stream).
  std::size_t guesses = TuneOptions{}.guesses;
  CostModel cost;
  // Unset: a run stops at the first well-performing configuration (what tests-to-target
  // counts) or when the budget is spent. Set (the runs of the performance score): neither
  // the target nor the budget stops it; it goes on until it has made horizon->tests tests
  // and its simulated clock has reached horizon->seconds, both, or until the space or the
  // searcher is exhausted. tests_to_target still records where it first reached the target.
  std::optional<RunHorizon> horizon;
  // What the runs optimise. The loop ranks tests by it (and measures energy on each when
  // it needs energy), and the best-so-far, the target and P are of its values over the
  // recording (objective_values), not of runtimes.
  Objective objective;
};

// The objective's value of every configuration of the recording, lower is better, NaN for
// those it cannot score (not valid; no energy where it needs energy). A weighted
// objective is normalised by the best time and the least energy over the whole recording,
// so every run is scored on the same scale. Time: the recorded runtimes. Throws Error for
// gflops-per-watt (a recording holds no FLOP count; at one size it ranks as energy does).
std::vector<double> objective_values(const Recording& recording, const Objective& objective);

// A point where a run's best-so-far valid runtime (its objective's value, under another
// objective) improved.
struct Improvement {
  std::uint64_t test = 0;  // 1-based test number
  double time_s = 0;       // simulated seconds up to and including that test
  double best_ms = 0;
};

struct SimulatedRun {
  std::vector<ConfigIndex> tested;              // in order, as the loop would run them
  std::vector<double> end_s;                    // per test: simulated seconds at its end
  std::vector<bool> with_counters;              // per test: the searcher asked for counters
  std::optional<std::uint64_t> tests_to_target; // unset: the target was never reached
  double time_s = 0;                            // simulated seconds until the run stopped
  std::vector<Improvement> improvements;        // best-so-far, a step function
  // The searcher's explanations, each with the number of tests made when it was given.
  std::vector<std::pair<std::uint64_t, Explanation>> explanations;
};

// One run of steer::tune with a ReplayExecutor: `searcher` over the recording's space,
// stopping at the first well-performing configuration or when the budget is spent (a
// recording without a valid configuration never reaches the target), or at the horizon
// when one is set. Calls searcher.start().
SimulatedRun simulate_run(const Recording& recording, Searcher& searcher, const SimulationOptions& options);

// Statistics of tests-to-target over the runs that reached the target; NaN for no runs.
// median: the mean of the middle two for an even count; p90: nearest rank, the
// ceil(0.9 n)-th smallest value.
struct TestStatistics {
  double mean = 0, median = 0, p90 = 0;
};
TestStatistics test_statistics(std::vector<double> tests);

// ---- The performance score P (Willemsen et al., "A methodology for comparing optimization
// algorithms for auto-tuning", FGCS 2024, and its package autotuning-methodology 1.1.0;
// docs/simulate.md "The performance score P") ----

// The methodology's settings, named as in the package's statistics settings.
struct ScoreSettings {
  double end_percentile = 0.95;    // cutoff_percentile
  double start_percentile = 0.01;  // cutoff_percentile_start
  std::size_t time_points = 1000;  // resolution: points of the time axis P is averaged over
  // The test axis takes every whole number of tests between the cut-offs, at most this many
  // (equidistant, rounded, beyond).
  std::size_t max_test_points = 1000;
};

// The calculated random-search baseline without replacement: the runtime that the best of
// M distinct uniformly drawn valid configurations has, as the expected index in the valid
// runtimes sorted worst first, dist[0] the worst .. dist[N-1] the optimum:
// index(M) = min(N-1, round(M (N+1) / (M+1))), rounded half to even (Python's round).
class RandomSearchBaseline {
 public:
  // The valid runtimes of a space, in any order. Throws Error when there is none or one is
  // not a finite number.
  explicit RandomSearchBaseline(std::vector<double> valid_runtimes_ms);
  // The recording's valid runtimes (status ok); throws Error when it has none.
  static RandomSearchBaseline of(const Recording& recording);

  std::size_t size() const noexcept { return worst_first_.size(); }  // N
  const std::vector<double>& worst_first() const noexcept { return worst_first_; }
  double worst_ms() const noexcept { return worst_first_.front(); }
  double optimum_ms() const noexcept { return worst_first_.back(); }
  double median_ms() const noexcept;  // of the valid runtimes (the mean of the middle two)
  std::size_t index(std::uint64_t evaluations) const noexcept;  // evaluations 0 counts as 1
  double runtime_ms(std::uint64_t evaluations) const noexcept { return worst_first_[index(evaluations)]; }
  // The smallest M with runtime_ms(M) <= runtime; throws Error when runtime < the optimum.
  std::uint64_t evaluations_to_reach(double runtime) const;
  // The methodology's cut-off: the tests random search needs, ceil(i / (N + 1 - i)), to reach
  // the first runtime (worst first, index i) within optimum + (median - optimum) x (1 -
  // percentile), one index earlier when that is the optimum itself (percentile < 1).
  std::uint64_t cutoff_tests(double percentile) const;
  // Where a runtime ranks among the valid ones, best first (0: the optimum or faster; the
  // first of equal runtimes), as the package's get_indices_in_distribution.
  std::size_t best_first_rank(double runtime_ms) const noexcept;
  double runtime_at_rank(std::size_t best_first) const noexcept {
    return worst_first_[worst_first_.size() - 1 - std::min(best_first, worst_first_.size() - 1)];
  }

 private:
  std::vector<double> worst_first_;
};

// What a test costs over a space (test_cost_ms with plain timing, over every present
// configuration that is not recorded as skipped), as the package counts it: per_test_ms is
// the mean over the valid ones plus the fraction that failed times the mean over the failed
// ones (its "mean per feval": the baseline's time per test); median_ms over all of them
// (the cut-offs' time per test). NaN when there is none.
struct SpaceTestCosts {
  double per_test_ms = 0, median_ms = 0;
  RecordedCosts recorded;  // which costs came from the recording, which are typical ones
};
// `measured`: what every test measures beyond timing (an energy objective's window).
SpaceTestCosts space_test_costs(const Recording& recording, const CostModel& cost, const MeasureRequest& measured = {});

// P(x) = (baseline - best_found) / (baseline - optimum), and 0 where baseline == optimum:
// 0 is random search, 1 the optimum, below 0 worse than random.
double performance_score(double baseline_ms, double best_found_ms, double optimum_ms) noexcept;

// Where the score is taken, as the methodology does: from start_tests = cutoff_tests(start
// percentile) to end_tests = cutoff_tests(end percentile) on the test axis (at least two
// tests apart), and from start_tests x to end_tests x the median test cost on the time axis.
struct ScoreCutoffs {
  ScoreSettings settings;
  double test_cost_ms = 0;         // SpaceTestCosts::per_test_ms
  double median_test_cost_ms = 0;  // SpaceTestCosts::median_ms
  std::uint64_t start_tests = 1, end_tests = 2;
  double start_s = 0, end_s = 0;
};
ScoreCutoffs score_cutoffs(const RandomSearchBaseline& baseline, const SpaceTestCosts& costs,
                           const ScoreSettings& settings = {});

// A searcher's score: P at each point of both axes and their means. NaN and empty when
// not computed.
struct PerformanceScore {
  double fevals = std::numeric_limits<double>::quiet_NaN();  // mean of fevals_curve
  double time = std::numeric_limits<double>::quiet_NaN();    // mean of time_curve
  std::vector<double> fevals_x, fevals_curve;                // x: tests
  std::vector<double> time_x, time_curve;                    // x: simulated seconds
};

// One run as the score reads it: per test, in order, the seconds at its end and the best
// valid runtime found so far (NaN before the first valid test).
struct RunTrace {
  std::vector<double> end_s, best_ms;
};
// From a run's test end times and its best-so-far step function.
RunTrace trace_of(const std::vector<double>& end_s, const std::vector<Improvement>& improvements);

// The score of a searcher from its runs, estimated as the methodology's package does, on
// ranks among the valid runtimes (best first):
//   tests: at each number of tests, the mean over runs of the rank of the best found so far
//     (a run's length counted up to the end cut-off, runs shorter than the median of those
//     are left out);
//   time: decreasing isotonic regressions through every run's (end of test, rank of the
//     best so far) pooled, within 10 % beyond the cut-offs, bagged (max(runs, 3) of them,
//     each on n / sqrt(that) points drawn from a fixed seed), read at each point and held
//     from where half the runs have ended; the baseline after x / test_cost tests,
//     interpolated between whole numbers of tests monotonically (PCHIP).
// scripts/bench/methodology_cross_check.py compares the result with the package's.
// Throws Error for no runs.
PerformanceScore score_runs(const RandomSearchBaseline& baseline, const ScoreCutoffs& cutoffs,
                            const std::vector<RunTrace>& runs);

// Runs made by another tool (steer simulate --score-runs; scripts/bench/
// kerneltuner_strategies.py writes them): per strategy, per run, every test in the order
// made, with the seconds elapsed at its end and its runtime (NaN: failed).
struct ExternalTest {
  double time_s = 0;
  double runtime_ms = 0;
};
struct ExternalRuns {
  std::string tool, data;
  std::vector<std::pair<std::string, std::vector<std::vector<ExternalTest>>>> strategies;
};
// Reads the JSON file {"tool", "data", "strategies": {NAME: [{"tests": [[s, ms|null], ...]}, ...]}}.
// Throws Error naming the file and what is wrong.
ExternalRuns read_external_runs(const std::filesystem::path& file);
// The best-so-far step function of one such run, and its trace.
std::vector<Improvement> improvements_of(const std::vector<ExternalTest>& tests);
RunTrace trace_of(const std::vector<ExternalTest>& tests);

// The score over several spaces: per searcher, the mean and the standard deviation over
// spaces of each space's P, and the mean P curve over the relative budget (each space's
// points from its start to its end cut-off, 0 to 1), the methodology's aggregate plot.
struct AggregateScore {
  std::string name;
  std::size_t spaces = 0;
  double fevals = 0, fevals_spread = 0, time = 0, time_spread = 0;
  std::vector<double> fevals_curve, time_curve;  // at equidistant fractions of the budget
};

// ---- Evaluations ----------------------------------------------------------------------

struct EvaluationOptions {
  SimulationOptions simulation;
  std::uint64_t runs = 1000;
  std::uint64_t seed = 1;   // run r uses seed + r
  unsigned threads = 1;     // results do not depend on it
  std::string model_path;   // SearcherOptions::model_path
  // SearcherOptions::settings: NAME=VALUE for every searcher evaluated, SEARCHER.NAME=VALUE
  // for that searcher only (settings_for).
  std::map<std::string, std::string> settings;
  std::size_t time_points = 100;  // resolution of the best-vs-time curve
  // Keep every run's route (RunSummary::tested, with_counters): what `steer simulate --trace`
  // writes, to see where a searcher went in the runs that took long.
  bool keep_routes = false;
  // Also compute the performance score P of every searcher (SearcherEvaluation::score):
  // from runs of their own (the same seeds) that go on past the target to the score's end
  // cut-offs, so every other figure is the same with it as without.
  bool score = false;
  ScoreSettings score_settings;
  // Runs of other tools on this recording, scored beside the searchers (as searchers
  // named "TOOL_STRATEGY"; they have no tests-to-target figures of Steer's own).
  std::vector<ExternalRuns> external;
};

// Mean and standard deviation, over runs, of the best valid runtime found so far. Runs
// with no valid test yet are left out (counted in runs_with_valid); a run that stopped
// keeps its last best, so the curve describes the search for a well-performing
// configuration, not for the optimum (use target 1 for that).
struct CurvePoint {
  double x = 0;  // test number, or simulated seconds
  std::uint64_t runs_with_valid = 0;
  double mean_best_ms = 0, std_best_ms = 0;
};

// What evaluate() keeps of one run, for the distribution of tests-to-target.
struct RunSummary {
  std::uint64_t tests = 0;                       // tests the run made
  std::optional<std::uint64_t> tests_to_target;  // unset: the run failed (budget spent)
  double time_s = 0;                             // simulated seconds until the run stopped
  // Only with EvaluationOptions::keep_routes: the configurations in the order tested, and
  // whether each test asked for counters (the profile-based searcher's profiled tests).
  std::vector<ConfigIndex> tested;
  std::vector<bool> with_counters;
  std::vector<std::pair<std::uint64_t, Explanation>> explanations;  // SimulatedRun::explanations
};

struct SearcherEvaluation {
  std::string name;
  std::uint64_t runs = 0, failed_runs = 0;  // failed: never reached the target
  // Over the runs that reached the target (NaN when none did). p90: nearest rank.
  double mean_tests = 0, median_tests = 0, p90_tests = 0;
  double mean_time_s = 0;                   // simulated seconds to the target
  std::optional<double> ratio_to_random;    // mean_tests / random search's mean_tests
  std::vector<CurvePoint> by_test;          // x = 1 .. the longest run's tests
  std::vector<CurvePoint> by_time;          // x evenly spaced up to the longest run's time
  std::vector<RunSummary> per_run;          // run r (seed + r) at index r
  PerformanceScore score;                   // with EvaluationOptions::score
};

struct Evaluation {
  // Of the objective's values (SimulationOptions::objective; milliseconds for time).
  double best_ms = 0, target_ms = 0;
  std::string objective = "time";  // Objective::name()
  std::uint64_t configs = 0, valid = 0;  // configurations in the space; valid ones
  std::optional<ScoreCutoffs> score;     // with EvaluationOptions::score
  std::vector<SearcherEvaluation> searchers;
};

// The performance score of each searcher over several evaluations (one per space), for
// the searchers scored in every one of them, in the first one's order; curves at `points`
// equidistant fractions of each space's budget. Throws Error when an evaluation was not
// scored.
std::vector<AggregateScore> aggregate_scores(const std::vector<const Evaluation*>& spaces, std::size_t points = 100);

// ---- Statistics of a recorded space (steer report) ------------------------------------

// A histogram of runtimes: counts[b] values in [edges[b], edges[b+1]), the last bin closed
// at the maximum. Equal-width bins from the minimum to the maximum, or, when the maximum is
// more than 10x the minimum, equal width in log10 (logarithmic = true). One bin of zero
// width when every value is the same.
struct Histogram {
  std::vector<double> edges;          // bins + 1, ascending
  std::vector<std::uint64_t> counts;  // bins
  bool logarithmic = false;
};
// `bins` unset: ceil(sqrt(n)) clamped to 5..60, never more than n. NaNs are ignored; throws
// Error when no value is left. Logarithmic bins only when the minimum is positive.
Histogram runtime_histogram(const std::vector<double>& values, std::optional<std::size_t> bins = std::nullopt);

// pareto_optimal(): steer/objective.hpp.

// The settings one searcher gets from an evaluation's: the unscoped ones, and those scoped
// to it ("profile-based.compute_bound" -> "compute_bound"); other searchers' are left out.
std::map<std::string, std::string> settings_for(const std::string& searcher,
                                                const std::map<std::string, std::string>& settings);

// Evaluates each searcher (by registry name) over options.runs runs. Random search is run
// as well (not listed) when absent, for ratio_to_random. Throws Error for an unknown
// searcher or a recording without a valid configuration.
Evaluation evaluate(const Recording& recording, const std::vector<std::string>& searchers,
                    const EvaluationOptions& options);

// ---- Simulations as files (steer simulate writes them, steer report reads them) --------

// An evaluation and what it was run on.
struct SimulationReport {
  std::string data;                  // the recording simulated on
  std::string kernel, device;
  double target = 1.1;
  std::uint64_t runs = 0, seed = 1;
  std::optional<std::uint64_t> budget;
  int repetitions = 0;  // timed launches costed per test; 0: as recorded
  int compile_threads = 0;  // CostModel::compile_threads of the replay
  std::size_t guesses = 0;  // SimulationOptions::guesses of the replay
  std::string compile_times = "recorded";  // CostModel::compile_times of the replay: recorded or mean
  std::optional<std::size_t> left_out_without_counters;  // steer simulate --with-counters
  std::optional<std::size_t> left_out_without_energy;    // steer simulate --objective needing energy
  Evaluation evaluation;
};

// JSON: the summary per searcher (with the performance score on both axes, null when not
// computed, and the score's cut-offs); with `details`, also every run's tests to the target,
// the best-so-far curves (what steer report plots) and the score's curves. NaN is written
// as null.
void write_simulation_json(std::ostream& out, const SimulationReport& simulation, bool details);
// Reads what write_simulation_json wrote with details. Throws Error naming the file and
// what it lacks.
SimulationReport read_simulation_json(const std::filesystem::path& file);
// Several spaces: {"spaces": [what write_simulation_json writes, ...], "aggregate": [per
// searcher scored in every space: the mean and spread over spaces of P on both axes, and
// with details the mean P curves over the fraction of the budget]}.
void write_simulations_json(std::ostream& out, const std::vector<SimulationReport>& simulations, bool details);
// Reads either form: one space, or several.
std::vector<SimulationReport> read_simulations_json(const std::filesystem::path& file);
// The best-so-far curves in long format: searcher,axis,x,runs_with_valid,mean_best_ms,std_best_ms.
void write_convergence_csv(std::ostream& out, const Evaluation& evaluation);
// Every test of every run (needs EvaluationOptions::keep_routes): searcher, run, seed,
// test, with_counters, status, runtime_ms, objective (its value, under an objective other
// than time), well_performing, config, and explanation: what the searcher concluded after
// that test (describe(); empty for most tests). Run r used seed + r.
void write_trace_csv(std::ostream& out, const Evaluation& evaluation, const Recording& recording,
                     std::uint64_t seed);

// ---- Reports (steer report) --------------------------------------------------------------

// What a report shows: a recorded space (the file and the recording laid over its own
// space), a simulation, or both.
struct ReportInput {
  std::string source;                              // the recording's file, as named to the user
  const ImportedRecording* imported = nullptr;     // with recording
  const Recording* recording = nullptr;
  const SimulationReport* simulation = nullptr;
  // A simulation over several spaces (steer simulate with several --data): the performance
  // score aggregated over them.
  const std::vector<SimulationReport>* spaces = nullptr;
  // What `steer tune --explain-to FILE` wrote: the run's tests and the searcher's
  // explanations, drawn as the tests with the profiled ones and their consequences marked.
  std::filesystem::path explanations;
};

struct ReportOptions {
  std::filesystem::path out;               // created
  std::string title;                       // empty: kernel on device
  std::optional<std::size_t> bins;         // of the runtime histogram (runtime_histogram)
  bool plots = true;                       // draw PNG and SVG with scripts/report/plot_report.py
  std::string python;                      // interpreter with matplotlib; empty: python3 on PATH
};

// Writes the data behind every plot as CSV, summary tables, index.html and, with plots,
// the plots (Python and matplotlib draw them; C++ computes everything). Returns how many
// plots it describes. Throws Error naming what could not be written or run.
std::size_t write_report(const ReportInput& input, const ReportOptions& options);

}  // namespace steer
