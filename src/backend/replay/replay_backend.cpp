// The replay backend: a Recording served through the Backend interface.
#include "steer/replay.hpp"

namespace steer {
namespace {

// Carries nothing: run() looks the configuration up again by the instance's index.
class ReplayKernel final : public CompiledKernel {};

}  // namespace

DeviceInfo ReplayBackend::device() const {
  DeviceInfo info;
  info.backend = "replay";
  info.name = recording_.device();
  return info;
}

std::unique_ptr<CompiledKernel> ReplayBackend::compile(const KernelInstance& instance) {
  const Result* recorded = recording_.recorded(instance.config_index);
  if (recorded && recorded->status == Status::CompileError) throw CompileError(recorded->message);
  auto kernel = std::make_unique<ReplayKernel>();
  if (recorded) kernel->compile_ms = recorded->compile_ms;
  return kernel;
}

RunResult ReplayBackend::run(const CompiledKernel&, const KernelInstance& instance, const RunOptions&) {
  RunResult run;
  const Result* recorded = recording_.recorded(instance.config_index);
  if (!recorded) {
    run.status = Status::Skipped;
    run.message = "not in the recording";
    return run;
  }
  // The recorded measurement as it is: the options' repetitions or counter requests cannot
  // be honoured after the fact, and inventing values for them would falsify the replay.
  run.status = recorded->status;
  run.message = recorded->message;
  run.time = recorded->time;
  run.counters = recorded->counters;
  run.energy = recorded->energy;
  run.profiling_ms = recorded->profiling_ms;
  return run;
}

}  // namespace steer
