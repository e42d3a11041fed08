#pragma once
// Warnings from the device's conditions (Result::conditions) as a run goes: a GPU whose
// clocks fell below their usual, that ran at its power limit or slowed for heat, or a CPU
// device whose cores other processes kept busy. Each kind is said once, when first seen,
// naming the test; at the end, how many tests each kind touched.
#include <cstdint>
#include <string>
#include <vector>

#include "steer/result.hpp"

namespace steer::tuner_detail {

class ConditionsWatch {
 public:
  // An SM clock below this share of the run's usual (the median of the earlier tests'
  // readings, once there are kUsualAfter of them) is a drop.
  static constexpr double kClockDrop = 0.9;
  static constexpr std::size_t kUsualAfter = 5;
  // Power at or above this share of the enforced limit is at the limit.
  static constexpr double kAtPowerLimit = 0.98;
  // Other processes keeping more than this share of the device's cores busy disturb it.
  static constexpr double kOtherLoad = 0.25;

  // Looks at test number `test` (1, 2, ...); returns the warnings to say now.
  std::vector<std::string> observe(const Result& result, std::uint64_t test);
  // How many of the observed tests each kind touched, for the kinds seen in more than one.
  std::vector<std::string> summary() const;

 private:
  enum Kind { ClockDrop, PowerLimit, Thermal, Slowdown, OtherLoad, Kinds };
  std::vector<double> sm_clocks_;  // readings so far
  std::uint64_t counts_[Kinds] = {};
  std::uint64_t observed_ = 0;
};

}  // namespace steer::tuner_detail
