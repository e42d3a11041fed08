// Configurations a device cannot launch are left out of the space before the search.
#include <gtest/gtest.h>

#include "steer/tuner.hpp"

namespace steer {
namespace {

// Blocks of BX x BY threads and BX * 1024 bytes of dynamic shared memory per block, at a size
// whose variable N the block reads too.
Spec spec_with_blocks() {
  Spec spec;
  spec.name = "blocks";
  spec.space.add_parameter("BX", std::vector<Value>{32, 64, 128, 256});
  spec.space.add_parameter("BY", std::vector<Value>{1, 2, 4, 8});
  spec.space.add_parameter("UNROLL", std::vector<Value>{1, 2});  // read by no launch expression
  KernelSpec kernel;
  kernel.name = "k";
  kernel.launch.grid = {"N // BX"};
  kernel.launch.block = {"BX", "min(BY, N)"};
  kernel.launch.shared_memory_bytes = "BX * 1024";
  spec.kernel = kernel;
  spec.sizes = {ProblemSize{.name = "small", .variables = {{"N", Value(4)}}}};
  spec.default_size = "small";
  return spec;
}

TEST(DeviceLimits, LeaveOutBlocksWithTooManyThreadsOrTooMuchSharedMemory) {
  const Spec spec = spec_with_blocks();
  DeviceInfo device;
  device.name = "Small GPU";
  device.max_threads_per_block = 256;
  device.max_shared_memory_per_block = 128 * 1024;
  const DeviceLimitedSpace limited = limit_to_device(spec, spec.sizes[0], device);
  EXPECT_EQ(limited.rule,
            "what Small GPU can launch: blocks of at most 256 threads and at most 131072 bytes of dynamic shared memory");
  const Space space = Space::build(limited.definition);
  // BY is capped at N = 4 by min(BY, N). Threads BX * min(BY, 4) <= 256 and BX <= 128:
  // BX 32: BY 1, 2, 4, 8 (32 .. 128 threads); BX 64: all four (64 .. 256); BX 128: BY 1, 2
  // (128, 256); BX 256: none (shared memory). Each twice, for UNROLL.
  EXPECT_EQ(space.size(), 2u * (4 + 4 + 2));
  for (ConfigIndex c = 0; c < space.size(); ++c) {
    const std::int64_t bx = space.value(c, 0).as_int(), by = std::min<std::int64_t>(space.value(c, 1).as_int(), 4);
    EXPECT_LE(bx * by, 256);
    EXPECT_LE(bx * 1024, 128 * 1024);
  }
  EXPECT_EQ(Space::build(spec.space).size() - space.size(), 12u) << "what the device's rule removed";
}

TEST(DeviceLimits, ADeviceWithoutKnownLimitsOrASpecWithoutAKernelChangesNothing) {
  Spec spec = spec_with_blocks();
  const DeviceLimitedSpace unknown = limit_to_device(spec, spec.sizes[0], DeviceInfo{});
  EXPECT_TRUE(unknown.rule.empty());
  EXPECT_EQ(Space::build(unknown.definition).size(), 32u);
  spec.kernel.reset();
  DeviceInfo device;
  device.max_threads_per_block = 1;
  EXPECT_EQ(Space::build(limit_to_device(spec, spec.sizes[0], device).definition).size(), 32u);
}

}  // namespace
}  // namespace steer
