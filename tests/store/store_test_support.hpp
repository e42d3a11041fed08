#pragma once
// Shared by the store tests: a scratch directory per test and a field-by-field Result check.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "steer/result.hpp"

namespace steer::testing {

// A fresh directory, removed when the test ends.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("steer_store_" + std::to_string(::getpid()) + "_" + test->test_suite_name() + "_" + test->name());
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Doubles equal bit for bit, NaN equal to NaN.
inline bool same_double(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// Every field, and value types too (Value's == says 2 == 2.0).
inline void expect_same_result(const Result& expected, const Result& actual) {
  ASSERT_EQ(expected.configuration.size(), actual.configuration.size());
  for (std::size_t i = 0; i < expected.configuration.size(); ++i) {
    EXPECT_EQ(expected.configuration[i].first, actual.configuration[i].first);
    EXPECT_EQ(expected.configuration[i].second.type(), actual.configuration[i].second.type())
        << expected.configuration[i].first;
    EXPECT_EQ(expected.configuration[i].second, actual.configuration[i].second) << expected.configuration[i].first;
  }
  EXPECT_EQ(expected.config_index, actual.config_index);
  EXPECT_EQ(expected.status, actual.status);
  EXPECT_EQ(expected.message, actual.message);
  EXPECT_EQ(expected.time.repetitions, actual.time.repetitions);
  EXPECT_TRUE(same_double(expected.time.median_ms, actual.time.median_ms));
  EXPECT_TRUE(same_double(expected.time.min_ms, actual.time.min_ms));
  EXPECT_TRUE(same_double(expected.time.mean_ms, actual.time.mean_ms));
  EXPECT_TRUE(same_double(expected.time.max_ms, actual.time.max_ms));
  EXPECT_TRUE(same_double(expected.time.stddev_ms, actual.time.stddev_ms));
  ASSERT_EQ(expected.time.samples_ms.size(), actual.time.samples_ms.size());
  for (std::size_t i = 0; i < expected.time.samples_ms.size(); ++i) {
    EXPECT_TRUE(same_double(expected.time.samples_ms[i], actual.time.samples_ms[i])) << "sample " << i;
  }
  EXPECT_TRUE(same_double(expected.compile_ms, actual.compile_ms));
  EXPECT_TRUE(same_double(expected.validation_ms, actual.validation_ms));
  EXPECT_TRUE(same_double(expected.overhead_ms, actual.overhead_ms));
  EXPECT_TRUE(same_double(expected.profiling_ms, actual.profiling_ms));
  EXPECT_EQ(expected.profiling_passes, actual.profiling_passes);
  EXPECT_TRUE(same_double(expected.max_abs_error, actual.max_abs_error));
  ASSERT_EQ(expected.counters.size(), actual.counters.size());
  for (const auto& [name, value] : expected.counters) {
    auto it = actual.counters.find(name);
    ASSERT_NE(it, actual.counters.end()) << name;
    EXPECT_TRUE(same_double(value, it->second)) << name;
  }
  ASSERT_EQ(expected.energy.has_value(), actual.energy.has_value());
  if (expected.energy) {
    const EnergyStats& e = *expected.energy;
    const EnergyStats& a = *actual.energy;
    EXPECT_TRUE(same_double(e.joules_per_launch, a.joules_per_launch));
    EXPECT_TRUE(same_double(e.spread, a.spread));
    EXPECT_TRUE(same_double(e.average_watts, a.average_watts));
    EXPECT_TRUE(same_double(e.window_s, a.window_s));
    EXPECT_EQ(e.launches, a.launches);
    EXPECT_TRUE(same_double(e.sm_clock_mhz, a.sm_clock_mhz));
    EXPECT_TRUE(same_double(e.temperature_c, a.temperature_c));
  }
  ASSERT_EQ(expected.conditions.has_value(), actual.conditions.has_value());
  if (expected.conditions) {
    const DeviceConditions& e = *expected.conditions;
    const DeviceConditions& a = *actual.conditions;
    EXPECT_TRUE(same_double(e.sm_clock_mhz, a.sm_clock_mhz));
    EXPECT_TRUE(same_double(e.memory_clock_mhz, a.memory_clock_mhz));
    EXPECT_TRUE(same_double(e.power_watts, a.power_watts));
    EXPECT_TRUE(same_double(e.power_limit_watts, a.power_limit_watts));
    EXPECT_TRUE(same_double(e.temperature_c, a.temperature_c));
    EXPECT_EQ(e.throttle, a.throttle);
    EXPECT_TRUE(same_double(e.other_load, a.other_load));
  }
  EXPECT_EQ(expected.device, actual.device);
  EXPECT_EQ(expected.problem_size, actual.problem_size);
  EXPECT_EQ(expected.timestamp, actual.timestamp);
}

// A result with every field set to something distinctive.
inline Result full_result(int tile) {
  Result r;
  r.configuration = {{"TILE", Value(tile)}, {"RATIO", Value(0.5)}, {"SCALE", Value(2.0)},
                     {"USE_SHMEM", Value(true)}, {"LAYOUT", Value("row, \"major\"")}};
  r.config_index = 12'345'678'901ULL + static_cast<std::uint64_t>(tile);
  r.status = Status::InvalidOutput;
  r.message = "line one\nline two, with \"quotes\" and ünïcode";
  r.time = TimingStats::from_samples({1.25, 1.0 / 3.0, 2.5e-7, 1e30});
  r.compile_ms = 812.5;
  r.validation_ms = 3.0625;
  r.overhead_ms = 0.1;
  r.profiling_ms = 44.0;
  r.profiling_passes = 5;
  r.max_abs_error = 1.5e-3;
  r.counters = {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", 6.515303129123792},
                {"threads", 16777216.0},
                {"zero", 0.0}};
  r.energy = EnergyStats{0.0123, 0.02, 310.5, 0.5, 1234, 1980.0, 61.0};
  r.conditions = DeviceConditions{.sm_clock_mhz = 1755.0, .memory_clock_mhz = 3201.0, .power_watts = 698.5,
                                  .power_limit_watts = 700.0, .temperature_c = 71.0, .throttle = "power cap"};
  r.device = "NVIDIA H200";
  r.problem_size = "N=4096";
  r.timestamp = "2025-01-02T03:04:05.678Z";
  return r;
}

}  // namespace steer::testing
