// Repeated simulated runs per searcher, their statistics and best-so-far curves.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>

#include "steer/error.hpp"
#include "steer/eval.hpp"
#include "steer/model.hpp"

namespace steer {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// What evaluate() keeps of one run: the route only when asked for (it is the bulk).
struct RunOutcome {
  std::uint64_t tests = 0;
  std::optional<std::uint64_t> tests_to_target;
  double time_s = 0;
  std::vector<Improvement> improvements;
  std::vector<double> end_s;  // only for the performance score's runs
  std::vector<ConfigIndex> tested;
  std::vector<bool> with_counters;
  std::vector<std::pair<std::uint64_t, Explanation>> explanations;
};

// Calls work(i) for i in [0, n) on `threads` threads. Each i writes only its own slot, so
// the outcome does not depend on the thread count; the first exception is rethrown.
template <typename Work>
void parallel_for(std::uint64_t n, unsigned threads, Work&& work) {
  std::atomic<std::uint64_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&] {
    for (std::uint64_t i; (i = next.fetch_add(1)) < n;) {
      try {
        work(i);
      } catch (...) {
        std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = n;
      }
    }
  };
  std::vector<std::jthread> pool;
  for (unsigned t = 1; t < std::max(threads, 1u); ++t) pool.emplace_back(worker);
  worker();
  pool.clear();  // joins
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

std::map<std::string, std::string> settings_for(const std::string& searcher,
                                                const std::map<std::string, std::string>& settings) {
  std::map<std::string, std::string> mine;
  for (const auto& [name, value] : settings) {
    auto dot = name.find('.');
    if (dot == std::string::npos) {
      mine[name] = value;
    } else if (name.compare(0, dot, searcher) == 0) {
      mine[name.substr(dot + 1)] = value;
    }
  }
  return mine;
}

namespace {

// The fingerprint of the runtimes searchers must not transfer in a replay of `recording`: the
// model's, when the replay replays measurements the model was trained on (they are the
// answers); otherwise none.
std::string replayed_fingerprint(const Recording& recording, const std::string& model_path) {
  if (model_path.empty()) return {};
  const CounterModel model = CounterModel::load(model_path);
  return replays_training_measurements(recording, model) ? model.recorded_runtimes().fingerprint : std::string();
}

std::vector<RunOutcome> simulate_runs(const Recording& recording, const std::string& name,
                                      const EvaluationOptions& options, const std::string& replayed,
                                      std::optional<RunHorizon> horizon = std::nullopt) {
  std::vector<RunOutcome> outcomes(options.runs);
  const std::map<std::string, std::string> settings = settings_for(name, options.settings);
  SimulationOptions simulation = options.simulation;
  if (horizon) simulation.horizon = horizon;
  parallel_for(options.runs, options.threads, [&](std::uint64_t r) {
    SearcherOptions searcher_options{.seed = options.seed + r,
                                     .model_path = options.model_path,
                                     .settings = settings,
                                     .objective = simulation.objective.name(),
                                     .replayed = replayed};
    std::unique_ptr<Searcher> searcher = make_searcher(name, searcher_options);
    SimulatedRun run = simulate_run(recording, *searcher, simulation);
    outcomes[r] = {run.tested.size(), run.tests_to_target, run.time_s, std::move(run.improvements), {}, {}, {}, {}};
    if (horizon) outcomes[r].end_s = std::move(run.end_s);
    if (options.keep_routes) {
      outcomes[r].tested = std::move(run.tested);
      outcomes[r].with_counters = std::move(run.with_counters);
      outcomes[r].explanations = std::move(run.explanations);
    }
  });
  return outcomes;
}

// Mean and population standard deviation of best-so-far at each x, walking every run's
// step function once (xs ascending; position(improvement) is on the same axis). Welford's
// update: no cancellation, and exactly 0 spread when every run agrees.
template <typename Position>
std::vector<CurvePoint> best_so_far_curve(const std::vector<RunOutcome>& outcomes, const std::vector<double>& xs,
                                          Position&& position) {
  std::vector<CurvePoint> curve(xs.size());
  std::vector<double> squared_deviations(xs.size(), 0);
  for (const RunOutcome& outcome : outcomes) {
    std::size_t step = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      while (step < outcome.improvements.size() && position(outcome.improvements[step]) <= xs[i]) ++step;
      if (step == 0) continue;  // no valid test yet
      const double best = outcome.improvements[step - 1].best_ms;
      CurvePoint& point = curve[i];
      ++point.runs_with_valid;
      const double delta = best - point.mean_best_ms;
      point.mean_best_ms += delta / static_cast<double>(point.runs_with_valid);
      squared_deviations[i] += delta * (best - point.mean_best_ms);
    }
  }
  for (std::size_t i = 0; i < xs.size(); ++i) {
    curve[i].x = xs[i];
    if (curve[i].runs_with_valid > 0) {
      curve[i].std_best_ms = std::sqrt(squared_deviations[i] / static_cast<double>(curve[i].runs_with_valid));
    }
  }
  return curve;
}

SearcherEvaluation summarise(const std::string& name, std::vector<RunOutcome>&& outcomes,
                             std::size_t time_points) {
  SearcherEvaluation e;
  e.name = name;
  e.runs = outcomes.size();
  std::vector<double> tests;
  double time_sum = 0;
  for (const RunOutcome& outcome : outcomes) {
    if (!outcome.tests_to_target) continue;
    tests.push_back(static_cast<double>(*outcome.tests_to_target));
    time_sum += outcome.time_s;
  }
  e.failed_runs = e.runs - tests.size();
  TestStatistics statistics = test_statistics(std::move(tests));
  e.mean_tests = statistics.mean;
  e.median_tests = statistics.median;
  e.p90_tests = statistics.p90;
  e.mean_time_s = e.failed_runs == e.runs ? kNaN : time_sum / static_cast<double>(e.runs - e.failed_runs);

  std::uint64_t longest = 0;
  double slowest_s = 0;
  for (const RunOutcome& outcome : outcomes) {
    longest = std::max(longest, outcome.tests);
    slowest_s = std::max(slowest_s, outcome.time_s);
  }
  std::vector<double> test_numbers(longest);
  for (std::uint64_t i = 0; i < longest; ++i) test_numbers[i] = static_cast<double>(i + 1);
  e.by_test = best_so_far_curve(outcomes, test_numbers,
                                [](const Improvement& step) { return static_cast<double>(step.test); });
  std::vector<double> seconds(std::max<std::size_t>(time_points, 2));
  for (std::size_t i = 0; i < seconds.size(); ++i) {
    seconds[i] = slowest_s * static_cast<double>(i) / static_cast<double>(seconds.size() - 1);
  }
  e.by_time = best_so_far_curve(outcomes, seconds, [](const Improvement& step) { return step.time_s; });
  e.per_run.reserve(outcomes.size());
  for (RunOutcome& outcome : outcomes) {
    e.per_run.push_back({outcome.tests, outcome.tests_to_target, outcome.time_s, std::move(outcome.tested),
                         std::move(outcome.with_counters), std::move(outcome.explanations)});
  }
  return e;
}

// "Kernel Tuner 1.5.0" and "genetic_algorithm" -> "kernel_tuner:genetic_algorithm".
std::string external_name(const std::string& tool, const std::string& strategy) {
  std::string prefix;
  for (char c : tool) {
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') break;
    prefix += c == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  while (!prefix.empty() && prefix.back() == '_') prefix.pop_back();
  return (prefix.empty() ? std::string("external") : prefix) + ":" + strategy;
}

}  // namespace

TestStatistics test_statistics(std::vector<double> tests) {
  if (tests.empty()) return {kNaN, kNaN, kNaN};
  std::sort(tests.begin(), tests.end());
  const std::size_t n = tests.size();
  double sum = 0;
  for (double t : tests) sum += t;
  TestStatistics statistics;
  statistics.mean = sum / static_cast<double>(n);
  statistics.median = n % 2 == 1 ? tests[n / 2] : (tests[n / 2 - 1] + tests[n / 2]) / 2;
  statistics.p90 = tests[static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(n))) - 1];
  return statistics;
}

