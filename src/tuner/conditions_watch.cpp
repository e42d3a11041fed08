#include "tuner/conditions_watch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace steer::tuner_detail {
namespace {

double median(std::vector<double> values) {
  auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

bool mentions(const std::string& reasons, const char* words) { return reasons.find(words) != std::string::npos; }

}  // namespace

std::vector<std::string> ConditionsWatch::observe(const Result& result, std::uint64_t test) {
  std::vector<std::string> warnings;
  if (!result.conditions) return warnings;
  ++observed_;
  const DeviceConditions& c = *result.conditions;
  const std::string which = fmt::format("test {} ({})", test, result.key());
  auto seen = [&](Kind kind, auto&& message) {
    if (counts_[kind]++ == 0) warnings.push_back(message());
  };

  if (!std::isnan(c.sm_clock_mhz)) {
    if (sm_clocks_.size() >= kUsualAfter) {
      const double usual = median(sm_clocks_);
      if (c.sm_clock_mhz < kClockDrop * usual) {
        seen(ClockDrop, [&] {
          return fmt::format("the GPU's SM clock was {:.0f} MHz in {}, below the run's usual {:.0f} MHz{}: a test "
                             "measured at lowered clocks looks slower than its configuration is",
                             c.sm_clock_mhz, which, usual, c.throttle.empty() ? "" : " (" + c.throttle + ")");
        });
      }
    }
    sm_clocks_.push_back(c.sm_clock_mhz);
  }
  const bool near_limit = c.power_watts >= kAtPowerLimit * c.power_limit_watts;  // false when either is NaN
  if (mentions(c.throttle, "power") || near_limit) {
    seen(PowerLimit, [&] {
      if (!near_limit && !std::isnan(c.power_watts) && !std::isnan(c.power_limit_watts)) {
        // The driver capped the power, yet the reading is well below the limit: NVML's power
        // is one sample after the test and misses the peaks the cap acted on, so say both.
        return fmt::format("the GPU ran at its power limit in {} (the driver reports {}{}; the {:.0f} W of {:.0f} W "
                           "read after the test miss the peaks): under the cap the clocks drop, so configurations "
                           "that draw more power are measured at lower clocks",
                           which, c.throttle,
                           std::isnan(c.sm_clock_mhz) ? "" : fmt::format(", SM clock {:.0f} MHz", c.sm_clock_mhz),
                           c.power_watts, c.power_limit_watts);
      }
      const std::string power = std::isnan(c.power_watts) ? std::string()
                                : std::isnan(c.power_limit_watts)
                                    ? fmt::format(": {:.0f} W", c.power_watts)
                                    : fmt::format(": {:.0f} W of {:.0f} W", c.power_watts, c.power_limit_watts);
      return fmt::format("the GPU ran at its power limit in {}{}{}: under the cap the clocks drop, so configurations "
                         "that draw more power are measured at lower clocks",
                         which, power, c.throttle.empty() ? "" : " (" + c.throttle + ")");
    });
  }
  if (mentions(c.throttle, "thermal")) {
    seen(Thermal, [&] {
      return fmt::format("the GPU slowed its clocks for heat in {}{} ({}): its timings are slower than the "
                         "configuration is",
                         which, std::isnan(c.temperature_c) ? "" : fmt::format(" at {:.0f} °C", c.temperature_c),
                         c.throttle);
    });
  }
  if (mentions(c.throttle, "hardware slowdown")) {
    seen(Slowdown, [&] {
      return fmt::format("the GPU reports a hardware slowdown in {} (power supply or temperature): its timings are "
                         "slower than the configuration is",
                         which);
    });
  }
  if (c.other_load > kOtherLoad) {  // false when not read (NaN)
    seen(OtherLoad, [&] {
      return fmt::format("other processes kept {:.0f} % of the device's CPU cores busy during {}: the device runs "
                         "its kernels on those cores, so its timings are slowed and noisy",
                         100 * c.other_load, which);
    });
  }
  return warnings;
}

std::vector<std::string> ConditionsWatch::summary() const {
  constexpr const char* kWhat[Kinds] = {"the GPU's SM clock was below its usual", "the GPU ran at its power limit",
                                        "the GPU slowed for heat", "the GPU reported a hardware slowdown",
                                        "other processes loaded the device's CPU cores"};
  std::vector<std::string> lines;
  for (int kind = 0; kind < Kinds; ++kind) {
    if (counts_[kind] > 1) {
      lines.push_back(fmt::format("{} in {} of {} tests (steer export shows each test's conditions)", kWhat[kind],
                                  counts_[kind], observed_));
    }
  }
  return lines;
}

}  // namespace steer::tuner_detail
