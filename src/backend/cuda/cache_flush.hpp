#pragma once
// Leaves the L2 cache holding nothing of the kernel's arguments before a profiling pass.
//
// Why: the inputs are restored (a device-to-device copy) before every pass, which leaves
// the tail of each input in L2. A kernel whose inputs fit in L2 would then read almost
// nothing from DRAM (measured on the H200 for a 12 MB vector add: 96 sectors read
// instead of 262,144). Nsight Compute flushes the caches before every pass by default;
// to count the same DRAM reads, Steer copies a scratch buffer 1.5 times the size of L2
// between the restore and the pass, so that L2 holds only scratch lines.
//
// Measured on the H200 against ncu (data/h200/counters/, docs/counters.md): DRAM reads then agree with ncu within
// 0.1 % and instruction counts exactly. The copy's dirty lines are written back while
// the kernel runs, so DRAM *writes* read high (vector add: +27 %); ncu differs there too.
// What did not work: a flush kernel (launching one between the range profiler's passes
// crashed the 580 driver), and reading the scratch buffer back to the host (the copy
// engine's reads do not displace L2 lines: the counts stayed warm).
//
// STEER_CUPTI_FLUSH=none turns the flush off (counters then describe warm caches, as the
// timed launches see them).
#include <cuda.h>

#include <functional>

#include "backend/cuda/driver_api.hpp"

namespace steer::cuda {

class CacheFlush {
 public:
  // Allocates the scratch buffers on the current context, unless STEER_CUPTI_FLUSH=none.
  // Throws BackendError (also for an unknown STEER_CUPTI_FLUSH value).
  explicit CacheFlush(CUdevice device);
  // Flushes after the work queued on `stream` and returns once done; `wait_for_stream`
  // waits for the stream (an event, not cuCtxSynchronize: see range_profiler.hpp).
  void run(CUstream stream, const std::function<void()>& wait_for_stream);

 private:
  std::size_t bytes_ = 0;  // 0: no flush
  DeviceMemory scratch_, target_;
};

}  // namespace steer::cuda
