#pragma once
// Energy per launch from NVML (docs/h200.md, docs/energy.md), in the worker process.
//
// NVML's total-energy counter moves only every ~100 ms and one read costs ~5 ms, so a
// single 1–10 ms launch cannot be measured. The meter therefore repeats the launch
// back to back over a window (0.5 s by default) and integrates NVML's 20 ms power
// samples over it; the energy counter, read at both ends, is the fall-back when the
// device keeps no power samples. The window is split into sub-windows whose energy per
// launch gives the spread, so a figure that drifted (clocks dropping at the power limit,
// say) shows it.
//
// NVML is loaded with dlopen and the few functions used are declared here: the build
// needs no nvml.h (CI and development machines have none).
#include <functional>
#include <string>

#include "steer/result.hpp"

namespace steer::cuda {

class EnergyMeter {
 public:
  // The NVML device whose PCI bus id is `pci_bus_id` ("0000:65:00.0", from
  // cuDeviceGetPCIBusId). Throws BackendError when NVML cannot be loaded or initialised.
  explicit EnergyMeter(const std::string& pci_bus_id);

  // Calls `launch_batch(n)` (enqueue n launches and wait for them; returns when done)
  // repeatedly for `window_s` seconds, batches sized from `launch_ms` (the kernel's
  // measured time) so that each lasts ~20 ms. Throws BackendError when NVML fails.
  EnergyStats measure(double window_s, double launch_ms, const std::function<void(int)>& launch_batch);

 private:
  void* device_ = nullptr;  // nvmlDevice_t
  std::string bus_id_;
};

}  // namespace steer::cuda
