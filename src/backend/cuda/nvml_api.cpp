#include "backend/cuda/nvml_api.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <optional>
#include <type_traits>

#include "steer/error.hpp"

namespace steer::cuda {
namespace {

struct LoadedNvml {
  std::optional<NvmlApi> api;
  std::string problem;
};

LoadedNvml load_nvml() {
  void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* reason = dlerror();
    return {std::nullopt, fmt::format("NVML (libnvidia-ml.so.1, part of the NVIDIA driver) could not be loaded: {}",
                                      reason ? reason : "unknown reason")};
  }
  NvmlApi api;
  std::string missing;
  auto find = [&](auto& pointer, const char* name) {
    pointer = reinterpret_cast<std::remove_reference_t<decltype(pointer)>>(dlsym(library, name));
  };
  auto resolve = [&](auto& pointer, const char* name) {
    find(pointer, name);
    if (!pointer) missing += missing.empty() ? name : fmt::format(", {}", name);
  };
  resolve(api.init, "nvmlInit_v2");
  resolve(api.handle_by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
  resolve(api.total_energy, "nvmlDeviceGetTotalEnergyConsumption");
  resolve(api.samples, "nvmlDeviceGetSamples");
  resolve(api.clock, "nvmlDeviceGetClockInfo");
  resolve(api.temperature, "nvmlDeviceGetTemperature");
  resolve(api.error_string, "nvmlErrorString");
  find(api.power_usage, "nvmlDeviceGetPowerUsage");
  find(api.enforced_power_limit, "nvmlDeviceGetEnforcedPowerLimit");
  find(api.clock_reasons, "nvmlDeviceGetCurrentClocksEventReasons");
  if (!api.clock_reasons) find(api.clock_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  if (!missing.empty()) return {std::nullopt, fmt::format("the NVML library is too old: it lacks {}", missing)};
  if (NvmlReturn r = api.init(); r != kNvmlSuccess) {
    return {std::nullopt, fmt::format("nvmlInit_v2 failed: {}", api.error_string(r))};
  }
  return {std::move(api), {}};
}

}  // namespace

const NvmlApi& nvml() {
  static const LoadedNvml loaded = load_nvml();
  if (!loaded.api) throw BackendError(loaded.problem);
  return *loaded.api;
}

void check_nvml(NvmlReturn result, const char* call, const std::string& bus_id) {
  if (result != kNvmlSuccess) {
    throw BackendError(fmt::format("{} failed for the GPU at {}: {}", call, bus_id, nvml().error_string(result)));
  }
}

NvmlDevice nvml_device(const std::string& pci_bus_id) {
  NvmlDevice device = nullptr;
  check_nvml(nvml().handle_by_bus_id(pci_bus_id.c_str(), &device), "nvmlDeviceGetHandleByPciBusId_v2", pci_bus_id);
  return device;
}

}  // namespace steer::cuda
