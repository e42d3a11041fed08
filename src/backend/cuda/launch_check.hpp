#pragma once
// Checks a launch against the device's and the compiled kernel's limits before it is
// made, so that a configuration asking for too much gets a message that says what it
// asked for and what the limit is, instead of the driver's bare CUDA_ERROR_INVALID_VALUE.
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "backend/worker/protocol.hpp"
#include "steer/backend.hpp"

namespace steer::cuda {

using worker::DeviceLimits;

// What the compiled kernel needs (cuFuncGetAttribute).
struct KernelAttributes {
  std::uint64_t max_threads_per_block = 0;  // lowered by the registers it uses
  int registers_per_thread = 0;
  std::uint64_t static_shared_bytes = 0;
  std::uint64_t local_bytes_per_thread = 0;
  std::uint64_t max_dynamic_shared_bytes = 0;  // the current limit; raise to launch with more
};

// Why the launch cannot run, or nullopt when it fits every limit.
std::optional<std::string> launch_problem(const KernelInstance& instance, const KernelAttributes& kernel,
                                          const DeviceLimits& device);

// "grid 64x64x1, block 32x8x1, 0 B dynamic shared; kernel: 32 registers/thread, 0 B static
// shared, 0 B local/thread, at most 1024 threads/block" for error messages.
std::string describe_launch(const KernelInstance& instance, const KernelAttributes& kernel);

}  // namespace steer::cuda
