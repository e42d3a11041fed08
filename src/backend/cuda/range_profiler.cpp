#include "backend/cuda/range_profiler.hpp"

#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include "backend/cuda/cupti_api.hpp"
#include "backend/cuda/driver_api.hpp"

namespace steer::cuda {

namespace {

// STEER_CUPTI_RANGE: "kernel" (default: CUPTI's auto range, the kernel itself) or "user" (a
// push/pop range around the launch, which the recordings of 2026-11-30 were made with).
// Read once per process.
bool kernel_ranges() {
  static const bool kernel = [] {
    const char* setting = std::getenv("STEER_CUPTI_RANGE");
    const std::string_view mode = setting ? setting : "kernel";
    if (mode == "kernel") return true;
    if (mode != "user") throw BackendError(fmt::format("STEER_CUPTI_RANGE={}: expected user or kernel", mode));
    return false;
  }();
  return kernel;
}

}  // namespace

// One metric set, configured for this chip: the host object that evaluates the counter
// data, and the configuration image that schedules the passes.
struct RangeProfiler::Config {
  Plan plan;
  std::vector<const char*> names;  // point into plan.metrics
  CUpti_Profiler_Host_Object* host = nullptr;
  std::vector<std::uint8_t> image;

  Config() = default;
  Config(const Config&) = delete;
  Config& operator=(const Config&) = delete;
  ~Config() {
    if (!host) return;
    CUpti_Profiler_Host_Deinitialize_Params params{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    params.pHostObject = host;
    trace("cuptiProfilerHostDeinitialize");
    (void)cupti().cuptiProfilerHostDeinitialize(&params);
  }
};

namespace {

CUpti_Profiler_Host_Object* make_host_object(const std::string& chip, std::vector<std::uint8_t>& availability) {
  CUpti_Profiler_Host_Initialize_Params params{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  params.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  params.pChipName = chip.c_str();
  params.pCounterAvailabilityImage = availability.data();
  trace("cuptiProfilerHostInitialize");
  check_cupti(cupti().cuptiProfilerHostInitialize(&params), "cuptiProfilerHostInitialize", chip);
  return params.pHostObject;
}

}  // namespace

RangeProfiler::RangeProfiler(CUcontext context, int device) : context_(context) {
  const CuptiApi& api = cupti();
  CUpti_Profiler_Initialize_Params initialize{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  trace("cuptiProfilerInitialize");
  check_cupti(api.cuptiProfilerInitialize(&initialize), "cuptiProfilerInitialize");

  CUpti_Device_GetChipName_Params chip{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  chip.deviceIndex = static_cast<std::size_t>(device);
  trace("cuptiDeviceGetChipName");
  check_cupti(api.cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName", fmt::format("device {}", device));
  chip_ = chip.pChipName;

  // Which counters this context may use (another profiler, or a driver setting that
  // restricts profiling to administrators, shows up here).
  CUpti_Profiler_GetCounterAvailability_Params available{CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
  available.ctx = context_;
  trace("cuptiProfilerGetCounterAvailability");
  check_cupti(api.cuptiProfilerGetCounterAvailability(&available), "cuptiProfilerGetCounterAvailability", chip_);
  availability_.assign(available.counterAvailabilityImageSize, 0);
  available.pCounterAvailabilityImage = availability_.data();
  trace("cuptiProfilerGetCounterAvailability");
  check_cupti(api.cuptiProfilerGetCounterAvailability(&available), "cuptiProfilerGetCounterAvailability", chip_);
}

RangeProfiler::~RangeProfiler() {
  try {
    disable();
    configs_.clear();
    CUpti_Profiler_DeInitialize_Params params{CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
    trace("cuptiProfilerDeInitialize");
    (void)cupti().cuptiProfilerDeInitialize(&params);
  } catch (...) {
    // The worker is ending; nothing useful can be done about a failed clean-up.
  }
}

RangeProfiler::Config& RangeProfiler::configure(const std::vector<std::string>& metrics) {
  std::string key;
  for (const std::string& metric : metrics) key += metric + '\n';
  if (auto found = configs_.find(key); found != configs_.end()) return *found->second;

  const CuptiApi& api = cupti();
  auto config = std::make_unique<Config>();
  config->host = make_host_object(chip_, availability_);
  for (const std::string& metric : metrics) {
    CUpti_Profiler_Host_GetMetricProperties_Params properties{
        CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE};
    properties.pHostObject = config->host;
    properties.pMetricName = metric.c_str();
    trace("cuptiProfilerHostGetMetricProperties");
    CUptiResult result = api.cuptiProfilerHostGetMetricProperties(&properties);
    if (result == CUPTI_SUCCESS) {
      config->plan.metrics.push_back(metric);
    } else {
      config->plan.dropped.push_back(fmt::format("{} ({})", metric, CuptiError(result, "", "").what()));
    }
  }
  if (config->plan.metrics.empty()) {
    throw BackendError(fmt::format("none of the {} metrics asked for can be collected on {}", metrics.size(), chip_));
  }
  for (const std::string& metric : config->plan.metrics) config->names.push_back(metric.c_str());

  CUpti_Profiler_Host_ConfigAddMetrics_Params add{CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
  add.pHostObject = config->host;
  add.ppMetricNames = config->names.data();
  add.numMetrics = config->names.size();
  trace("cuptiProfilerHostConfigAddMetrics");
  check_cupti(api.cuptiProfilerHostConfigAddMetrics(&add), "cuptiProfilerHostConfigAddMetrics", chip_);
  CUpti_Profiler_Host_GetConfigImageSize_Params size{CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  size.pHostObject = config->host;
  trace("cuptiProfilerHostGetConfigImageSize");
  check_cupti(api.cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize", chip_);
  config->image.assign(size.configImageSize, 0);
  CUpti_Profiler_Host_GetConfigImage_Params image{CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  image.pHostObject = config->host;
  image.configImageSize = config->image.size();
  image.pConfigImage = config->image.data();
  trace("cuptiProfilerHostGetConfigImage");
  check_cupti(api.cuptiProfilerHostGetConfigImage(&image), "cuptiProfilerHostGetConfigImage", chip_);
  CUpti_Profiler_Host_GetNumOfPasses_Params passes{CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
  passes.configImageSize = config->image.size();
  passes.pConfigImage = config->image.data();
  trace("cuptiProfilerHostGetNumOfPasses");
  check_cupti(api.cuptiProfilerHostGetNumOfPasses(&passes), "cuptiProfilerHostGetNumOfPasses", chip_);
  config->plan.passes = static_cast<int>(passes.numOfPasses);
  return *configs_.emplace(key, std::move(config)).first->second;
}

const RangeProfiler::Plan& RangeProfiler::plan(const std::vector<std::string>& metrics) {
  return configure(metrics).plan;
}

void RangeProfiler::enable(Config& config) {
  if (enabled_ && enabled_for_ == &config) return;
  disable();
  CUpti_RangeProfiler_Enable_Params params{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
  params.ctx = context_;
  trace("cuptiRangeProfilerEnable");
  check_cupti(cupti().cuptiRangeProfilerEnable(&params), "cuptiRangeProfilerEnable", chip_);
  enabled_ = params.pRangeProfilerObject;
  enabled_for_ = &config;
}

void RangeProfiler::disable() {
  if (!enabled_) return;
  CUpti_RangeProfiler_Disable_Params params{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
  params.pRangeProfilerObject = enabled_;
  enabled_ = nullptr;
  enabled_for_ = nullptr;
  trace("cuptiRangeProfilerDisable");
  check_cupti(cupti().cuptiRangeProfilerDisable(&params), "cuptiRangeProfilerDisable", chip_);
}

RangeProfiler::Collection RangeProfiler::collect(const std::vector<std::string>& metrics,
                                                 const std::function<void()>& before_pass,
                                                 const std::function<void()>& launch) {
  const CuptiApi& api = cupti();
  Config& config = configure(metrics);
  enable(config);
  try {
    CUpti_RangeProfiler_GetCounterDataSize_Params size{CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
    size.pRangeProfilerObject = enabled_;
    size.pMetricNames = config.names.data();
    size.numMetrics = config.names.size();
    size.maxNumOfRanges = 1;
    size.maxNumRangeTreeNodes = 1;
    trace("cuptiRangeProfilerGetCounterDataSize");
    check_cupti(api.cuptiRangeProfilerGetCounterDataSize(&size), "cuptiRangeProfilerGetCounterDataSize");
    std::vector<std::uint8_t> data(size.counterDataSize, 0);
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params initialize{
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    initialize.pRangeProfilerObject = enabled_;
    initialize.counterDataSize = data.size();
    initialize.pCounterData = data.data();
    trace("cuptiRangeProfilerCounterDataImageInitialize");
    check_cupti(api.cuptiRangeProfilerCounterDataImageInitialize(&initialize),
                "cuptiRangeProfilerCounterDataImageInitialize");

    CUpti_RangeProfiler_SetConfig_Params set{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
    set.pRangeProfilerObject = enabled_;
    set.configSize = config.image.size();
    set.pConfig = config.image.data();
    set.counterDataImageSize = data.size();
    set.pCounterDataImage = data.data();
    // User replay: we make every pass's launch ourselves, so the inputs can be restored
    // before each one (kernel replay would save and restore all device memory instead,
    // which for gigabyte arguments costs more than the kernel). The range is the kernel
    // itself (auto range): a push/pop user range around the launch spans up to 0.6 ms more
    // than the kernel on the H200, which dilutes every *.pct_of_peak_sustained_elapsed
    // metric; the kernel range agrees with Nsight Compute (docs/counters.md).
    const bool kernel_range = kernel_ranges();
    set.range = kernel_range ? CUPTI_AutoRange : CUPTI_UserRange;
    set.replayMode = CUPTI_UserReplay;
    set.maxRangesPerPass = 1;
    set.numNestingLevels = 1;
    set.minNestingLevel = 1;
    set.passIndex = 0;
    set.targetNestingLevel = 1;
    trace("cuptiRangeProfilerSetConfig");
    check_cupti(api.cuptiRangeProfilerSetConfig(&set), "cuptiRangeProfilerSetConfig");

    Collection collection;
    for (bool submitted = false; !submitted;) {
      if (collection.passes > config.plan.passes + 1) {
        throw BackendError(fmt::format("the range profiler wanted more than the {} passes it planned", config.plan.passes));
      }
      before_pass();
      CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
      start.pRangeProfilerObject = enabled_;
      trace("cuptiRangeProfilerStart");
      check_cupti(api.cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart");
      if (kernel_range) {
        launch();
      } else {
        CUpti_RangeProfiler_PushRange_Params push{CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE};
        push.pRangeProfilerObject = enabled_;
        push.pRangeName = "steer";
        trace("cuptiRangeProfilerPushRange");
        check_cupti(api.cuptiRangeProfilerPushRange(&push), "cuptiRangeProfilerPushRange");
        launch();
        CUpti_RangeProfiler_PopRange_Params pop{CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE};
        pop.pRangeProfilerObject = enabled_;
        trace("cuptiRangeProfilerPopRange");
        check_cupti(api.cuptiRangeProfilerPopRange(&pop), "cuptiRangeProfilerPopRange");
      }
      CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
      stop.pRangeProfilerObject = enabled_;
      trace("cuptiRangeProfilerStop");
      check_cupti(api.cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop");
      submitted = stop.isAllPassSubmitted != 0;
      ++collection.passes;
    }

    CUpti_RangeProfiler_DecodeData_Params decode{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
    decode.pRangeProfilerObject = enabled_;
    trace("cuptiRangeProfilerDecodeData");
    check_cupti(api.cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData");
    CUpti_RangeProfiler_GetCounterDataInfo_Params info{CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
    info.pCounterDataImage = data.data();
    info.counterDataImageSize = data.size();
    trace("cuptiRangeProfilerGetCounterDataInfo");
    check_cupti(api.cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");
    if (info.numTotalRanges < 1) throw BackendError("the range profiler recorded no range for the launch");

    std::vector<double> values(config.names.size(), 0.0);
    CUpti_Profiler_Host_EvaluateToGpuValues_Params evaluate{
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    evaluate.pHostObject = config.host;
    evaluate.pCounterDataImage = data.data();
    evaluate.counterDataImageSize = data.size();
    evaluate.rangeIndex = 0;
    evaluate.ppMetricNames = config.names.data();
    evaluate.numMetrics = config.names.size();
    evaluate.pMetricValues = values.data();
    trace("cuptiProfilerHostEvaluateToGpuValues");
    check_cupti(api.cuptiProfilerHostEvaluateToGpuValues(&evaluate), "cuptiProfilerHostEvaluateToGpuValues");
    for (std::size_t m = 0; m < values.size(); ++m) collection.values[config.plan.metrics[m]] = values[m];
    return collection;
  } catch (...) {
    // A half-done collection leaves the object mid-schedule: start the next one afresh.
    try {
      disable();
    } catch (...) {
    }
    throw;
  }
}

}  // namespace steer::cuda
