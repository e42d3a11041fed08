// Counter tables and canonicalisation, against the real recordings in data/recordings.
// Expected values were read from the files with Python (json + gzip) and scaled by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "counters/recordings.hpp"
#include "steer/counters.hpp"

namespace steer {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using test_data::kCoulombGtx1070;
using test_data::kCoulombRtx2080;
using test_data::kFirstProfiledGtx1070;
using test_data::kPnpolyRtx2080Ti;
using test_data::recorded_counters;

double at(const CounterValues& values, std::string_view name) { return values.at(std::string(name)); }

std::vector<std::string> metrics_txt() {
  std::ifstream in(STEER_DATA_DIR "/h200/cupti_metrics.txt");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

// ---- The abbreviation list ------------------------------------------------------------

TEST(CanonicalCounters, ListsTheAbbreviationsOfTheMethodWithTheirClass) {
  auto infos = canonical_counter_infos();
  ASSERT_EQ(infos.size(), 26u);  // 25 counters of method.md §2 + threads
  EXPECT_EQ(infos.front().abbreviation, "DRAM_U");
  EXPECT_EQ(infos.back().abbreviation, "threads");
  ASSERT_NE(find_counter_info("OCC"), nullptr);
  EXPECT_EQ(find_counter_info("OCC")->counter_class, CounterClass::Stress);
  EXPECT_EQ(find_counter_info("WARP_E")->counter_class, CounterClass::Stress);
  EXPECT_EQ(find_counter_info("INST_ISSUE_U")->counter_class, CounterClass::Ops);  // as in the paper
  EXPECT_EQ(find_counter_info("threads")->counter_class, CounterClass::Ops);
  EXPECT_EQ(find_counter_info("dram__sectors_read.sum"), nullptr);
}

TEST(CanonicalCounters, PcOpsAreTheOperationCounts) {
  EXPECT_THAT(pc_ops_counters(),
              ElementsAre("DRAM_RT", "DRAM_WT", "L2_RT", "L2_WT", "TEX_RWT", "LOC_O", "SHR_LT", "SHR_WT", "INST_F32",
                          "INST_F64", "INST_INT", "INST_MISC", "INST_LDST", "INST_CONT", "INST_BCONV", "INST_EXE",
                          "INST_ISSUE_U", "threads"));
}

// ---- Default metrics and the tables ---------------------------------------------------

TEST(DefaultProfilingMetrics, AreTheReferenceMetricsValidatedOnTheH200) {
  auto metrics = default_profiling_metrics();
  std::vector<std::string> ours(metrics.begin(), metrics.end());
  EXPECT_EQ(ours, metrics_txt());
}

TEST(SelectProfilingMetrics, DefaultAllOrAListWithoutRepeats) {
  auto defaults = default_profiling_metrics();
  EXPECT_EQ(select_profiling_metrics("default"), std::vector<std::string>(defaults.begin(), defaults.end()));
  std::vector<std::string> all = select_profiling_metrics("all");
  EXPECT_EQ(all.size(), std::set<std::string>(all.begin(), all.end()).size()) << "no metric twice";
  for (std::string_view name : defaults) EXPECT_NE(std::ranges::find(all, name), all.end()) << name;
  EXPECT_NE(std::ranges::find(all, "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum"), all.end());
  EXPECT_EQ(std::ranges::find(all, "threads"), all.end()) << "the global size is not a hardware metric";
  EXPECT_EQ(select_profiling_metrics("a.sum,b.sum,a.sum"), (std::vector<std::string>{"a.sum", "b.sum"}));
  EXPECT_THROW(select_profiling_metrics(""), CounterError);
  EXPECT_THROW(select_profiling_metrics("a.sum,,b.sum"), CounterError);
  EXPECT_THROW(select_profiling_metrics("a.sum,"), CounterError);
}

TEST(DefaultProfilingMetrics, GiveEveryCanonicalCounterButTheGlobalSize) {
  CounterValues raw;
  for (std::string_view name : default_profiling_metrics()) raw[std::string(name)] = 1.0;
  auto canonical = canonical_counters(raw, CounterFamily::VoltaPlus);
  EXPECT_THAT(canonical.missing, ElementsAre("threads"));
  EXPECT_EQ(detect_counter_family(raw), CounterFamily::VoltaPlus);
}

TEST(CounterTables, KttTableIsExactlyTheSetKttRecords) {
  const CounterValues& raw = recorded_counters(kCoulombRtx2080, 0);
  std::set<std::string> table_names;
  for (const CounterMapping& row : counter_table(CounterFamily::Ktt)) {
    if (row.hardware_name != "threads") table_names.emplace(row.hardware_name);
  }
  ASSERT_EQ(table_names.size(), 33u);
  for (const std::string& name : table_names) EXPECT_TRUE(raw.contains(name)) << name;
}

TEST(CounterTables, PreVoltaNamesAreTheOnesTheGtx1070Recorded) {
  const CounterValues& raw = recorded_counters(kCoulombGtx1070, kFirstProfiledGtx1070);
  for (const CounterMapping& row : counter_table(CounterFamily::PreVolta)) {
    EXPECT_TRUE(raw.contains(std::string(row.hardware_name))) << row.hardware_name;
  }
}

// ---- Family detection -----------------------------------------------------------------

TEST(DetectCounterFamily, RecognisesEachRecording) {
  EXPECT_EQ(detect_counter_family(recorded_counters(kCoulombRtx2080, 0)), CounterFamily::Ktt);
  EXPECT_EQ(detect_counter_family(recorded_counters(kPnpolyRtx2080Ti, 0)), CounterFamily::Ktt);
  EXPECT_EQ(detect_counter_family(recorded_counters(kCoulombGtx1070, kFirstProfiledGtx1070)),
            CounterFamily::PreVolta);
}

TEST(DetectCounterFamily, NeedsAtLeastOneHardwareName) {
  EXPECT_EQ(detect_counter_family({}), std::nullopt);
  // A GTX 1070 result without profiling: only the global size and compiler facts.
  EXPECT_EQ(detect_counter_family(recorded_counters(kCoulombGtx1070, 0)), std::nullopt);
}

TEST(HasHardwareCounters, HardwareNamesOrCanonicalAbbreviationsButNotThreadsAlone) {
  EXPECT_TRUE(has_hardware_counters(recorded_counters(kCoulombRtx2080, 0)));
  EXPECT_TRUE(has_hardware_counters(recorded_counters(kCoulombGtx1070, kFirstProfiledGtx1070)));
  EXPECT_FALSE(has_hardware_counters(recorded_counters(kCoulombGtx1070, 0))) << "global size and compiler facts only";
  EXPECT_FALSE(has_hardware_counters({}));
  EXPECT_FALSE(has_hardware_counters({{"threads", 1024.0}}));
  EXPECT_FALSE(has_hardware_counters({{"GFLOP/s", 12.0}}));
  EXPECT_TRUE(has_hardware_counters({{"DRAM_RT", 5.0}, {"threads", 1024.0}}));
}

TEST(DetectCounterFamily, FollowsTheRenamedWarpMetrics) {
  CounterValues raw{{"smsp__average_thread_inst_executed_per_inst_executed.ratio", 32.0}};
  EXPECT_EQ(detect_counter_family(raw), CounterFamily::VoltaPlus);
}

TEST(CounterFamilyFor, SplitsAtVolta) {
  EXPECT_EQ(counter_family_for({6, 1}), CounterFamily::PreVolta);
  EXPECT_EQ(counter_family_for({7, 0}), CounterFamily::VoltaPlus);
  EXPECT_EQ(counter_family_for({9, 0}), CounterFamily::VoltaPlus);
  EXPECT_EQ(counter_family_for({12, 0}), CounterFamily::VoltaPlus);
}

// ---- Canonical values of real recordings ----------------------------------------------

TEST(CanonicalCountersOfKtt, CoulombRtx2080Configuration0) {
  auto canonical = canonical_counters(recorded_counters(kCoulombRtx2080, 0), CounterFamily::Ktt);
  const CounterValues& v = canonical.values;
  EXPECT_THAT(canonical.missing, IsEmpty());
  // Percentages of peak -> 0..10: raw 6.515303129123792 % etc.
  EXPECT_DOUBLE_EQ(at(v, abbr::DRAM_U), 0.6515303129123792);
  EXPECT_DOUBLE_EQ(at(v, abbr::L2_U), 0.24468631032390005);
  EXPECT_DOUBLE_EQ(at(v, abbr::TEX_U), 1.2322187152929427);
  EXPECT_DOUBLE_EQ(at(v, abbr::SHR_U), 0.0568360676086081);
  // Counts as recorded.
  EXPECT_EQ(at(v, abbr::DRAM_RT), 2100194.0);
  EXPECT_EQ(at(v, abbr::DRAM_WT), 2020263.0);
  EXPECT_EQ(at(v, abbr::L2_WT), 2100211.0);
  EXPECT_EQ(at(v, abbr::TEX_RWT), 34078720.0);
  EXPECT_EQ(at(v, abbr::INST_F32), 8606711808.0);
  EXPECT_EQ(at(v, abbr::INST_LDST), 1107296256.0);  // op_memory
  EXPECT_EQ(at(v, abbr::INST_BCONV), 50331648.0);   // op_conversion
  EXPECT_EQ(at(v, abbr::INST_EXE), 341835776.0);
  EXPECT_EQ(at(v, abbr::LOC_O), 0.0);
  // Percentages stay percentages; the warp ratio 32 threads/instruction is 32·100/32 = 100 %.
  EXPECT_DOUBLE_EQ(at(v, abbr::SM_E), 99.92797347806284);
  EXPECT_DOUBLE_EQ(at(v, abbr::OCC), 84.48844913643082);
  EXPECT_DOUBLE_EQ(at(v, abbr::INST_ISSUE_U), 30.90363632831649);
  EXPECT_DOUBLE_EQ(at(v, abbr::WARP_E), 100.0);
  EXPECT_DOUBLE_EQ(at(v, abbr::WARP_NP_E), 100.0);
  // Global size 16x64x256 blocks of 16x4 threads.
  EXPECT_EQ(at(v, abbr::THREADS), 16777216.0);
  // KTT's extra metrics stay under their names; translated names do not.
  EXPECT_DOUBLE_EQ(at(v, "smsp__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"), 43.13175090322067);
  EXPECT_FALSE(v.contains("dram__sectors_read.sum"));
}

TEST(CanonicalCountersOfKtt, LocalMemorySumsLoadAndStoreSectors) {
  // Configuration 40 spills: 136314880 local load sectors + 136314880 local store sectors.
  auto canonical = canonical_counters(recorded_counters(kCoulombRtx2080, 40), CounterFamily::Ktt);
  EXPECT_EQ(at(canonical.values, abbr::LOC_O), 272629760.0);
}

TEST(CanonicalCountersOfKtt, PnpolyRtx2080TiConfiguration0) {
  auto canonical = canonical_counters(recorded_counters(kPnpolyRtx2080Ti, 0), CounterFamily::Ktt);
  const CounterValues& v = canonical.values;
  EXPECT_THAT(canonical.missing, IsEmpty());
  EXPECT_DOUBLE_EQ(at(v, abbr::DRAM_U), 0.0709598306431418);  // 0.709598306431418 % / 10
  EXPECT_EQ(at(v, abbr::INST_INT), 132180000000.0);
  EXPECT_EQ(at(v, abbr::INST_CONT), 69000000000.0);
  EXPECT_DOUBLE_EQ(at(v, abbr::OCC), 49.90658431287185);
  EXPECT_EQ(at(v, abbr::THREADS), 20000000.0);  // 625000 blocks of 32 threads
}

TEST(CanonicalCountersOfKtt, VoltaPlusTableReadsKttDataTheSameWay) {
  const CounterValues& raw = recorded_counters(kCoulombRtx2080, 40);
  auto ktt = canonical_counters(raw, CounterFamily::Ktt);
  auto volta = canonical_counters(raw, CounterFamily::VoltaPlus);
  for (const CounterInfo& info : canonical_counter_infos()) {
    std::string name(info.abbreviation);
    EXPECT_EQ(ktt.values.at(name), volta.values.at(name)) << name;
  }
}

TEST(CanonicalCountersOfPreVolta, CoulombGtx1070FirstProfiledResult) {
  auto canonical = canonical_counters(recorded_counters(kCoulombGtx1070, kFirstProfiledGtx1070),
                                      CounterFamily::PreVolta);
  const CounterValues& v = canonical.values;
  EXPECT_THAT(canonical.missing, IsEmpty());
  // Utilisation levels are 0..10 already.
  EXPECT_EQ(at(v, abbr::DRAM_U), 2.0);
  EXPECT_EQ(at(v, abbr::L2_U), 1.0);
  EXPECT_EQ(at(v, abbr::TEX_U), 2.0);
  EXPECT_EQ(at(v, abbr::SHR_U), 0.0);
  EXPECT_EQ(at(v, abbr::DRAM_RT), 2389929.0);
  EXPECT_EQ(at(v, abbr::L2_RT), 6583647.0);
  EXPECT_EQ(at(v, abbr::TEX_RWT), 69206016.0);   // tex_cache_transactions
  EXPECT_EQ(at(v, abbr::INST_LDST), 167772160.0);  // inst_compute_ld_st
  EXPECT_EQ(at(v, abbr::INST_BCONV), 1572864.0);   // inst_bit_convert
  EXPECT_EQ(at(v, abbr::INST_EXE), 594149376.0);
  EXPECT_EQ(at(v, abbr::LOC_O), 0.0);  // local_memory_overhead, %
  // achieved_occupancy is a fraction: 0.6097747789232306 -> 60.97747789232306 %.
  EXPECT_DOUBLE_EQ(at(v, abbr::OCC), 60.97747789232306);
  EXPECT_DOUBLE_EQ(at(v, abbr::SM_E), 83.4727630429039);
  EXPECT_DOUBLE_EQ(at(v, abbr::INST_ISSUE_U), 78.09675711319531);
  EXPECT_DOUBLE_EQ(at(v, abbr::WARP_E), 100.0);
  EXPECT_DOUBLE_EQ(at(v, abbr::WARP_NP_E), 99.9889697771895);
  EXPECT_EQ(at(v, abbr::THREADS), 524288.0);  // 16x32x8 blocks of 16x8 threads
  EXPECT_EQ(at(v, "local_load_transactions"), 0.0);
  EXPECT_FALSE(v.contains("achieved_occupancy"));
}

// ---- Table semantics on hand-made counters --------------------------------------------

TEST(CanonicalCountersOfVoltaPlus, RenamedWarpMetricsGiveTheSameCounters) {
  // 24 active threads per warp instruction: 24·100/32 = 75 %.
  CounterValues renamed{{"smsp__average_thread_inst_executed_per_inst_executed.ratio", 24.0},
                        {"smsp__average_thread_inst_executed_per_inst_executed.pct", 75.0}};
  auto v = canonical_counters(renamed, CounterFamily::VoltaPlus).values;
  EXPECT_DOUBLE_EQ(at(v, abbr::WARP_E), 75.0);
  EXPECT_DOUBLE_EQ(at(v, abbr::WARP_NP_E), 75.0);
}

TEST(CanonicalCountersOfVoltaPlus, FirstAlternativePresentWins) {
  CounterValues both{{"smsp__thread_inst_executed_per_inst_executed.ratio", 16.0},
                     {"smsp__average_thread_inst_executed_per_inst_executed.ratio", 8.0}};
  auto v = canonical_counters(both, CounterFamily::VoltaPlus).values;
  EXPECT_DOUBLE_EQ(at(v, abbr::WARP_E), 50.0);  // 16·100/32, from the row listed first
  EXPECT_FALSE(v.contains("smsp__average_thread_inst_executed_per_inst_executed.ratio"));
}

TEST(CanonicalCountersOfVoltaPlus, LocalStoresAloneAreLocalTraffic) {
  // The default metric set collects only the store direction.
  CounterValues stores{{"l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum", 640.0}};
  EXPECT_EQ(at(canonical_counters(stores, CounterFamily::VoltaPlus).values, abbr::LOC_O), 640.0);
  CounterValues none{{"dram__sectors_read.sum", 1.0}};
  auto canonical = canonical_counters(none, CounterFamily::VoltaPlus);
  EXPECT_FALSE(canonical.values.contains("LOC_O"));
  EXPECT_TRUE(std::ranges::count(canonical.missing, abbr::LOC_O) == 1);
}

TEST(CanonicalCounters, CanonicalisingTwiceChangesNothing) {
  for (auto [file, index, family] : {std::tuple{kCoulombRtx2080, std::size_t{40}, CounterFamily::Ktt},
                                     std::tuple{kCoulombGtx1070, kFirstProfiledGtx1070, CounterFamily::PreVolta}}) {
    auto once = canonical_counters(recorded_counters(file, index), family);
    auto twice = canonical_counters(once.values, family);
    EXPECT_EQ(twice.values, once.values) << file;
    EXPECT_EQ(twice.missing, once.missing) << file;
  }
}

TEST(CanonicalCounters, TableValueWinsOverARawCounterOfTheSameName) {
  CounterValues raw{{"DRAM_U", 9.0}, {"dram__throughput.avg.pct_of_peak_sustained_elapsed", 40.0}};
  EXPECT_EQ(at(canonical_counters(raw, CounterFamily::VoltaPlus).values, abbr::DRAM_U), 4.0);
}

}  // namespace
}  // namespace steer
