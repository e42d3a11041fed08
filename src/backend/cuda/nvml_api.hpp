#pragma once
// NVML, loaded with dlopen in the worker process: the energy meter and the device monitor
// read the GPU through it. The few functions used are declared here, so the build needs no
// nvml.h (CI and development machines have none); NVML's ABI is stable, and these are its
// documented types.
#include <string>

namespace steer::cuda {

using NvmlDevice = struct NvmlDeviceOpaque*;
using NvmlReturn = int;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kNvmlTotalPowerSamples = 0;  // nvmlSamplingType_t NVML_TOTAL_POWER_SAMPLES
constexpr int kNvmlClockSm = 1;            // nvmlClockType_t NVML_CLOCK_SM
constexpr int kNvmlClockMemory = 2;        // nvmlClockType_t NVML_CLOCK_MEM
constexpr int kNvmlTemperatureGpu = 0;     // nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU

enum NvmlValueType { kDouble = 0, kUnsignedInt = 1, kUnsignedLong = 2, kUnsignedLongLong = 3, kSignedLongLong = 4,
                     kSignedInt = 5, kUnsignedShort = 6 };
union NvmlValue {
  double d;
  unsigned int ui;
  unsigned long ul;
  unsigned long long ull;
  signed long long sll;
  signed int si;
  unsigned short us;
};
struct NvmlSample {
  unsigned long long timestamp_us;  // CPU wall clock (microseconds since the epoch)
  NvmlValue value;                  // power in mW
};

struct NvmlApi {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*handle_by_bus_id)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*total_energy)(NvmlDevice, unsigned long long*) = nullptr;  // mJ
  NvmlReturn (*samples)(NvmlDevice, int, unsigned long long, int*, unsigned int*, NvmlSample*) = nullptr;
  NvmlReturn (*clock)(NvmlDevice, int, unsigned int*) = nullptr;          // MHz
  NvmlReturn (*temperature)(NvmlDevice, int, unsigned int*) = nullptr;    // °C
  const char* (*error_string)(NvmlReturn) = nullptr;
  // Optional: older drivers or some boards lack them; a missing one is a reading not taken.
  NvmlReturn (*power_usage)(NvmlDevice, unsigned int*) = nullptr;         // mW
  NvmlReturn (*enforced_power_limit)(NvmlDevice, unsigned int*) = nullptr;  // mW
  // nvmlDeviceGetCurrentClocksEventReasons (driver 535 and later), else its older name
  // nvmlDeviceGetCurrentClocksThrottleReasons: a mask of nvmlClocksEventReasons.
  NvmlReturn (*clock_reasons)(NvmlDevice, unsigned long long*) = nullptr;
};

// NVML, loaded and initialised on first use. Throws BackendError saying why it cannot be
// used (no driver library, too old, initialisation failed).
const NvmlApi& nvml();

// Throws BackendError naming the call and the GPU unless `result` is success.
void check_nvml(NvmlReturn result, const char* call, const std::string& bus_id);

// The NVML device whose PCI bus id is `pci_bus_id` ("0000:65:00.0", from
// cuDeviceGetPCIBusId). Throws BackendError.
NvmlDevice nvml_device(const std::string& pci_bus_id);

}  // namespace steer::cuda
