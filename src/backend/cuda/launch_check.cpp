#include "backend/cuda/launch_check.hpp"

#include <fmt/format.h>

namespace steer::cuda {
namespace {

std::string extent(const std::array<std::uint64_t, 3>& dims) {
  return fmt::format("{}x{}x{}", dims[0], dims[1], dims[2]);
}

bool exceeds(const std::array<std::uint64_t, 3>& dims, const std::array<std::uint64_t, 3>& limits) {
  return dims[0] > limits[0] || dims[1] > limits[1] || dims[2] > limits[2];
}

}  // namespace

std::optional<std::string> launch_problem(const KernelInstance& instance, const KernelAttributes& kernel,
                                          const DeviceLimits& device) {
  for (const auto* dims : {&instance.grid, &instance.block}) {
    if ((*dims)[0] == 0 || (*dims)[1] == 0 || (*dims)[2] == 0) {
      return fmt::format("{} {} has an empty dimension", dims == &instance.grid ? "grid" : "block", extent(*dims));
    }
  }
  if (exceeds(instance.block, device.max_block)) {
    return fmt::format("block {} exceeds the device's limit of {} per dimension", extent(instance.block),
                       extent(device.max_block));
  }
  // Each extent is at most 1024 here, so the product cannot overflow.
  const std::uint64_t threads = instance.block[0] * instance.block[1] * instance.block[2];
  if (threads > kernel.max_threads_per_block) {
    return fmt::format(
        "block {} has {} threads, more than the {} this kernel can launch with "
        "({} registers per thread; the device allows {} threads per block)",
        extent(instance.block), threads, kernel.max_threads_per_block, kernel.registers_per_thread,
        device.max_threads_per_block);
  }
  if (exceeds(instance.grid, device.max_grid)) {
    return fmt::format("grid {} exceeds the device's limit of {} blocks per dimension", extent(instance.grid),
                       extent(device.max_grid));
  }
  const std::uint64_t shared = kernel.static_shared_bytes + instance.shared_memory_bytes;
  if (shared > device.max_shared_per_block_optin) {
    return fmt::format(
        "the block needs {} bytes of shared memory ({} static + {} dynamic); the device allows "
        "at most {} per block",
        shared, kernel.static_shared_bytes, instance.shared_memory_bytes, device.max_shared_per_block_optin);
  }
  return std::nullopt;
}

std::string describe_launch(const KernelInstance& instance, const KernelAttributes& kernel) {
  return fmt::format(
      "grid {}, block {}, {} B dynamic shared; kernel: {} registers/thread, {} B static shared, "
      "{} B local/thread, at most {} threads/block",
      extent(instance.grid), extent(instance.block), instance.shared_memory_bytes, kernel.registers_per_thread,
      kernel.static_shared_bytes, kernel.local_bytes_per_thread, kernel.max_threads_per_block);
}

}  // namespace steer::cuda
