#include "backend/cuda/energy_meter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <thread>
#include <vector>

#include "backend/cuda/nvml_api.hpp"
#include "steer/error.hpp"

namespace steer::cuda {
namespace {

std::uint64_t wall_clock_us() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

double milliwatts(const NvmlSample& sample, int type) {
  switch (type) {
    case kDouble: return sample.value.d;
    case kUnsignedInt: return sample.value.ui;
    case kUnsignedLong: return static_cast<double>(sample.value.ul);
    case kUnsignedLongLong: return static_cast<double>(sample.value.ull);
    case kSignedLongLong: return static_cast<double>(sample.value.sll);
    case kSignedInt: return sample.value.si;
    case kUnsignedShort: return sample.value.us;
    default: return std::nan("");
  }
}

// Power samples as a step function: sample i's power holds from its time stamp to the
// next sample's. Integrates it over [from, to] (µs) into joules.
struct PowerTrace {
  std::vector<std::uint64_t> times_us;
  std::vector<double> watts;

  double joules(std::uint64_t from, std::uint64_t to) const {
    double energy = 0;
    for (std::size_t i = 0; i + 1 < times_us.size(); ++i) {
      const std::uint64_t lo = std::max(times_us[i], from), hi = std::min(times_us[i + 1], to);
      if (hi > lo) energy += watts[i] * static_cast<double>(hi - lo) * 1e-6;
    }
    return energy;
  }
  // Whether the trace covers [from, to] with at least `minimum` samples inside.
  bool covers(std::uint64_t from, std::uint64_t to, int minimum) const {
    if (times_us.size() < 2 || times_us.front() > from || times_us.back() < to) return false;
    return std::count_if(times_us.begin(), times_us.end(), [&](auto t) { return t >= from && t <= to; }) >= minimum;
  }
};

}  // namespace

EnergyMeter::EnergyMeter(const std::string& pci_bus_id) : device_(nvml_device(pci_bus_id)), bus_id_(pci_bus_id) {}

EnergyStats EnergyMeter::measure(double window_s, double launch_ms, const std::function<void(int)>& launch_batch) {
  if (!(window_s > 0)) throw Error(fmt::format("the energy window must be positive, not {} s", window_s));
  const NvmlApi& api = nvml();
  auto device = static_cast<NvmlDevice>(device_);
  constexpr int kSubWindows = 5;
  constexpr int kMinimumLaunches = 3;
  const int batch = std::max(1, static_cast<int>(20.0 / std::max(launch_ms, 1e-3)));

  // Warm the GPU to its working clocks and power first: the first ~50 ms after idle
  // draw less, which would bias the first sub-window.
  launch_batch(batch);

  unsigned long long energy_start_mj = 0, energy_end_mj = 0;
  check_nvml(api.total_energy(device, &energy_start_mj), "nvmlDeviceGetTotalEnergyConsumption", bus_id_);
  const std::uint64_t start_us = wall_clock_us();
  const std::uint64_t end_target_us = start_us + static_cast<std::uint64_t>(window_s * 1e6);
  // Boundaries of the sub-windows: (time, launches so far).
  std::vector<std::pair<std::uint64_t, int>> marks{{start_us, 0}};
  int launches = 0;
  unsigned int clock_mhz = 0;
  for (int sub = 1; sub <= kSubWindows; ++sub) {
    const std::uint64_t sub_end = start_us + (end_target_us - start_us) * static_cast<std::uint64_t>(sub) / kSubWindows;
    do {
      launch_batch(batch);
      launches += batch;
    } while (wall_clock_us() < sub_end || launches < kMinimumLaunches);
    if (sub == kSubWindows / 2 + 1) (void)api.clock(device, kNvmlClockSm, &clock_mhz);  // under load
    marks.emplace_back(wall_clock_us(), launches);
  }
  const std::uint64_t end_us = marks.back().first;
  check_nvml(api.total_energy(device, &energy_end_mj), "nvmlDeviceGetTotalEnergyConsumption", bus_id_);
  unsigned int temperature = 0;
  (void)api.temperature(device, kNvmlTemperatureGpu, &temperature);

  // The samples covering the window arrive with a delay: wait for one past its end.
  PowerTrace trace;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  std::vector<NvmlSample> buffer(4096);
  for (;;) {
    unsigned int count = static_cast<unsigned int>(buffer.size());
    int type = -1;
    NvmlReturn r = api.samples(device, kNvmlTotalPowerSamples, start_us > 200'000 ? start_us - 200'000 : 0, &type,
                               &count, buffer.data());
    if (r != kNvmlSuccess) break;  // no samples on this device: the energy counter is used
    trace = {};
    for (unsigned int i = 0; i < count; ++i) {
      trace.times_us.push_back(buffer[i].timestamp_us);
      trace.watts.push_back(milliwatts(buffer[i], type) / 1e3);
    }
    if (trace.covers(start_us, end_us, 3) || std::chrono::steady_clock::now() > give_up) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

  EnergyStats stats;
  stats.launches = launches;
  stats.window_s = static_cast<double>(end_us - start_us) * 1e-6;
  stats.sm_clock_mhz = clock_mhz;
  stats.temperature_c = temperature;
  double joules = 0;
  if (trace.covers(start_us, end_us, 3)) {
    joules = trace.joules(start_us, end_us);
    std::vector<double> per_launch;
    for (std::size_t s = 1; s < marks.size(); ++s) {
      const int n = marks[s].second - marks[s - 1].second;
      if (n > 0) per_launch.push_back(trace.joules(marks[s - 1].first, marks[s].first) / n);
    }
    const auto [lo, hi] = std::minmax_element(per_launch.begin(), per_launch.end());
    const double mean = joules / launches;
    stats.spread = per_launch.size() > 1 && mean > 0 ? (*hi - *lo) / mean : 0;
  } else {
    // The counter's ~100 ms steps make this coarse over short windows: say so in the spread.
    joules = static_cast<double>(energy_end_mj - energy_start_mj) / 1e3;
    stats.spread = stats.window_s > 0 ? std::min(1.0, 0.1 / stats.window_s) : 1.0;
  }
  stats.joules_per_launch = joules / launches;
  stats.average_watts = stats.window_s > 0 ? joules / stats.window_s : 0;
  return stats;
}

}  // namespace steer::cuda
