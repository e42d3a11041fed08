// Replaying a recording on a simulated clock: each test returns what was recorded for its
// configuration and costs what it cost when it was recorded.
#include <algorithm>
#include <cmath>

#include "steer/error.hpp"
#include "steer/tuner.hpp"

namespace steer {

RecordedCosts RecordedCosts::of(const Recording& recording) {
  RecordedCosts costs;
  double compile_ms[2] = {0, 0};
  std::size_t tests[2] = {0, 0};
  for (ConfigIndex config = 0; config < recording.space().size(); ++config) {
    const Result* result = recording.recorded(config);
    if (!result || result->status == Status::Skipped) continue;
    costs.compile = costs.compile || result->compile_ms > 0;
    costs.framework = costs.framework || result->overhead_ms > 0;
    costs.validation = costs.validation || result->validation_ms > 0;
    const int failed = result->ok() ? 0 : 1;
    compile_ms[failed] += result->compile_ms;
    ++tests[failed];
  }
  if (tests[0] > 0) costs.mean_valid_compile_ms = compile_ms[0] / static_cast<double>(tests[0]);
  if (tests[1] > 0) costs.mean_failed_compile_ms = compile_ms[1] / static_cast<double>(tests[1]);
  return costs;
}

namespace {
// The part of a test's cost that is compiling: the recorded compile (or, with
// CompileTimes::Mean, the mean of the recorded configurations with its outcome), the typical
// one where a recording holds no costs of its own, and none where its framework times
// include compiling (KTT's: they cannot be split).
double compile_cost_ms(const Recording& recording, ConfigIndex config, const CostModel& cost,
                       const RecordedCosts& recorded_costs) {
  if (recording.status(config) == Status::Skipped) return 0;
  if (recorded_costs.compile) {
    if (cost.compile_times == CompileTimes::Recorded) return recording.compile_ms(config);
    return recording.status(config) == Status::Ok ? recorded_costs.mean_valid_compile_ms
                                                  : recorded_costs.mean_failed_compile_ms;
  }
  return recorded_costs.framework ? 0 : cost.typical_compile_ms;
}

// A compile on the modelled compile streams: when it is done, and what of the test's cost
// it took.
struct ReplayCompile final : PreparedTest {
  double ready_ms = 0;
  double compile_ms = 0;
};
}  // namespace

double test_cost_ms(const Recording& recording, ConfigIndex config, const MeasureRequest& measure,
                    const CostModel& cost, const RecordedCosts& recorded_costs) {
  if (recording.status(config) == Status::Skipped) return 0;  // nothing was compiled or run
  const Result* recorded = recording.recorded(config);
  double ms = compile_cost_ms(recording, config, cost, recorded_costs);
  ms += recorded_costs.framework ? (recorded ? recorded->overhead_ms : 0) : cost.typical_framework_ms;
  const double runtime = recording.runtime_ms(config);
  if (std::isnan(runtime)) return ms;  // failed before a launch was timed
  if (cost.repetitions || !recorded || recorded->time.samples_ms.empty()) {
    ms += runtime * cost.repetitions.value_or(1);
  } else {
    for (double sample : recorded->time.samples_ms) ms += sample;
  }
  if (recorded) ms += recorded->validation_ms;
  if (measure.counters) {
    // What collecting the counters took when it was recorded (compute-heavy kernels pay far
    // more than the model in the SASS-patched pass); the model where it was not.
    if (recorded && recorded->profiling_ms > 0) {
      ms += recorded->profiling_ms;
    } else {
      ms += cost.profiling_passes * (runtime + cost.pass_overhead_ms);
    }
  }
  if (measure.energy) ms += measure.energy_window_s * 1e3;
  return ms;
}

double test_cost_ms(const Recording& recording, ConfigIndex config, const MeasureRequest& measure,
                    const CostModel& cost) {
  return test_cost_ms(recording, config, measure, cost, RecordedCosts::of(recording));
}

ReplayExecutor::ReplayExecutor(const Recording& recording, CostModel cost, std::size_t devices)
    : recording_(recording), cost_(cost), recorded_(RecordedCosts::of(recording)), devices_(std::max<std::size_t>(1, devices)) {
  info_.device.backend = "replay";
  info_.device.name = recording.device();
  info_.spec_name = recording.kernel();
}

// Without modelled compile streams there is nothing to do ahead: run() charges it all.
std::unique_ptr<PreparedTest> ReplayExecutor::compile_on(double& stream_free_ms, ConfigIndex config) {
  auto compile = std::make_unique<ReplayCompile>();
  compile->compile_ms = compile_cost_ms(recording_, config, cost_, recorded_);
  compile->ready_ms = std::max(clock_ms_, stream_free_ms) + compile->compile_ms;
  stream_free_ms = compile->ready_ms;
  return compile;
}

std::unique_ptr<PreparedTest> ReplayExecutor::prepare(ConfigIndex config) {
  if (compiler_free_ms_.empty()) return nullptr;
  return compile_on(*std::min_element(compiler_free_ms_.begin(), compiler_free_ms_.end()), config);
}

std::size_t ReplayExecutor::idle_compile_streams() const {
  return static_cast<std::size_t>(
      std::count_if(compiler_free_ms_.begin(), compiler_free_ms_.end(), [&](double free_ms) { return free_ms <= clock_ms_; }));
}

std::unique_ptr<PreparedTest> ReplayExecutor::prepare_idle(ConfigIndex config) {
  auto thread = std::find_if(compiler_free_ms_.begin(), compiler_free_ms_.end(),
                             [&](double free_ms) { return free_ms <= clock_ms_; });
  return thread == compiler_free_ms_.end() ? nullptr : compile_on(*thread, config);
}

// The worker keeps the profiler enabled from one profiled test to the next, and releases it
// before an energy window or a test without counters (src/backend/cuda/worker_main.cpp).
double ReplayExecutor::profiler_cost_ms(std::size_t device, ConfigIndex config, const MeasureRequest& measure) {
  if (device >= profiler_enabled_.size()) profiler_enabled_.resize(device + 1, false);
  const bool launched = recording_.status(config) != Status::Skipped && !std::isnan(recording_.runtime_ms(config));
  if (!launched) return 0;  // failed before the worker measured anything
  const bool enable = measure.counters && (!profiler_enabled_[device] || measure.energy);
  profiler_enabled_[device] = measure.counters;
  return enable ? cost_.profiler_enable_ms : 0;
}

const Result& ReplayExecutor::run(ConfigIndex config, PreparedTest* prepared, const RunOptions& run,
                                  std::vector<std::string>&) {
  const double cost_ms = test_cost_ms(recording_, config, run.measure, cost_, recorded_) +
                         profiler_cost_ms(0, config, run.measure);
  if (const auto* compile = dynamic_cast<const ReplayCompile*>(prepared)) {
    clock_ms_ = std::max(clock_ms_, compile->ready_ms) + std::max(0.0, cost_ms - compile->compile_ms);
  } else {
    clock_ms_ += cost_ms;
  }
  if (const Result* recorded = recording_.recorded(config)) {
    if (!charges_mean_compile()) return *recorded;
    charged_ = *recorded;
    charged_.compile_ms = compile_cost_ms(recording_, config, cost_, recorded_);
    return charged_;
  }
  missing_ = recording_.replay(config);
  return missing_;
}

void ReplayExecutor::submit(ConfigIndex config, std::unique_ptr<PreparedTest>, const RunOptions& run) {
  if (running_.size() >= devices_) throw Error("replay: a test was submitted while every simulated device was busy");
  // The free device with the lowest number.
  std::size_t device = 0;
  while (std::any_of(running_.begin(), running_.end(), [&](const Running& r) { return r.device == device; })) ++device;
  const double cost_ms =
      test_cost_ms(recording_, config, run.measure, cost_, recorded_) + profiler_cost_ms(device, config, run.measure);
  running_.push_back({clock_ms_ + cost_ms, submitted_++, config, device});
}

Executor::Finished ReplayExecutor::next() {
  if (running_.empty()) throw Error("replay: next() with no test running");
  auto first = std::min_element(running_.begin(), running_.end(), [](const Running& a, const Running& b) {
    return a.end_ms != b.end_ms ? a.end_ms < b.end_ms : a.order < b.order;
  });
  const Running done = *first;
  running_.erase(first);
  clock_ms_ = std::max(clock_ms_, done.end_ms);
  Finished finished;
  const Result* recorded = recording_.recorded(done.config);
  finished.result = recorded ? *recorded : recording_.replay(done.config);
  if (recorded && charges_mean_compile()) finished.result.compile_ms = compile_cost_ms(recording_, done.config, cost_, recorded_);
  finished.slot = done.device;
  return finished;
}

}  // namespace steer
