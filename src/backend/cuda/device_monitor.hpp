#pragma once
// The GPU's clocks, power, temperature and throttle reasons from NVML, read in the worker
// process right after a test's timed launches (Result::conditions). Reading costs a handful
// of NVML queries per test; a query the board does not support leaves its reading NaN.
#include <string>

#include "steer/result.hpp"

namespace steer::cuda {

// nvmlClocksEventReasons as words, comma-separated in bit order ("power cap, thermal
// slowdown (hardware)"). Idle is not a slowdown and is left out; so are unknown bits.
std::string clock_reasons_text(unsigned long long reasons);

class DeviceMonitor {
 public:
  // The GPU at `pci_bus_id` (cuDeviceGetPCIBusId). Throws BackendError when NVML cannot be
  // used; the worker then records no conditions.
  explicit DeviceMonitor(const std::string& pci_bus_id);
  // What NVML reads now. Never throws.
  DeviceConditions read() const;

 private:
  void* device_ = nullptr;  // nvmlDevice_t
};

}  // namespace steer::cuda
