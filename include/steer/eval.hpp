#pragma once
// Simulated tuning: searchers replayed against a Recording many times, counting the tests
// (and simulated seconds) until the first well-performing configuration (method.md §1, §8).
//
//   steer::Recording recording = steer::Recording::load("pnpoly_rtx2080ti.ktt.json.gz");
//   steer::EvaluationOptions options;          // 1,000 runs, target 1.1x the best
//   steer::Evaluation e = steer::evaluate(recording, {"random", "exhaustive"}, options);
//   e.searchers[0].mean_tests;
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "steer/objective.hpp"
#include "steer/replay.hpp"
#include "steer/searcher.hpp"

namespace steer {

// What one simulated test costs: compile time + runtime x repetitions, plus, when counters
// are asked for, the recorded time of collecting them (Result::profiling_ms of a recording
// made with counters) or else profiling_passes x (runtime + pass_overhead_ms) (CUPTI replays
// the kernel once per pass, ~12.5 ms of overhead each on the H200: docs/h200.md), plus the energy
// window when energy is asked for. Failed tests cost their compile time; a Skipped test
// (not in the recording, or recorded as removed by a constraint) costs nothing.
struct CostModel {
  int repetitions = 1;            // timed launches per test; Kernel Tuner's simulations count one
  int profiling_passes = 5;       // the full counter set on the H200
  double pass_overhead_ms = 12.5;
};
double test_cost_ms(const Recording& recording, ConfigIndex config, const MeasureRequest& measure,
                    const CostModel& cost);

struct SimulationOptions {
  double target = 1.1;                  // well-performing: runtime <= target x the best valid runtime
  std::optional<std::uint64_t> budget;  // tests per run; unset: the whole space
  // Proposals asked for at a time, as the loop does with its compile-ahead window (TuneOptions:
  // 2 x compile threads, or 1 without compiling ahead). 1 is a strictly sequential search.
  std::size_t ahead = 1;
  CostModel cost;
};

// A point where a run's best-so-far valid runtime improved.
struct Improvement {
  std::uint64_t test = 0;  // 1-based test number
  double time_s = 0;       // simulated seconds up to and including that test
  double best_ms = 0;
};

struct SimulatedRun {
  std::vector<ConfigIndex> tested;              // in order, as the loop would run them
  std::vector<bool> with_counters;              // per test: the searcher asked for counters
  std::optional<std::uint64_t> tests_to_target; // unset: the target was never reached
  double time_s = 0;                            // simulated seconds until the run stopped
  std::vector<Improvement> improvements;        // best-so-far, a step function
};

// One run, driving `searcher` exactly as steer::tune does (same proposal window, "empty while
// results are pending means wait", same stop rules) against the recording, stopping at the
// first well-performing configuration or when the budget is spent (a recording without a
// valid configuration never reaches the target). Calls searcher.start().
SimulatedRun simulate_run(const Recording& recording, Searcher& searcher, const SimulationOptions& options);

// Statistics of tests-to-target over the runs that reached the target; NaN for no runs.
// median: the mean of the middle two for an even count; p90: nearest rank, the
// ceil(0.9 n)-th smallest value.
struct TestStatistics {
  double mean = 0, median = 0, p90 = 0;
};
TestStatistics test_statistics(std::vector<double> tests);

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
};

struct Evaluation {
  double best_ms = 0, target_ms = 0;
  std::uint64_t configs = 0, valid = 0;  // configurations in the space; valid ones
  std::vector<SearcherEvaluation> searchers;
};

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

}  // namespace steer
