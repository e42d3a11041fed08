// One simulated tuning run: the tuning loop itself, over a replayed recording.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "steer/error.hpp"
#include "steer/eval.hpp"

namespace steer {

std::vector<double> objective_values(const Recording& recording, const Objective& objective) {
  const std::uint64_t n = recording.space().size();
  std::vector<double> values(n, std::numeric_limits<double>::quiet_NaN());
  if (objective.kind() == Objective::Kind::Time) {
    for (ConfigIndex c = 0; c < n; ++c) {
      if (recording.status(c) == Status::Ok) values[c] = recording.runtime_ms(c);
    }
    return values;
  }
  if (objective.needs_flops()) {
    throw Error(fmt::format("objective {} cannot be replayed: a recording holds no FLOP count (at one size it "
                            "ranks configurations as energy does: use --objective energy)",
                            objective.name()));
  }
  ObjectiveBests bests;
  for (ConfigIndex c = 0; c < n; ++c) {
    if (const Result* result = recording.recorded(c)) bests.update(*result);
  }
  for (ConfigIndex c = 0; c < n; ++c) {
    const Result* result = recording.recorded(c);
    if (result && result->ok()) values[c] = objective.score(*result, bests);
  }
  return values;
}

SimulatedRun simulate_run(const Recording& recording, Searcher& searcher, const SimulationOptions& options) {
  const Space& space = recording.space();
  ReplayExecutor executor(recording, options.cost, options.devices);
  TuneOptions tune_options;
  tune_options.objective = options.objective;
  const std::vector<double> values = objective_values(recording, options.objective);
  // A recording without a configuration the objective can score never reaches the target.
  std::optional<double> target_ms;
  double best = std::numeric_limits<double>::infinity();
  for (double v : values) {
    if (v < best) best = v;
  }
  if (std::isfinite(best)) target_ms = options.target * best;
  // To a horizon, the run ends where both of its limits are passed: the loop's stop rules
  // end a run at the first one met, so the loop is told to stop after the test that passes
  // the later one.
  // The loop's target is a runtime; under another objective the run is told to stop after
  // the test that reaches the objective's target, in the same way.
  const bool time_objective = options.objective.kind() == Objective::Kind::Time;
  std::atomic<bool> stop_now{false};
  // On several devices the loop lets running tests finish after a stop rule; a run to the
  // target ends at the target instead, so that its time is the time to the target.
  const bool parallel = options.devices > 1;
  if (options.horizon || !time_objective || parallel) tune_options.interrupt = &stop_now;
  if (!options.horizon) {
    tune_options.stop.tests = std::min(space.size(), options.budget.value_or(space.size()));
    if (time_objective) tune_options.stop.target_ms = target_ms;
  }
  // The loop's window on a device: twice its compile streams (TuneOptions::window).
  const int threads = options.devices == 1 ? std::max(0, options.cost.compile_threads) : 0;
  tune_options.window = options.ahead > 0 ? options.ahead : std::max<std::size_t>(2 * static_cast<std::size_t>(threads), 1);
  tune_options.guesses = options.guesses;
  tune_options.keep_results = false;

  SimulatedRun run;
  std::optional<double> best_ms;
  tune_options.on_test = [&](const Result& result, const TuneProgress& progress) {
    run.tested.push_back(result.config_index);
    run.end_s.push_back(progress.elapsed_s);
    run.with_counters.push_back(progress.measured.counters);
    if (options.horizon && progress.tests >= options.horizon->tests && progress.elapsed_s >= options.horizon->seconds) {
      stop_now = true;
    }
    // The recording's runtime of the configuration (the median of its launches, or the mean
    // where that is the tuner's recorded objective, as in Kernel Tuner caches), or its
    // objective's value.
    const double runtime = values[result.config_index];
    if (!result.ok() || std::isnan(runtime)) return;
    if (!best_ms || runtime < *best_ms) {
      best_ms = runtime;
      run.improvements.push_back({run.tested.size(), progress.elapsed_s, runtime});
    }
    if (target_ms && runtime <= *target_ms && !run.tests_to_target) {
      run.tests_to_target = run.tested.size();
      if (!options.horizon && (!time_objective || parallel)) stop_now = true;
    }
  };
  tune_options.on_explanation = [&](const Explanation& e) { run.explanations.emplace_back(run.tested.size(), e); };
  tune(space, executor, searcher, nullptr, tune_options);
  run.time_s = executor.clock_s();
  return run;
}

}  // namespace steer
