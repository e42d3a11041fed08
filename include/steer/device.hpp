#pragma once
// What Steer knows about a device: what a backend reports of it, and the facts the
// expert system and the counter models need (SM count, compute capability, FP32 cores
// per SM, counter family), from the backend or, for a recording, from the device's name.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "steer/counters.hpp"

namespace steer {

struct DeviceInfo {
  std::string backend;  // "cuda", "opencl", "replay"
  std::string name;     // "NVIDIA H200", "pthread-skylake-..."
  std::string vendor;
  int compute_capability_major = 0, compute_capability_minor = 0;  // CUDA only
  int multiprocessors = 0;
  std::size_t global_memory_bytes = 0;
  std::size_t max_shared_memory_per_block = 0;
  int max_threads_per_block = 0;
  std::string driver_version;
  // The kernel compiler: "NVRTC 12.6"; for OpenCL the platform's version, which names the
  // compiler (PoCL: its LLVM). Part of what a tuning's results are keyed by.
  std::string compiler_version;
  // A CPU device (e.g. PoCL): its kernels use the cores the compilers would use.
  bool runs_on_host_cores = false;
};

// What the analysis needs to know about the GPU that produced the counters.
struct DeviceFacts {
  int sm_count = 0;
  ComputeCapability compute_capability;
  // The family whose conventions the counters follow: issue utilisation over one issue
  // path (PreVolta) or two, and LOC_O as an overhead percentage (PreVolta) or sectors.
  CounterFamily family = CounterFamily::VoltaPlus;
};

// The facts of a device a backend reports; the family is the one its CUPTI provides.
DeviceFacts device_facts(const DeviceInfo& device);

// FP32 cores per SM for a compute capability (3.0 to 12.1). Throws CounterError for a
// capability not in the table: a guess would silently skew b_paral.
int fp32_cores_per_sm(ComputeCapability capability);

// The GPUs whose SM count and compute capability Steer knows by name ("NVIDIA GeForce RTX
// 2080 Ti", "GeForce GTX 1070", "NVIDIA H200", ...): recordings name their device but not
// its facts. nullopt for a name not in the table. The family is the one its CUPTI reports.
std::optional<DeviceFacts> known_device_facts(std::string_view device_name);

}  // namespace steer
