// Warnings from the device's conditions: throttled clocks, a power limit, heat, loaded cores.
#include "tuner/conditions_watch.hpp"

#include <gtest/gtest.h>

namespace steer::tuner_detail {
namespace {

Result at(double sm_clock_mhz, std::string throttle = {}, double power_watts = 300, double temperature_c = 60) {
  Result r;
  r.configuration = {{"T", Value(1)}};
  r.conditions = DeviceConditions{.sm_clock_mhz = sm_clock_mhz, .power_watts = power_watts,
                                  .power_limit_watts = 700, .temperature_c = temperature_c,
                                  .throttle = std::move(throttle)};
  return r;
}

TEST(ConditionsWatch, SaysNothingWhileTheGpuRunsAsUsual) {
  ConditionsWatch watch;
  for (int test = 1; test <= 20; ++test) EXPECT_TRUE(watch.observe(at(1980 - test % 3 * 15), test).empty());
  Result unread;  // a backend that reads nothing
  EXPECT_TRUE(watch.observe(unread, 21).empty());
  EXPECT_TRUE(watch.observe(Result{.conditions = DeviceConditions{}}, 22).empty()) << "NaN readings say nothing";
  EXPECT_TRUE(watch.summary().empty());
}

TEST(ConditionsWatch, ASmClockBelowTheRunsUsualIsADropOnceThereIsAUsual) {
  ConditionsWatch watch;
  EXPECT_TRUE(watch.observe(at(1200), 1).empty()) << "no usual clock yet";
  for (int test = 2; test <= 6; ++test) EXPECT_TRUE(watch.observe(at(1980), test).empty());
  const auto warnings = watch.observe(at(1410), 7);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].rfind("the GPU's SM clock was 1410 MHz in test 7 (T=1), below the run's usual 1980 MHz:", 0), 0u)
      << warnings[0];
  EXPECT_TRUE(watch.observe(at(1400), 8).empty()) << "once per kind";
  EXPECT_TRUE(watch.observe(at(1800), 9).empty()) << "within 10 % of the usual";
  EXPECT_EQ(watch.summary(), std::vector<std::string>{"the GPU's SM clock was below its usual in 2 of 9 tests (steer "
                                                      "export shows each test's conditions)"});
}

TEST(ConditionsWatch, APowerCapHeatAndHardwareSlowdownsAreEachSaidOnce) {
  ConditionsWatch watch;
  auto warnings = watch.observe(at(1980, "", 690), 1);  // 98.6 % of the limit, no reason given
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].rfind("the GPU ran at its power limit in test 1 (T=1): 690 W of 700 W:", 0), 0u) << warnings[0];
  warnings = watch.observe(at(1700, "power cap, thermal slowdown (software)", 640, 87), 2);
  ASSERT_EQ(warnings.size(), 1u) << "the power limit was said already";
  EXPECT_EQ(warnings[0].rfind("the GPU slowed its clocks for heat in test 2 (T=1) at 87 °C (power cap, thermal "
                              "slowdown (software))",
                              0),
            0u)
      << warnings[0];
  warnings = watch.observe(at(1700, "hardware slowdown"), 3);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("hardware slowdown in test 3"), std::string::npos);
  EXPECT_EQ(watch.summary(), std::vector<std::string>{"the GPU ran at its power limit in 2 of 3 tests (steer export "
                                                      "shows each test's conditions)"});
}

TEST(ConditionsWatch, APowerCapReadWellBelowTheLimitSaysTheReadingMissesThePeaks) {
  ConditionsWatch watch;
  const auto warnings = watch.observe(at(1965, "power cap", 371), 4);  // a sample well below 700 W
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].rfind("the GPU ran at its power limit in test 4 (T=1) (the driver reports power cap, SM clock "
                              "1965 MHz; the 371 W of 700 W read after the test miss the peaks):",
                              0),
            0u)
      << warnings[0];
}

TEST(ConditionsWatch, OtherProcessesLoadingACpuDevicesCores) {
  ConditionsWatch watch;
  Result quiet{.conditions = DeviceConditions{.other_load = 0.1}};
  quiet.configuration = {{"T", Value(2)}};
  EXPECT_TRUE(watch.observe(quiet, 1).empty());
  Result loaded = quiet;
  loaded.conditions->other_load = 0.5;
  const auto warnings = watch.observe(loaded, 2);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].rfind("other processes kept 50 % of the device's CPU cores busy during test 2 (T=2)", 0), 0u)
      << warnings[0];
}

}  // namespace
}  // namespace steer::tuner_detail
