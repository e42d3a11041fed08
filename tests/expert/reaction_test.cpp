// The reaction PC' (method.md §4): thresholds, the compute-bound switch, signs and range.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "counters/recordings.hpp"
#include "steer/expert.hpp"
#include "steer/recording.hpp"

namespace steer {
namespace {

constexpr double kTolerance = 1e-12;

double change(const CounterValues& changes, std::string_view name) { return changes.at(std::string(name)); }

TEST(Reaction, CoversMemoryInstructionsIssueAndParallelism) {
  CounterValues changes = required_counter_changes(Bottlenecks{});
  std::vector<std::string> keys;
  for (const auto& [name, value] : changes) keys.push_back(name);
  EXPECT_THAT(keys, ::testing::UnorderedElementsAre("DRAM_RT", "DRAM_WT", "L2_RT", "L2_WT", "SHR_LT", "SHR_WT",
                                                    "TEX_RWT", "LOC_O", "INST_F32", "INST_F64", "INST_INT",
                                                    "INST_MISC", "INST_LDST", "INST_CONT", "INST_BCONV",
                                                    "INST_ISSUE_U", "SM_E", "threads"));
  // No bottleneck, no change — and +0, not -0, so reports do not show "-0".
  for (const auto& [name, value] : changes) {
    EXPECT_EQ(value, 0.0) << name;
    EXPECT_FALSE(std::signbit(value)) << name;
  }
}

TEST(Reaction, MemoryAsksToReduceByTheBottleneck) {
  Bottlenecks b;
  b.dram_read = 0.6, b.dram_write = 0.2, b.l2_read = 0.1, b.l2_write = 0.4;
  b.shr_load = 0.7, b.shr_store = 0.3, b.tex = 0.75, b.local = 0.15;
  CounterValues changes = required_counter_changes(b);
  EXPECT_EQ(change(changes, "DRAM_RT"), -0.6);
  EXPECT_EQ(change(changes, "DRAM_WT"), -0.2);
  EXPECT_EQ(change(changes, "L2_RT"), -0.1);
  EXPECT_EQ(change(changes, "L2_WT"), -0.4);
  EXPECT_EQ(change(changes, "SHR_LT"), -0.7);
  EXPECT_EQ(change(changes, "SHR_WT"), -0.3);
  EXPECT_EQ(change(changes, "TEX_RWT"), -0.75);
  EXPECT_EQ(change(changes, "LOC_O"), -0.15);
}

TEST(Reaction, InstructionsReactOnlyAboveTheThreshold) {
  Bottlenecks b;
  b.inst_f32 = 0.7;   // = r: no change
  b.inst_int = 0.69;  // < r: no change
  b.inst_ldst = 0.85; // −(0.85 − 0.7)/(1 − 0.7) = −0.5
  b.inst_misc = 1.0;  // −(1 − 0.7)/0.3 = −1
  b.inst_f64 = 0.76;  // −0.06/0.3 = −0.2
  CounterValues changes = required_counter_changes(b);
  EXPECT_EQ(change(changes, "INST_F32"), 0.0);
  EXPECT_EQ(change(changes, "INST_INT"), 0.0);
  EXPECT_NEAR(change(changes, "INST_LDST"), -0.5, kTolerance);
  EXPECT_NEAR(change(changes, "INST_MISC"), -1.0, kTolerance);
  EXPECT_NEAR(change(changes, "INST_F64"), -0.2, kTolerance);
}

TEST(Reaction, ComputeBoundReactsFromHalf) {
  ExpertOptions compute_bound;
  compute_bound.compute_bound = true;
  EXPECT_EQ(compute_bound.reaction_threshold(), 0.5);
  Bottlenecks b;
  b.inst_f32 = 0.7;   // −(0.7 − 0.5)/(1 − 0.5) = −0.4 (0 with the default r = 0.7)
  b.inst_int = 0.5;   // = r: no change
  b.inst_cont = 0.9;  // −0.4/0.5 = −0.8
  CounterValues changes = required_counter_changes(b, compute_bound);
  EXPECT_NEAR(change(changes, "INST_F32"), -0.4, kTolerance);
  EXPECT_EQ(change(changes, "INST_INT"), 0.0);
  EXPECT_NEAR(change(changes, "INST_CONT"), -0.8, kTolerance);
  EXPECT_EQ(change(required_counter_changes(b), "INST_F32"), 0.0);
}

TEST(Reaction, ThresholdsAreOptions) {
  ExpertOptions options;
  options.inst_reaction = 0.6;
  EXPECT_EQ(options.reaction_threshold(), 0.6);
  options.compute_bound = true;
  options.compute_bound_inst_reaction = 0.4;
  EXPECT_EQ(options.reaction_threshold(), 0.4);
  options.compute_bound_inst_reaction = -0.1;
  EXPECT_THROW(options.reaction_threshold(), CounterError);
}

TEST(Reaction, IssueAndParallelismAskForMore) {
  Bottlenecks b;
  b.issue = 0.1, b.sm = 0.25, b.parallelism = 0.5, b.occupancy = 0.6;
  CounterValues changes = required_counter_changes(b);
  EXPECT_EQ(change(changes, "INST_ISSUE_U"), 0.1);
  EXPECT_EQ(change(changes, "SM_E"), 0.25);
  EXPECT_EQ(change(changes, "threads"), 0.5);
  EXPECT_FALSE(changes.contains("OCC"));  // b_occ is reported, not reacted on
}

TEST(Reaction, RecordedSpillingConfigurationAsksForLessLocalAndL2Traffic) {
  DeviceFacts rtx2080ti{68, {7, 5}, CounterFamily::Ktt};
  auto counters = canonical_counters(test_data::recorded_counters(test_data::kCoulombRtx2080, 40),
                                     CounterFamily::Ktt).values;
  CounterValues changes = required_counter_changes(analyse_bottlenecks(counters, rtx2080ti));
  for (const auto& [name, value] : changes) {
    EXPECT_GE(value, -1.0) << name;
    EXPECT_LE(value, 1.0) << name;
  }
  // The strongest requests are the spills (LOC_O −0.78) and the L2 writes they cause (−0.72).
  EXPECT_NEAR(change(changes, "LOC_O"), -0.78152335442542742, kTolerance);
  EXPECT_NEAR(change(changes, "L2_WT"), -0.72264055887553402, kTolerance);
  for (const auto& [name, value] : changes) {
    if (name != "LOC_O" && name != "L2_WT") {
      EXPECT_GT(value, -0.72) << name;
    }
  }
}

TEST(Reaction, RecordedPreVoltaComputeBoundConfigurationAsksForFewerFp32) {
  DeviceFacts gtx1070{15, {6, 1}, CounterFamily::PreVolta};
  auto counters = canonical_counters(
      test_data::recorded_counters(test_data::kCoulombGtx1070, test_data::kFirstProfiledGtx1070),
      CounterFamily::PreVolta).values;
  Bottlenecks b = analyse_bottlenecks(counters, gtx1070);
  // b_fp32 = 0.7283403221733068 > 0.7: −(0.72834 − 0.7)/0.3 = −0.09446774057768946
  EXPECT_NEAR(change(required_counter_changes(b), "INST_F32"), -0.09446774057768946, kTolerance);
  EXPECT_NEAR(change(required_counter_changes(b), "INST_ISSUE_U"), 0.16983245953876952, kTolerance);
}

// Every profiled configuration of the recordings: bottlenecks in [0, 1], changes in
// [-1, 1], never NaN.
TEST(Reaction, StaysInRangeOverWholeRecordings) {
  struct Recording {
    const char* file;
    DeviceFacts device;
    std::size_t profiled;  // results with counters
  };
  const Recording recordings[] = {
      {test_data::kCoulombRtx2080, {68, {7, 5}, CounterFamily::Ktt}, 210},
      {test_data::kPnpolyRtx2080Ti, {68, {7, 5}, CounterFamily::Ktt}, 3815},
      {test_data::kCoulombGtx1070, {15, {6, 1}, CounterFamily::PreVolta}, 67},
  };
  for (const auto& [file, device, profiled] : recordings) {
    std::size_t analysed = 0;
    for (const Result& result : test_data::recording(file).results) {
      if (detect_counter_family(result.counters) != device.family) continue;  // failed or not profiled
      Bottlenecks b = analyse_bottlenecks(canonical_counters(result.counters, device.family).values, device);
      for (double value : {b.dram_read, b.dram_write, b.l2_read, b.l2_write, b.shr_load, b.shr_store, b.tex,
                           b.local, b.inst_f32, b.inst_f64, b.inst_int, b.inst_misc, b.inst_ldst, b.inst_cont,
                           b.inst_bconv, b.issue, b.sm, b.occupancy, b.parallelism}) {
        ASSERT_TRUE(value >= 0.0 && value <= 1.0) << file << " result " << result.key() << ": " << value;
      }
      for (const auto& [name, value] : required_counter_changes(b)) {
        ASSERT_TRUE(value >= -1.0 && value <= 1.0) << file << " " << name << ": " << value;
      }
      ++analysed;
    }
    EXPECT_EQ(analysed, profiled) << file;
  }
}

}  // namespace
}  // namespace steer
