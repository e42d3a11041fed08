// One simulated tuning run: a searcher driven against a Recording the way steer::tune
// drives it against a device, minus everything that costs real time.
#include <algorithm>
#include <cmath>
#include <deque>
#include <utility>

#include "steer/eval.hpp"

namespace steer {

double test_cost_ms(const Recording& recording, ConfigIndex config, const MeasureRequest& measure,
                    const CostModel& cost) {
  if (recording.status(config) == Status::Skipped) return 0;  // nothing was compiled or run
  double ms = recording.compile_ms(config);
  const double runtime = recording.runtime_ms(config);
  if (std::isnan(runtime)) return ms;  // failed before a launch was timed
  ms += runtime * cost.repetitions;
  if (measure.counters) {
    // What collecting the counters took when it was recorded (compute-heavy kernels pay far
    // more than the model in the SASS-patched pass); the model where it was not.
    const Result* recorded = recording.recorded(config);
    if (recorded && recorded->profiling_passes > 0 && recorded->profiling_ms > 0) {
      ms += recorded->profiling_ms;
    } else {
      ms += cost.profiling_passes * (runtime + cost.pass_overhead_ms);
    }
  }
  if (measure.energy) ms += measure.energy_window_s * 1e3;
  return ms;
}

SimulatedRun simulate_run(const Recording& recording, Searcher& searcher, const SimulationOptions& options) {
  const Space& space = recording.space();
  const std::uint64_t planned = std::min(space.size(), options.budget.value_or(space.size()));
  const double target_ms = options.target * recording.best_runtime_ms().value_or(0);
  const std::size_t ahead = std::max<std::size_t>(options.ahead, 1);

  SimulatedRun run;
  std::deque<Proposal> pipeline;
  bool searcher_done = false;
  std::optional<double> best_ms;
  double elapsed_ms = 0;
  searcher.start(space);
  while (run.tested.size() < planned) {
    // Refill as Loop::refill does: never more than the window or the budget left; an empty
    // answer with nothing pending ends the search, with proposals pending it means "wait".
    const std::uint64_t tests = run.tested.size();
    if (!searcher_done) {
      std::uint64_t budget_left = planned - std::min<std::uint64_t>(planned, tests + pipeline.size());
      std::size_t want = std::min<std::uint64_t>(ahead - std::min(ahead, pipeline.size()), budget_left);
      if (want > 0) {
        std::vector<Proposal> proposals = searcher.propose(want);
        if (proposals.empty() && pipeline.empty()) searcher_done = true;
        pipeline.insert(pipeline.end(), proposals.begin(), proposals.end());
      }
    }
    if (pipeline.empty()) break;
    const Proposal proposal = std::move(pipeline.front());
    pipeline.pop_front();

    if (const Result* recorded = recording.recorded(proposal.config)) {
      searcher.observe(*recorded);
    } else {
      searcher.observe(recording.replay(proposal.config));
    }
    run.tested.push_back(proposal.config);
    run.with_counters.push_back(proposal.measure.counters);
    elapsed_ms += test_cost_ms(recording, proposal.config, proposal.measure, options.cost);
    if (recording.status(proposal.config) != Status::Ok) continue;
    const double runtime = recording.runtime_ms(proposal.config);
    if (!best_ms || runtime < *best_ms) {
      best_ms = runtime;
      run.improvements.push_back({run.tested.size(), elapsed_ms / 1e3, runtime});
    }
    if (runtime <= target_ms) {
      run.tests_to_target = run.tested.size();
      break;
    }
  }
  run.time_s = elapsed_ms / 1e3;
  return run;
}

}  // namespace steer
