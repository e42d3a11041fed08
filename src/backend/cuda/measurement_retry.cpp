#include "backend/cuda/measurement_retry.hpp"

#include <fmt/format.h>

namespace steer::cuda {
namespace {

RunOutcome attempt(const RunRequest& request, const WorkerHandle& worker) {
  RunOutcome outcome;
  outcome.reply = worker.run(request);
  if (!outcome.reply) {
    outcome.death = worker.death();
    worker.replace("its death");
  }
  return outcome;
}

bool measurement_failed(const RunOutcome& outcome) {
  return !outcome.reply || !outcome.reply->measure_failed.empty();
}

// Why the measurement failed; replaces a worker whose CUDA or CUPTI state is suspect.
std::string failure_of(RunOutcome& outcome, const WorkerHandle& worker) {
  if (!outcome.reply) return fmt::format("the worker process died: {}", outcome.death);
  if (outcome.reply->context_lost) {
    worker.replace("a failed measurement");
    outcome.reply->context_lost = false;
  }
  return outcome.reply->measure_failed;
}

}  // namespace

RunOutcome run_with_measurement_retry(const RunRequest& request, const WorkerHandle& worker) {
  const MeasureRequest& measure = request.options.measure;
  RunOutcome first = attempt(request, worker);
  if (!(measure.counters || measure.energy) || !measurement_failed(first)) return first;
  const std::string first_failure = failure_of(first, worker);

  RunOutcome second = attempt(request, worker);
  if (!measurement_failed(second)) {
    if (second.reply->status == Status::Ok) {
      second.reply->warnings.push_back(fmt::format(
          "configuration {}: measuring counters or energy failed once ({}); measured again in a new worker",
          request.instance.config_index, first_failure));
    }
    return second;
  }
  const std::string second_failure = failure_of(second, worker);

  RunRequest plain = request;
  plain.options.measure.counters = false;
  plain.options.measure.energy = false;
  RunOutcome third = attempt(plain, worker);
  if (third.reply && third.reply->status == Status::Ok) {
    third.reply->warnings.push_back(fmt::format(
        "configuration {}: {} not measured: it failed twice ({}; then {}); the time is measured",
        request.instance.config_index,
        measure.counters && measure.energy ? "counters and energy" : measure.counters ? "counters" : "energy",
        first_failure, second_failure));
  }
  return third;
}

}  // namespace steer::cuda
