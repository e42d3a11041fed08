#pragma once
// The CUPTI profiling API (CUDA 13 range profiler), loaded at run time from libcupti.
// Only the worker process uses it, and only when a test asks for counters.
//
// Why dlopen: like libcuda (driver_api.hpp), libcupti is not on every machine that runs
// Steer — CI has the headers but no GPU, and users may install the driver without the
// toolkit. Timing must keep working there; only a request for counters fails, with a
// message that says what is missing.
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include <string>
#include <string_view>

#include "steer/error.hpp"

namespace steer::cuda {

#define STEER_CUPTI_FUNCTIONS(X)                                                                       \
  X(cuptiGetResultString) X(cuptiGetErrorMessage)                                                      \
  X(cuptiProfilerInitialize) X(cuptiProfilerDeInitialize) X(cuptiDeviceGetChipName)                    \
  X(cuptiProfilerGetCounterAvailability)                                                               \
  X(cuptiProfilerHostInitialize) X(cuptiProfilerHostDeinitialize) X(cuptiProfilerHostConfigAddMetrics) \
  X(cuptiProfilerHostGetConfigImageSize) X(cuptiProfilerHostGetConfigImage)                            \
  X(cuptiProfilerHostGetNumOfPasses) X(cuptiProfilerHostGetMetricProperties)                           \
  X(cuptiProfilerHostEvaluateToGpuValues)                                                              \
  X(cuptiRangeProfilerEnable) X(cuptiRangeProfilerDisable) X(cuptiRangeProfilerGetCounterDataSize)     \
  X(cuptiRangeProfilerCounterDataImageInitialize) X(cuptiRangeProfilerSetConfig)                       \
  X(cuptiRangeProfilerStart) X(cuptiRangeProfilerStop) X(cuptiRangeProfilerPushRange)                  \
  X(cuptiRangeProfilerPopRange) X(cuptiRangeProfilerDecodeData) X(cuptiRangeProfilerGetCounterDataInfo)

struct CuptiApi {
#define STEER_CUPTI_DECLARE_POINTER(name) decltype(&::name) name = nullptr;
  STEER_CUPTI_FUNCTIONS(STEER_CUPTI_DECLARE_POINTER)
#undef STEER_CUPTI_DECLARE_POINTER
};

// The loaded library. Loads on first use (thread-safe); throws BackendError, every time,
// naming the places it looked, when libcupti cannot be loaded or lacks a function.
// STEER_CUPTI_LIBRARY (a path) overrides the search.
const CuptiApi& cupti();

// A failed CUPTI call: names the call, what it was doing, and CUPTI's own message.
class CuptiError : public BackendError {
 public:
  CuptiError(CUptiResult result, std::string_view call, std::string_view doing);
  CUptiResult result() const noexcept { return result_; }

 private:
  CUptiResult result_;
};

inline void check_cupti(CUptiResult result, std::string_view call, std::string_view doing = {}) {
  if (result != CUPTI_SUCCESS) throw CuptiError(result, call, doing);
}

}  // namespace steer::cuda
