#pragma once
// Counters and energy are measured after a configuration was timed and its outputs read.
// When that measurement fails — the worker process died (on the H200, CUPTI crashed inside
// cuLaunchKernel in about 0.2 % of profiled tests) or reported a failed CUPTI/NVML call —
// the request is tried again in a new worker, and if that fails too the configuration is
// timed without them and the result says why in a warning. A flaky profiler never turns a
// working configuration into a failed test.
#include <functional>
#include <optional>
#include <string>

#include "backend/worker/protocol.hpp"

namespace steer::cuda {

using worker::RunReply;
using worker::RunRequest;

// One worker process, seen by the retry: `run` sends a request and returns the reply, or
// nullopt when the worker died; `death` says how it died (after `run` gave nullopt);
// `replace` starts a new worker.
struct WorkerHandle {
  std::function<std::optional<RunReply>(const RunRequest&)> run;
  std::function<std::string()> death;
  std::function<void(const std::string& reason)> replace;
};

struct RunOutcome {
  std::optional<RunReply> reply;  // nullopt: the worker died on every attempt
  std::string death;              // how it died the last time (when reply is nullopt)
};

// Runs `request`, retrying as above when it asks for counters or energy. A worker that died
// is always replaced before returning. A reply with context_lost set is left for the caller
// to act on (it replaces the worker and says so), except after a failed measurement, where
// the retry replaced it already.
RunOutcome run_with_measurement_retry(const RunRequest& request, const WorkerHandle& worker);

}  // namespace steer::cuda
