// Replaying a recording on a simulated clock: each test returns what was recorded for its
// configuration and costs what it cost when it was recorded.
#include <cmath>

#include "steer/tuner.hpp"

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

ReplayExecutor::ReplayExecutor(const Recording& recording, CostModel cost) : recording_(recording), cost_(cost) {
  info_.device.backend = "replay";
  info_.device.name = recording.device();
  info_.spec_name = recording.kernel();
}

// Nothing to compile: run() looks the configuration up.
std::unique_ptr<PreparedTest> ReplayExecutor::prepare(ConfigIndex) { return nullptr; }

const Result& ReplayExecutor::run(ConfigIndex config, PreparedTest*, const RunOptions& run,
                                  std::vector<std::string>&) {
  clock_ms_ += test_cost_ms(recording_, config, run.measure, cost_);
  if (const Result* recorded = recording_.recorded(config)) return *recorded;
  missing_ = recording_.replay(config);
  return missing_;
}

}  // namespace steer
