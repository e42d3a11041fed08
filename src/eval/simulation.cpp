// One simulated tuning run: the tuning loop itself, over a replayed recording.
#include <algorithm>
#include <atomic>

#include "steer/eval.hpp"

namespace steer {

SimulatedRun simulate_run(const Recording& recording, Searcher& searcher, const SimulationOptions& options) {
  const Space& space = recording.space();
  ReplayExecutor executor(recording, options.cost);
  TuneOptions tune_options;
  // A recording without a valid configuration never reaches the target.
  std::optional<double> target_ms;
  if (recording.best_runtime_ms()) target_ms = options.target * *recording.best_runtime_ms();
  // To a horizon, the run ends where both of its limits are passed: the loop's stop rules
  // end a run at the first one met, so the loop is told to stop after the test that passes
  // the later one.
  std::atomic<bool> horizon_passed{false};
  if (options.horizon) {
    tune_options.interrupt = &horizon_passed;
  } else {
    tune_options.stop.tests = std::min(space.size(), options.budget.value_or(space.size()));
    tune_options.stop.target_ms = target_ms;
  }
  tune_options.window = std::max<std::size_t>(options.ahead, 1);
  tune_options.keep_results = false;

  SimulatedRun run;
  std::optional<double> best_ms;
  tune_options.on_test = [&](const Result& result, const TuneProgress& progress) {
    run.tested.push_back(result.config_index);
    run.end_s.push_back(progress.elapsed_s);
    run.with_counters.push_back(progress.measured.counters);
    if (options.horizon && progress.tests >= options.horizon->tests && progress.elapsed_s >= options.horizon->seconds) {
      horizon_passed = true;
    }
    if (!result.ok()) return;
    // The recording's runtime of the configuration (the median of its launches, or the mean
    // where that is the tuner's recorded objective, as in Kernel Tuner caches).
    const double runtime = recording.runtime_ms(result.config_index);
    if (!best_ms || runtime < *best_ms) {
      best_ms = runtime;
      run.improvements.push_back({run.tested.size(), progress.elapsed_s, runtime});
    }
    if (target_ms && runtime <= *target_ms && !run.tests_to_target) {
      run.tests_to_target = run.tested.size();
    }
  };
  tune(space, executor, searcher, nullptr, tune_options);
  run.time_s = executor.clock_s();
  return run;
}

}  // namespace steer
