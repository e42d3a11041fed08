// The facts Steer knows about GPUs: FP32 cores per SM by compute capability (for the
// expert system's b_paral; figures from NVIDIA's architecture whitepapers and the CUDA
// programming guide's per-capability tables), SM count and capability by device name
// (recordings name their device but not its facts), and the facts of a backend's device.
#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "steer/device.hpp"
#include "steer/error.hpp"

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

struct KnownDevice {
  std::string_view name;  // matched as a substring of the device name, first match wins
  int sm_count;
  ComputeCapability capability;
};

// Longer names first where one contains another ("RTX 2080 Ti" before "RTX 2080").
// Figures: NVIDIA's product specifications (SM counts) and the CUDA programming guide.
constexpr std::array kKnownDevices{
    // Kepler, Maxwell, Pascal
    KnownDevice{"GTX 680", 8, {3, 0}},        KnownDevice{"Tesla K40", 15, {3, 5}},
    KnownDevice{"GTX TITAN X", 24, {5, 2}},   KnownDevice{"GTX TITAN", 14, {3, 5}},
    KnownDevice{"Tesla K80", 13, {3, 7}},     KnownDevice{"GTX 980 Ti", 22, {5, 2}},
    KnownDevice{"GTX 980", 16, {5, 2}},
    KnownDevice{"GTX 1060 3GB", 9, {6, 1}},   KnownDevice{"GTX 1060", 10, {6, 1}},
    KnownDevice{"GTX 1070 Ti", 19, {6, 1}},   KnownDevice{"GTX 1070", 15, {6, 1}},
    KnownDevice{"GTX 1080 Ti", 28, {6, 1}},   KnownDevice{"GTX 1080", 20, {6, 1}},
    KnownDevice{"TITAN Xp", 30, {6, 1}},      KnownDevice{"Tesla P100", 56, {6, 0}},
    KnownDevice{"Tesla P40", 30, {6, 1}},     KnownDevice{"Tesla P4", 20, {6, 1}},
    // Volta, Turing
    KnownDevice{"Tesla V100", 80, {7, 0}},    KnownDevice{"TITAN V", 80, {7, 0}},
    KnownDevice{"GTX 1650 SUPER", 20, {7, 5}}, KnownDevice{"GTX 1650", 14, {7, 5}},
    KnownDevice{"GTX 1660 Ti", 24, {7, 5}},   KnownDevice{"GTX 1660", 22, {7, 5}},
    KnownDevice{"RTX 2060 SUPER", 34, {7, 5}}, KnownDevice{"RTX 2060", 30, {7, 5}},
    KnownDevice{"RTX 2070 SUPER", 40, {7, 5}}, KnownDevice{"RTX 2070", 36, {7, 5}},
    KnownDevice{"RTX 2080 Ti", 68, {7, 5}},   KnownDevice{"RTX 2080 SUPER", 48, {7, 5}},
    KnownDevice{"RTX 2080", 46, {7, 5}},      KnownDevice{"TITAN RTX", 72, {7, 5}},
    KnownDevice{"Quadro RTX 8000", 72, {7, 5}}, KnownDevice{"Quadro RTX 6000", 72, {7, 5}},
    KnownDevice{"Quadro RTX 5000", 48, {7, 5}}, KnownDevice{"Tesla T4", 40, {7, 5}},
    // Ampere
    KnownDevice{"A100", 108, {8, 0}},         KnownDevice{"A30", 56, {8, 0}},
    KnownDevice{"A10G", 80, {8, 6}},          KnownDevice{"A10", 72, {8, 6}},
    KnownDevice{"RTX 3060 Ti", 38, {8, 6}},   KnownDevice{"RTX 3060", 28, {8, 6}},
    KnownDevice{"RTX 3070 Ti", 48, {8, 6}},   KnownDevice{"RTX 3070", 46, {8, 6}},
    KnownDevice{"RTX 3080 Ti", 80, {8, 6}},   KnownDevice{"RTX 3080", 68, {8, 6}},
    KnownDevice{"RTX 3090 Ti", 84, {8, 6}},   KnownDevice{"RTX 3090", 82, {8, 6}},
    KnownDevice{"RTX A4000", 48, {8, 6}},     KnownDevice{"RTX A5000", 64, {8, 6}},
    KnownDevice{"RTX A6000", 84, {8, 6}},     KnownDevice{"A40", 84, {8, 6}},
    // Ada
    KnownDevice{"RTX 4060 Ti", 34, {8, 9}},   KnownDevice{"RTX 4060", 24, {8, 9}},
    KnownDevice{"RTX 4070 Ti SUPER", 66, {8, 9}}, KnownDevice{"RTX 4070 Ti", 60, {8, 9}},
    KnownDevice{"RTX 4070 SUPER", 56, {8, 9}},
    KnownDevice{"RTX 4070", 46, {8, 9}},      KnownDevice{"RTX 4080 SUPER", 80, {8, 9}},
    KnownDevice{"RTX 4080", 76, {8, 9}},      KnownDevice{"RTX 4090", 128, {8, 9}},
    KnownDevice{"RTX 6000 Ada", 142, {8, 9}}, KnownDevice{"L40S", 142, {8, 9}},
    KnownDevice{"L40", 142, {8, 9}},          KnownDevice{"L4", 58, {8, 9}},
    // Hopper
    KnownDevice{"H100 PCIe", 114, {9, 0}},    KnownDevice{"H100", 132, {9, 0}},
    KnownDevice{"H200", 132, {9, 0}},
    // Blackwell (GeForce)
    KnownDevice{"RTX 5050", 20, {12, 0}},     KnownDevice{"RTX 5060 Ti", 36, {12, 0}},
    KnownDevice{"RTX 5060", 30, {12, 0}},     KnownDevice{"RTX 5070 Ti", 70, {12, 0}},
    KnownDevice{"RTX 5070", 48, {12, 0}},     KnownDevice{"RTX 5080", 84, {12, 0}},
    KnownDevice{"RTX 5090", 170, {12, 0}},
};

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

std::optional<DeviceFacts> known_device_facts(std::string_view device_name) {
  for (const KnownDevice& device : kKnownDevices) {
    if (device_name.find(device.name) != std::string_view::npos) {
      return DeviceFacts{device.sm_count, device.capability, counter_family_for(device.capability)};
    }
  }
  return std::nullopt;
}

}  // namespace steer
