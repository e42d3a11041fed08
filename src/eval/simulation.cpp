// One simulated tuning run: the tuning loop itself, over a replayed recording.
#include <algorithm>

#include "steer/eval.hpp"

namespace steer {

SimulatedRun simulate_run(const Recording& recording, Searcher& searcher, const SimulationOptions& options) {
  const Space& space = recording.space();
  ReplayExecutor executor(recording, options.cost);
  TuneOptions tune_options;
  tune_options.stop.tests = std::min(space.size(), options.budget.value_or(space.size()));
  // A recording without a valid configuration never reaches the target.
  if (recording.best_runtime_ms()) tune_options.stop.target_ms = options.target * *recording.best_runtime_ms();
  tune_options.window = std::max<std::size_t>(options.ahead, 1);
  tune_options.keep_results = false;

  SimulatedRun run;
  std::optional<double> best_ms;
  tune_options.on_test = [&](const Result& result, const TuneProgress& progress) {
    run.tested.push_back(result.config_index);
    run.with_counters.push_back(progress.measured.counters);
    if (!result.ok()) return;
    if (!best_ms || result.time.median_ms < *best_ms) {
      best_ms = result.time.median_ms;
      run.improvements.push_back({run.tested.size(), progress.elapsed_s, result.time.median_ms});
    }
    if (tune_options.stop.target_ms && result.time.median_ms <= *tune_options.stop.target_ms && !run.tests_to_target) {
      run.tests_to_target = run.tested.size();
    }
  };
  tune(space, executor, searcher, nullptr, tune_options);
  run.time_s = executor.clock_s();
  return run;
}

}  // namespace steer
