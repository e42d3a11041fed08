// What the expert system knows about a GPU: FP32 cores per SM by compute capability (for
// b_paral, eq. 10; figures from NVIDIA's architecture whitepapers and the CUDA
// programming guide's per-capability tables), and the facts of a backend's device.
#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "steer/backend.hpp"
#include "steer/expert.hpp"

namespace steer {
namespace {

struct CoresPerSm {
  ComputeCapability capability;
  int fp32_cores;
};

constexpr std::array cores_per_sm_table{
    CoresPerSm{{3, 0}, 192},   // Kepler
    CoresPerSm{{3, 2}, 192},
    CoresPerSm{{3, 5}, 192},
    CoresPerSm{{3, 7}, 192},
    CoresPerSm{{5, 0}, 128},   // Maxwell
    CoresPerSm{{5, 2}, 128},
    CoresPerSm{{5, 3}, 128},
    CoresPerSm{{6, 0}, 64},    // Pascal GP100
    CoresPerSm{{6, 1}, 128},   // Pascal GP10x (GTX 1070, ...)
    CoresPerSm{{6, 2}, 128},
    CoresPerSm{{7, 0}, 64},    // Volta
    CoresPerSm{{7, 2}, 64},
    CoresPerSm{{7, 5}, 64},    // Turing
    CoresPerSm{{8, 0}, 64},    // Ampere GA100 (A100: 6912 cores / 108 SMs)
    CoresPerSm{{8, 6}, 128},   // Ampere GA10x: FP32 on both datapaths
    CoresPerSm{{8, 7}, 128},
    CoresPerSm{{8, 9}, 128},   // Ada
    CoresPerSm{{9, 0}, 128},   // Hopper (H100, H200)
    CoresPerSm{{10, 0}, 128},  // Blackwell
    CoresPerSm{{10, 1}, 128},
    CoresPerSm{{10, 3}, 128},
    CoresPerSm{{11, 0}, 128},  // Blackwell (Thor; 10.1 before CUDA 13)
    CoresPerSm{{12, 0}, 128},
    CoresPerSm{{12, 1}, 128},
};

static_assert(std::ranges::is_sorted(cores_per_sm_table, {}, &CoresPerSm::capability));

}  // namespace

int fp32_cores_per_sm(ComputeCapability capability) {
  auto found = std::ranges::find(cores_per_sm_table, capability, &CoresPerSm::capability);
  if (found == cores_per_sm_table.end()) {
    throw CounterError(fmt::format("unknown compute capability {}.{}: no FP32 cores-per-SM figure for it",
                                   capability.major, capability.minor));
  }
  return found->fp32_cores;
}

DeviceFacts device_facts(const DeviceInfo& device) {
  ComputeCapability capability{device.compute_capability_major, device.compute_capability_minor};
  return {device.multiprocessors, capability, counter_family_for(capability)};
}

}  // namespace steer