Evaluation evaluate(const Recording& recording, const std::vector<std::string>& searchers,
                    const EvaluationOptions& options) {
  if (!recording.best_runtime_ms()) {
    throw Error(fmt::format("the recording has no valid configuration ({} recorded, none with status ok)",
                            recording.present_count()));
  }
  if (searchers.empty()) throw Error("no searcher to evaluate");
  // A setting for a searcher that is not evaluated would be dropped without a word: refuse it
  // (e.g. surrogate.popsize when `default` runs: that is default.popsize).
  for (const auto& [name, value] : options.settings) {
    const auto dot = name.find('.');
    if (dot == std::string::npos) continue;
    const std::string prefix = name.substr(0, dot);
    if (std::find(searchers.begin(), searchers.end(), prefix) == searchers.end()) {
      throw Error(fmt::format("setting {}={} is for searcher '{}', which is not evaluated here ({}); a searcher "
                              "takes SEARCHER.NAME settings under the name it is evaluated as",
                              name, value, prefix, fmt::join(searchers, ", ")));
    }
  }
  // Unknown names and bad settings fail here, before any run (names listing the known ones).
  const std::string replayed = replayed_fingerprint(recording, options.model_path);
  for (const std::string& name : searchers) {
    make_searcher(name, SearcherOptions{.seed = options.seed,
                                        .model_path = options.model_path,
                                        .settings = settings_for(name, options.settings),
                                        .objective = options.simulation.objective.name(),
                                        .replayed = replayed});
  }

  const std::vector<double> values = objective_values(recording, options.simulation.objective);
  std::vector<double> scorable;
  for (double v : values) {
    if (std::isfinite(v)) scorable.push_back(v);
  }
  if (scorable.empty()) {
    throw Error(fmt::format("no configuration of the recording can be scored under objective {} (energy "
                            "recorded for none of the valid ones)",
                            options.simulation.objective.name()));
  }
  if (!options.external.empty() && options.simulation.objective.kind() != Objective::Kind::Time) {
    throw Error("runs of other tools are scored on runtimes: they cannot be scored under objective " +
                options.simulation.objective.name());
  }

  Evaluation evaluation;
  evaluation.objective = options.simulation.objective.name();
  evaluation.best_ms = *std::min_element(scorable.begin(), scorable.end());
  evaluation.target_ms = options.simulation.target * evaluation.best_ms;
  evaluation.configs = recording.space().size();
  evaluation.valid = recording.valid_count();
  for (const std::string& name : searchers) {
    evaluation.searchers.push_back(
        summarise(name, simulate_runs(recording, name, options, replayed), options.time_points));
  }
  if (options.score) {
    // Runs of their own, with the same seeds, that go on past the target to the end cut-offs
    // of both axes: the runs above stop at the target and keep their figures.
    const RandomSearchBaseline baseline(std::move(scorable));
    MeasureRequest measured;
    measured.energy = options.simulation.objective.needs_energy();
    const ScoreCutoffs cutoffs = score_cutoffs(
        baseline, space_test_costs(recording, options.simulation.cost, measured), options.score_settings);
    evaluation.score = cutoffs;
    const RunHorizon horizon{.tests = cutoffs.end_tests, .seconds = cutoffs.end_s};
    EvaluationOptions score_options = options;
    score_options.keep_routes = false;
    for (SearcherEvaluation& e : evaluation.searchers) {
      std::vector<RunTrace> runs;
      for (RunOutcome& outcome : simulate_runs(recording, e.name, score_options, replayed, horizon)) {
        runs.push_back(trace_of(outcome.end_s, outcome.improvements));
      }
      e.score = score_runs(baseline, cutoffs, runs);
    }
    for (const ExternalRuns& external : options.external) {
      for (const auto& [strategy, runs] : external.strategies) {
        if (runs.empty()) continue;
        std::vector<RunOutcome> outcomes;
        std::vector<RunTrace> traces;
        for (const std::vector<ExternalTest>& tests : runs) {
          RunOutcome outcome;
          outcome.tests = tests.size();
          outcome.time_s = tests.empty() ? 0 : tests.back().time_s;
          outcome.improvements = improvements_of(tests);
          for (std::size_t i = 0; i < tests.size(); ++i) {
            if (tests[i].runtime_ms <= evaluation.target_ms) {
              outcome.tests_to_target = i + 1;
              outcome.time_s = tests[i].time_s;
              break;
            }
          }
          traces.push_back(trace_of(tests));
          outcomes.push_back(std::move(outcome));
        }
        SearcherEvaluation e = summarise(external_name(external.tool, strategy), std::move(outcomes),
                                         options.time_points);
        e.score = score_runs(baseline, cutoffs, traces);
        evaluation.searchers.push_back(std::move(e));
      }
    }
  }

  const std::string baseline = "random";
  auto random = std::find_if(evaluation.searchers.begin(), evaluation.searchers.end(),
                             [&](const SearcherEvaluation& e) { return e.name == baseline; });
  // Random search run only as the baseline gets none of the settings meant for the others.
  EvaluationOptions baseline_options = options;
  baseline_options.settings.clear();
  double random_mean = random != evaluation.searchers.end()
                           ? random->mean_tests
                           : summarise(baseline, simulate_runs(recording, baseline, baseline_options, replayed), 2)
                                 .mean_tests;
  if (!std::isnan(random_mean)) {
    for (SearcherEvaluation& e : evaluation.searchers) {
      if (!std::isnan(e.mean_tests)) e.ratio_to_random = e.mean_tests / random_mean;
    }
  }
  return evaluation;
}

}  // namespace steer
