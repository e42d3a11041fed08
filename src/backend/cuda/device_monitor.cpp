#include "backend/cuda/device_monitor.hpp"

#include <iterator>
#include <utility>

#include "backend/cuda/nvml_api.hpp"

namespace steer::cuda {

std::string clock_reasons_text(unsigned long long reasons) {
  // nvml.h's nvmlClocksEventReason* bits (0x1, GPU idle, is not a slowdown).
  constexpr std::pair<unsigned long long, const char*> kReasons[] = {
      {0x2, "application clocks setting"},
      {0x4, "power cap"},
      {0x8, "hardware slowdown"},
      {0x10, "sync boost"},
      {0x20, "thermal slowdown (software)"},
      {0x40, "thermal slowdown (hardware)"},
      {0x80, "power brake (hardware)"},
      {0x100, "display clock setting"},
  };
  std::string text;
  for (const auto& [bit, words] : kReasons) {
    if ((reasons & bit) == 0) continue;
    if (!text.empty()) text += ", ";
    text += words;
  }
  return text;
}

DeviceMonitor::DeviceMonitor(const std::string& pci_bus_id) : device_(nvml_device(pci_bus_id)) {}

DeviceConditions DeviceMonitor::read() const {
  const NvmlApi& api = nvml();
  auto device = static_cast<NvmlDevice>(device_);
  DeviceConditions conditions;
  unsigned int value = 0;
  if (api.clock(device, kNvmlClockSm, &value) == kNvmlSuccess) conditions.sm_clock_mhz = value;
  if (api.clock(device, kNvmlClockMemory, &value) == kNvmlSuccess) conditions.memory_clock_mhz = value;
  if (api.temperature(device, kNvmlTemperatureGpu, &value) == kNvmlSuccess) conditions.temperature_c = value;
  if (api.power_usage && api.power_usage(device, &value) == kNvmlSuccess) conditions.power_watts = value / 1e3;
  if (api.enforced_power_limit && api.enforced_power_limit(device, &value) == kNvmlSuccess) {
    conditions.power_limit_watts = value / 1e3;
  }
  unsigned long long reasons = 0;
  if (api.clock_reasons && api.clock_reasons(device, &reasons) == kNvmlSuccess) {
    conditions.throttle = clock_reasons_text(reasons);
  }
  return conditions;
}

}  // namespace steer::cuda
