#pragma once
// Hardware counters of one kernel launch, collected in-process with the CUDA 13 range
// profiler (docs/counters.md). Lives in the worker process, beside the DeviceSession.
//
// The metrics are usually more than one pass of the hardware counters can hold, so the
// profiler replays: each pass is one launch inside a user range, and the caller restores
// the inputs before every pass so that every pass sees the same work. The number of
// passes is known once the metric set is configured, before anything runs.
//
// Cost (docs/performance.md): enabling the profiler on a context takes ~140–175 ms, then
// each pass costs the kernel's time plus ~12 ms. The profiler therefore stays enabled from one
// profiled test to the next, except that the worker releases it (release()) before it
// measures energy and before it times a test that is not profiled: enabled, it raises the
// GPU's power at the same runtime. The next collect enables it again (an enabled object's
// first configuration fixes its pass schedule, so a change of metric set re-enables it too).
#include <cuda.h>
#include <cupti_range_profiler.h>

#include <cstdint>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace steer::cuda {

class RangeProfiler {
 public:
  // Initialises CUPTI's profiler for `device` (an ordinal) whose context is `context`.
  // Throws BackendError when CUPTI is missing or the device cannot be profiled.
  RangeProfiler(CUcontext context, int device);
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;
  ~RangeProfiler();

  // A metric set as the device can collect it.
  struct Plan {
    std::vector<std::string> metrics;   // collectable, in the order asked for
    std::vector<std::string> dropped;   // unknown to this device, with CUPTI's reason
    int passes = 0;
  };
  // Validates and configures `metrics` (cached per set). Throws BackendError when none of
  // them can be collected.
  const Plan& plan(const std::vector<std::string>& metrics);

  struct Collection {
    std::map<std::string, double> values;  // metric name -> value
    int passes = 0;                        // launches made
  };
  // Collects plan(metrics): calls `before_pass` (restore the inputs and wait for that; not
  // profiled), then `launch` (the kernel, waited for) once per pass. Throws BackendError;
  // exceptions from the callbacks pass through. No cuCtxSynchronize here: called between
  // SetConfig and Start it crashed the 580 driver's libcuda.
  Collection collect(const std::vector<std::string>& metrics, const std::function<void()>& before_pass,
                     const std::function<void()>& launch);

  // Disables the profiler on the context until the next collect. While it is enabled the
  // GPU draws more power at the same runtime (DGEMM on the H200: 3 % more energy per
  // launch, docs/energy.md), so energy measured after a profiled launch would read high.
  void release() { disable(); }

 private:
  struct Config;
  Config& configure(const std::vector<std::string>& metrics);
  void enable(Config& config);
  void disable();

  CUcontext context_;
  std::string chip_;
  std::vector<std::uint8_t> availability_;
  std::map<std::string, std::unique_ptr<Config>> configs_;  // by the joined metric names
  CUpti_RangeProfiler_Object* enabled_ = nullptr;
  const Config* enabled_for_ = nullptr;
};

}  // namespace steer::cuda
