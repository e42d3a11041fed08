// A failed measurement of counters or energy is tried again in a new worker, then given up
// for the time alone; it never turns a working configuration into a failed test
// (backend/cuda/measurement_retry.hpp). The worker is scripted: each request takes the next
// scripted reply, nullopt standing for a worker that died.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <deque>

#include "backend/cuda/measurement_retry.hpp"
#include "backend/worker/protocol.hpp"

namespace steer::cuda {
namespace {

using ::testing::HasSubstr;

RunReply ok_reply(bool with_counters) {
  RunReply reply;
  reply.samples_ms = {1.0, 1.1};
  reply.outputs_written = true;
  if (with_counters) reply.counters["dram__bytes_read.sum"] = 42;
  return reply;
}

RunReply measurement_failure() {
  RunReply reply = ok_reply(false);
  reply.measure_failed = "cuptiRangeProfilerStop failed: CUPTI_ERROR_UNKNOWN";
  reply.context_lost = true;
  return reply;
}

class ScriptedWorker {
 public:
  explicit ScriptedWorker(std::deque<std::optional<RunReply>> script) : script_(std::move(script)) {}
  WorkerHandle handle() {
    return WorkerHandle{.run =
                            [this](const RunRequest& request) {
                              requests.push_back(request);
                              EXPECT_FALSE(script_.empty()) << "more requests than scripted replies";
                              if (script_.empty()) return std::optional<RunReply>();
                              auto next = script_.front();
                              script_.pop_front();
                              return next;
                            },
                        .death = [] { return std::string("killed by signal 11 (Segmentation fault)"); },
                        .replace = [this](const std::string&) { ++replacements; }};
  }
  std::vector<RunRequest> requests;
  int replacements = 0;

 private:
  std::deque<std::optional<RunReply>> script_;
};

RunRequest profiled_request() {
  RunRequest request;
  request.instance.config_index = 7;
  request.options.measure.counters = true;
  return request;
}

TEST(MeasurementRetry, ASuccessfulRunIsSentOnce) {
  ScriptedWorker worker({ok_reply(true)});
  RunOutcome outcome = run_with_measurement_retry(profiled_request(), worker.handle());
  ASSERT_TRUE(outcome.reply);
  EXPECT_EQ(worker.requests.size(), 1u);
  EXPECT_EQ(worker.replacements, 0);
  EXPECT_TRUE(outcome.reply->warnings.empty());
}

TEST(MeasurementRetry, AWorkerThatDiesWhileProfilingIsReplacedAndTheRunRepeated) {
  ScriptedWorker worker({std::nullopt, ok_reply(true)});
  RunOutcome outcome = run_with_measurement_retry(profiled_request(), worker.handle());
  ASSERT_TRUE(outcome.reply);
  EXPECT_EQ(outcome.reply->status, Status::Ok);
  EXPECT_EQ(outcome.reply->counters.size(), 1u);
  EXPECT_EQ(worker.requests.size(), 2u);
  EXPECT_TRUE(worker.requests[1].options.measure.counters) << "the second attempt measures counters too";
  EXPECT_EQ(worker.replacements, 1);
  ASSERT_EQ(outcome.reply->warnings.size(), 1u);
  EXPECT_THAT(outcome.reply->warnings[0], HasSubstr("configuration 7"));
  EXPECT_THAT(outcome.reply->warnings[0], HasSubstr("Segmentation fault"));
}

TEST(MeasurementRetry, TwoFailuresLeaveTheTimeWithoutCountersAndSayWhy) {
  ScriptedWorker worker({measurement_failure(), std::nullopt, ok_reply(false)});
  RunOutcome outcome = run_with_measurement_retry(profiled_request(), worker.handle());
  ASSERT_TRUE(outcome.reply);
  EXPECT_EQ(outcome.reply->status, Status::Ok) << "the configuration works: it is not a failed test";
  EXPECT_TRUE(outcome.reply->counters.empty());
  ASSERT_EQ(worker.requests.size(), 3u);
  EXPECT_FALSE(worker.requests[2].options.measure.counters) << "the last attempt times the kernel alone";
  EXPECT_EQ(worker.replacements, 2) << "after the failed measurement (context lost) and after the death";
  ASSERT_EQ(outcome.reply->warnings.size(), 1u);
  EXPECT_THAT(outcome.reply->warnings[0], HasSubstr("counters not measured"));
  EXPECT_THAT(outcome.reply->warnings[0], HasSubstr("CUPTI_ERROR_UNKNOWN"));
  EXPECT_THAT(outcome.reply->warnings[0], HasSubstr("Segmentation fault"));
  EXPECT_FALSE(outcome.reply->context_lost);
}

TEST(MeasurementRetry, AKernelThatKillsTheWorkerEveryTimeIsAFailedTest) {
  ScriptedWorker worker({std::nullopt, std::nullopt, std::nullopt});
  RunOutcome outcome = run_with_measurement_retry(profiled_request(), worker.handle());
  EXPECT_FALSE(outcome.reply);
  EXPECT_THAT(outcome.death, HasSubstr("Segmentation fault"));
  EXPECT_EQ(worker.replacements, 3) << "a dead worker is always replaced";
}

TEST(MeasurementRetry, ARunThatMeasuresNothingIsNeverRepeated) {
  RunRequest plain;
  ScriptedWorker worker({std::nullopt});
  RunOutcome outcome = run_with_measurement_retry(plain, worker.handle());
  EXPECT_FALSE(outcome.reply);
  EXPECT_EQ(worker.requests.size(), 1u);
  EXPECT_EQ(worker.replacements, 1);
}

TEST(MeasurementRetry, AFailedKernelIsNotAFailedMeasurement) {
  RunReply launch_error;
  launch_error.status = Status::LaunchError;
  launch_error.message = "CUDA_ERROR_ILLEGAL_ADDRESS";
  launch_error.context_lost = true;
  ScriptedWorker worker({launch_error});
  RunRequest request = profiled_request();
  request.options.measure.energy = true;
  RunOutcome outcome = run_with_measurement_retry(request, worker.handle());
  ASSERT_TRUE(outcome.reply);
  EXPECT_EQ(outcome.reply->status, Status::LaunchError);
  EXPECT_TRUE(outcome.reply->context_lost) << "left for the backend, which replaces the worker and says so";
  EXPECT_EQ(worker.requests.size(), 1u);
  EXPECT_EQ(worker.replacements, 0);
}

}  // namespace
}  // namespace steer::cuda
