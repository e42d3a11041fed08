// Bottleneck analysis (method.md §3): each equation on hand-computed cases, the edge cases
// (no traffic, no instructions, unknown devices), and real recordings.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "counters/recordings.hpp"
#include "steer/backend.hpp"
#include "steer/expert.hpp"

namespace steer {
namespace {

constexpr double kTolerance = 1e-12;

const DeviceFacts kH200{132, {9, 0}, CounterFamily::VoltaPlus};
const DeviceFacts kRtx2080Ti{68, {7, 5}, CounterFamily::Ktt};
const DeviceFacts kGtx1070{15, {6, 1}, CounterFamily::PreVolta};

// Every input counter at zero, except full warps (so instruction shares are defined) and
// enough threads to fill an H200 (so b_paral is 0); tests set what they examine.
CounterValues quiet_counters() {
  CounterValues counters;
  for (std::string_view name : expert_input_counters()) counters[std::string(name)] = 0.0;
  counters["WARP_E"] = 100.0;
  counters["WARP_NP_E"] = 100.0;
  counters["SM_E"] = 100.0;
  counters["OCC"] = 100.0;
  counters["threads"] = 1e9;
  return counters;
}

// ---- Memory (eq. 2–4) -----------------------------------------------------------------

TEST(MemoryBottlenecks, SplitUtilisationByReadsAndWrites) {
  CounterValues c = quiet_counters();
  c["DRAM_RT"] = 300, c["DRAM_WT"] = 100, c["DRAM_U"] = 8;  // 300/400·8/10 = 0.6; 100/400·8/10 = 0.2
  c["L2_RT"] = 1, c["L2_WT"] = 4, c["L2_U"] = 5;            // 1/5·5/10 = 0.1;     4/5·5/10 = 0.4
  c["SHR_LT"] = 7, c["SHR_WT"] = 3, c["SHR_U"] = 10;        // 7/10·10/10 = 0.7;   3/10·10/10 = 0.3
  c["TEX_U"] = 7.5;                                         // 7.5/10 = 0.75
  Bottlenecks b = analyse_bottlenecks(c, kH200);
  EXPECT_NEAR(b.dram_read, 0.6, kTolerance);
  EXPECT_NEAR(b.dram_write, 0.2, kTolerance);
  EXPECT_NEAR(b.l2_read, 0.1, kTolerance);
  EXPECT_NEAR(b.l2_write, 0.4, kTolerance);
  EXPECT_NEAR(b.shr_load, 0.7, kTolerance);
  EXPECT_NEAR(b.shr_store, 0.3, kTolerance);
  EXPECT_NEAR(b.tex, 0.75, kTolerance);
}

TEST(MemoryBottlenecks, NoTrafficIsNoBottleneckEvenWithUtilisation) {
  CounterValues c = quiet_counters();
  c["DRAM_U"] = 5;  // reported load but no sectors moved: 0/0 -> 0, not NaN
  c["SHR_U"] = 3;
  Bottlenecks b = analyse_bottlenecks(c, kH200);
  EXPECT_EQ(b.dram_read, 0.0);
  EXPECT_EQ(b.dram_write, 0.0);
  EXPECT_EQ(b.shr_load, 0.0);
  EXPECT_EQ(b.shr_store, 0.0);
}

TEST(LocalMemoryBottleneck, VoltaPlusSharesLocalSectorsOverL2Writes) {
  CounterValues c = quiet_counters();
  c["LOC_O"] = 50, c["L2_WT"] = 200;                  // local_share = 50/200 = 0.25
  c["DRAM_U"] = 2, c["L2_U"] = 6, c["TEX_U"] = 4;     // busiest memory: L2, 6
  Bottlenecks b = analyse_bottlenecks(c, kH200);
  EXPECT_NEAR(b.local_share, 0.25, kTolerance);
  EXPECT_NEAR(b.local, 0.15, kTolerance);             // 0.25·6/10
}

TEST(LocalMemoryBottleneck, VoltaPlusShareIsCappedAtOne) {
  CounterValues c = quiet_counters();
  c["LOC_O"] = 500, c["L2_WT"] = 200, c["TEX_U"] = 9;  // 500/200 = 2.5 -> 1
  Bottlenecks b = analyse_bottlenecks(c, kH200);
  EXPECT_EQ(b.local_share, 1.0);
  EXPECT_NEAR(b.local, 0.9, kTolerance);               // 1·9/10
}

TEST(LocalMemoryBottleneck, NoL2WritesGiveNoLocalShare) {
  CounterValues c = quiet_counters();
  c["LOC_O"] = 500, c["L2_WT"] = 0, c["L2_U"] = 9;
  Bottlenecks b = analyse_bottlenecks(c, kH200);
  EXPECT_EQ(b.local_share, 0.0);
  EXPECT_EQ(b.local, 0.0);
}

TEST(LocalMemoryBottleneck, PreVoltaReadsTheOverheadPercentage) {
  CounterValues c = quiet_counters();
  c["LOC_O"] = 40, c["L2_WT"] = 1e6;                  // local_memory_overhead 40 % -> 0.4
  c["DRAM_U"] = 7, c["L2_U"] = 3, c["TEX_U"] = 1;     // busiest: DRAM, 7
  Bottlenecks b = analyse_bottlenecks(c, kGtx1070);
  EXPECT_NEAR(b.local_share, 0.4, kTolerance);
  EXPECT_NEAR(b.local, 0.28, kTolerance);             // 0.4·7/10
}

// ---- Instructions (eq. 5–8) -----------------------------------------------------------

// INST_EXE 1000 warp instructions at 80 % warp efficiency and 50 % non-predicated:
// ins_fitted = 32·1000·(100/80)·(100/50) = 32000·1.25·2 = 80000.
// FP32 60000 -> share 0.75; INT 8000 -> share 0.1; util_max = 0.75. INST_ISSUE_U 40 %.
CounterValues instruction_mix() {
  CounterValues c = quiet_counters();
  c["INST_EXE"] = 1000, c["WARP_E"] = 80, c["WARP_NP_E"] = 50;
  c["INST_F32"] = 60000, c["INST_INT"] = 8000;
  c["INST_ISSUE_U"] = 40;
  return c;
}

TEST(InstructionBottlenecks, VoltaPlusUsesTwoIssuePaths) {
  Bottlenecks b = analyse_bottlenecks(instruction_mix(), kH200);
  EXPECT_NEAR(b.ins_fitted, 80000.0, kTolerance);
  EXPECT_NEAR(b.ins_util, 0.8, kTolerance);   // min(1, 40/50)
  EXPECT_NEAR(b.inst_f32, 0.6, kTolerance);   // 0.75·0.8
  EXPECT_NEAR(b.inst_int, 0.08, kTolerance);  // 0.1·0.8
  EXPECT_EQ(b.inst_f64, 0.0);
  EXPECT_NEAR(b.util_max, 0.75, kTolerance);
  // b_issue = (1 − 40/100)·(0.75 − 0.7)/(1 − 0.7) = 0.6·(1/6) = 0.1
  EXPECT_NEAR(b.issue, 0.1, kTolerance);
}

TEST(InstructionBottlenecks, PreVoltaUsesOneIssuePath) {
  Bottlenecks b = analyse_bottlenecks(instruction_mix(), kGtx1070);
  EXPECT_NEAR(b.ins_util, 0.4, kTolerance);  // 40/100
  EXPECT_NEAR(b.inst_f32, 0.3, kTolerance);  // 0.75·0.4
  EXPECT_NEAR(b.issue, 0.1, kTolerance);     // same formula as Volta+
}

TEST(InstructionBottlenecks, IssueUtilisationIsCappedAtOne) {
  CounterValues c = instruction_mix();
  c["INST_ISSUE_U"] = 80;  // 80/50 = 1.6 -> 1
  Bottlenecks b = analyse_bottlenecks(c, kH200);
  EXPECT_EQ(b.ins_util, 1.0);
  EXPECT_NEAR(b.inst_f32, 0.75, kTolerance);
  // b_issue = (1 − 0.8)·(0.75 − 0.7)/0.3 = 0.2/6
  EXPECT_NEAR(b.issue, 0.2 / 6.0, kTolerance);
}

TEST(InstructionBottlenecks, ComputeBoundLowersTheIssueThreshold) {
  ExpertOptions compute_bound;
  compute_bound.compute_bound = true;
  Bottlenecks b = analyse_bottlenecks(instruction_mix(), kH200, compute_bound);
  // r = 0.5: b_issue = (1 − 0.4)·(0.75 − 0.5)/(1 − 0.5) = 0.6·0.5 = 0.3
  EXPECT_NEAR(b.issue, 0.3, kTolerance);
}

TEST(InstructionBottlenecks, NoDominantTypeMeansNoIssueBottleneck) {
  CounterValues c = instruction_mix();
  c["INST_F32"] = 40000;  // share 0.5 ≤ 0.7: w = 0
  EXPECT_EQ(analyse_bottlenecks(c, kH200).issue, 0.0);
}

TEST(InstructionBottlenecks, NoInstructionsOrNoWarpEfficiencyGiveZero) {
  CounterValues c = instruction_mix();
  c["INST_EXE"] = 0;
  Bottlenecks none = analyse_bottlenecks(c, kH200);
  EXPECT_EQ(none.ins_fitted, 0.0);
  EXPECT_EQ(none.inst_f32, 0.0);
  EXPECT_EQ(none.issue, 0.0);
  c = instruction_mix();
  c["WARP_E"] = 0;  // 100/0 is taken as 0
  Bottlenecks no_warps = analyse_bottlenecks(c, kH200);
  EXPECT_EQ(no_warps.ins_fitted, 0.0);
  EXPECT_EQ(no_warps.inst_f32, 0.0);
}

// ---- Parallelism (eq. 9–10) -----------------------------------------------------------

TEST(ParallelismBottlenecks, IdleSmsAndLowOccupancy) {
  CounterValues c = quiet_counters();
  c["SM_E"] = 75, c["OCC"] = 40;
  Bottlenecks b = analyse_bottlenecks(c, kH200);
  EXPECT_NEAR(b.sm, 0.25, kTolerance);         // (100 − 75)/100
  EXPECT_NEAR(b.occupancy, 0.6, kTolerance);   // 1 − 40/100
}

TEST(ParallelismBottlenecks, H200NeedsFiveThreadsPerCore) {
  // cores = 132 SMs × 128 = 16896; 5·cores = 84480.
  CounterValues c = quiet_counters();
  c["threads"] = 42240;  // (84480 − 42240)/84480 = 0.5
  Bottlenecks b = analyse_bottlenecks(c, kH200);
  EXPECT_EQ(b.cores, 16896.0);
  EXPECT_NEAR(b.parallelism, 0.5, kTolerance);
  c["threads"] = 84480;
  EXPECT_EQ(analyse_bottlenecks(c, kH200).parallelism, 0.0);
  c["threads"] = 1e6;  // more than enough: max(0, negative) = 0
  EXPECT_EQ(analyse_bottlenecks(c, kH200).parallelism, 0.0);
  c["threads"] = 0;
  EXPECT_EQ(analyse_bottlenecks(c, kH200).parallelism, 1.0);
}

TEST(ParallelismBottlenecks, ThreadsPerCoreIsAnOption) {
  ExpertOptions options;
  options.threads_per_core = 10;  // 10·16896 = 168960; (168960 − 84480)/168960 = 0.5
  CounterValues c = quiet_counters();
  c["threads"] = 84480;
  EXPECT_NEAR(analyse_bottlenecks(c, kH200, options).parallelism, 0.5, kTolerance);
}

TEST(CoresPerSm, CoversKeplerToBlackwell) {
  EXPECT_EQ(fp32_cores_per_sm({3, 5}), 192);
  EXPECT_EQ(fp32_cores_per_sm({5, 2}), 128);
  EXPECT_EQ(fp32_cores_per_sm({6, 0}), 64);
  EXPECT_EQ(fp32_cores_per_sm({6, 1}), 128);
  EXPECT_EQ(fp32_cores_per_sm({7, 0}), 64);
  EXPECT_EQ(fp32_cores_per_sm({7, 5}), 64);
  EXPECT_EQ(fp32_cores_per_sm({8, 0}), 64);
  EXPECT_EQ(fp32_cores_per_sm({8, 6}), 128);
  EXPECT_EQ(fp32_cores_per_sm({8, 9}), 128);
  EXPECT_EQ(fp32_cores_per_sm({9, 0}), 128);
  EXPECT_EQ(fp32_cores_per_sm({10, 0}), 128);
  EXPECT_EQ(fp32_cores_per_sm({12, 0}), 128);
}

TEST(CoresPerSm, UnknownComputeCapabilityIsAnError) {
  EXPECT_THROW(fp32_cores_per_sm({8, 8}), CounterError);
  EXPECT_THROW(fp32_cores_per_sm({2, 0}), CounterError);
  EXPECT_THROW(fp32_cores_per_sm({13, 0}), CounterError);
  DeviceFacts future{100, {13, 0}, CounterFamily::VoltaPlus};
  EXPECT_THROW(analyse_bottlenecks(quiet_counters(), future), CounterError);
}

TEST(DeviceFactsOf, BackendDeviceInfo) {
  DeviceInfo h200;
  h200.compute_capability_major = 9, h200.compute_capability_minor = 0, h200.multiprocessors = 132;
  DeviceFacts facts = device_facts(h200);
  EXPECT_EQ(facts.sm_count, 132);
  EXPECT_EQ(facts.compute_capability, (ComputeCapability{9, 0}));
  EXPECT_EQ(facts.family, CounterFamily::VoltaPlus);
}

// ---- Inputs ---------------------------------------------------------------------------

TEST(AnalyseBottlenecks, NamesEveryMissingCounter) {
  CounterValues c = quiet_counters();
  c.erase("DRAM_U");
  c.erase("threads");
  try {
    analyse_bottlenecks(c, kH200);
    FAIL() << "expected CounterError";
  } catch (const CounterError& e) {
    EXPECT_NE(std::string(e.what()).find("DRAM_U"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("threads"), std::string::npos) << e.what();
  }
}

TEST(AnalyseBottlenecks, KeplerStandInsForTheWarpEfficienciesAndSharedUtilisation) {
  // Kepler counts neither warp efficiency nor shared_utilization: full efficiency and
  // shared_efficiency (a percentage) stand in, as in the paper's implementation.
  const DeviceFacts gtx680{8, {3, 0}, CounterFamily::PreVolta};
  CounterValues full = quiet_counters();
  full["INST_EXE"] = 1000;
  full["INST_F32"] = 20000;
  full["INST_ISSUE_U"] = 60;
  full["SHR_LT"] = 300;
  full["SHR_WT"] = 100;
  full["SHR_U"] = 4;  // tenths
  CounterValues kepler = full;
  kepler.erase("WARP_E");
  kepler.erase("WARP_NP_E");
  kepler.erase("SHR_U");
  kepler["shared_efficiency"] = 40;  // %
  const Bottlenecks expected = analyse_bottlenecks(full, gtx680);
  const Bottlenecks b = analyse_bottlenecks(kepler, gtx680);
  EXPECT_DOUBLE_EQ(b.shr_load, expected.shr_load);
  EXPECT_DOUBLE_EQ(b.shr_load, 0.75 * 0.4);
  EXPECT_DOUBLE_EQ(b.inst_f32, expected.inst_f32);
  EXPECT_DOUBLE_EQ(b.ins_fitted, 32.0 * 1000);

  kepler.erase("shared_efficiency");  // nothing stands in for the shared-memory utilisation
  try {
    analyse_bottlenecks(kepler, gtx680);
    FAIL() << "expected CounterError";
  } catch (const CounterError& e) {
    EXPECT_NE(std::string(e.what()).find("SHR_U"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("WARP_E"), std::string::npos) << e.what();
  }
}

TEST(AnalyseBottlenecks, L2ReadsAndWritesStandInForMissingDramSectors) {
  // KTT 2.3 collects no DRAM sectors: L2's read and write share splits DRAM_U.
  CounterValues c = quiet_counters();
  c["DRAM_U"] = 8;
  c["L2_RT"] = 300, c["L2_WT"] = 100, c["L2_U"] = 5;
  c.erase("DRAM_RT");
  c.erase("DRAM_WT");
  Bottlenecks b = analyse_bottlenecks(c, kRtx2080Ti);
  EXPECT_NEAR(b.dram_read, 0.75 * 0.8, kTolerance);
  EXPECT_NEAR(b.dram_write, 0.25 * 0.8, kTolerance);
  EXPECT_NEAR(b.l2_read, 0.75 * 0.5, kTolerance);

  EXPECT_TRUE(missing_expert_inputs(c).empty()) << "both stood in for";

  c["DRAM_WT"] = 100;  // one direction measured: no stand-in, the missing one is named
  EXPECT_EQ(missing_expert_inputs(c), std::vector<std::string_view>{"DRAM_RT"});
  try {
    analyse_bottlenecks(c, kRtx2080Ti);
    FAIL() << "expected CounterError";
  } catch (const CounterError& e) {
    EXPECT_NE(std::string(e.what()).find("DRAM_RT"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("DRAM_WT"), std::string::npos) << e.what();
  }
}

TEST(AnalyseBottlenecks, AnUnknownGpuGetsEveryBottleneckButParallelism) {
  // Without the GPU's SM count and compute capability there are no FP32 cores to compare
  // the thread count with: b_paral stays 0, every other bottleneck is as for a known GPU.
  CounterValues c = quiet_counters();
  c["DRAM_RT"] = 300, c["DRAM_WT"] = 100, c["DRAM_U"] = 8;
  c["INST_EXE"] = 1000, c["INST_F32"] = 20000, c["INST_ISSUE_U"] = 40;
  c["SM_E"] = 70, c["threads"] = 1000;
  const Bottlenecks known = analyse_bottlenecks(c, kRtx2080Ti);
  const Bottlenecks unknown = analyse_bottlenecks(c, kRtx2080Ti.family);
  EXPECT_GT(known.parallelism, 0.9);
  EXPECT_EQ(unknown.parallelism, 0.0);
  EXPECT_EQ(unknown.cores, 0.0);
  EXPECT_DOUBLE_EQ(unknown.dram_read, known.dram_read);
  EXPECT_DOUBLE_EQ(unknown.inst_f32, known.inst_f32);
  EXPECT_DOUBLE_EQ(unknown.sm, known.sm);
  EXPECT_DOUBLE_EQ(unknown.issue, known.issue);
}

TEST(AnalyseBottlenecks, RejectsDevicesWithoutSmsAndInvalidReaction) {
  EXPECT_THROW(analyse_bottlenecks(quiet_counters(), DeviceFacts{0, {9, 0}, CounterFamily::VoltaPlus}),
               CounterError);
  ExpertOptions options;
  options.inst_reaction = 1.0;  // (b − r)/(1 − r) would divide by zero
  EXPECT_THROW(analyse_bottlenecks(quiet_counters(), kH200, options), CounterError);
}

TEST(AnalyseBottlenecks, AllZeroCountersGiveFiniteBottlenecks) {
  CounterValues zeros;
  for (std::string_view name : expert_input_counters()) zeros[std::string(name)] = 0.0;
  Bottlenecks b = analyse_bottlenecks(zeros, kH200);
  for (double value : {b.dram_read, b.dram_write, b.l2_read, b.l2_write, b.shr_load, b.shr_store, b.tex, b.local,
                       b.inst_f32, b.inst_f64, b.inst_int, b.inst_misc, b.inst_ldst, b.inst_cont, b.inst_bconv,
                       b.issue, b.local_share, b.ins_fitted, b.ins_util, b.util_max}) {
    EXPECT_EQ(value, 0.0);
  }
  EXPECT_EQ(b.sm, 1.0);
  EXPECT_EQ(b.occupancy, 1.0);
  EXPECT_EQ(b.parallelism, 1.0);
}

TEST(AnalyseBottlenecks, ClampsCountersSlightlyOutOfRange) {
  CounterValues c = quiet_counters();
  c["SM_E"] = 100.4;  // replay passes disagree a little
  c["TEX_U"] = 10.2;
  Bottlenecks b = analyse_bottlenecks(c, kH200);
  EXPECT_EQ(b.sm, 0.0);
  EXPECT_EQ(b.tex, 1.0);
}

// ---- Real recordings (expected values computed with Python from the raw counters) ----

TEST(AnalyseRecorded, CoulombRtx2080Configuration0) {
  auto counters = canonical_counters(test_data::recorded_counters(test_data::kCoulombRtx2080, 0),
                                     CounterFamily::Ktt).values;
  Bottlenecks b = analyse_bottlenecks(counters, kRtx2080Ti);
  EXPECT_NEAR(b.dram_read, 0.033208453673869223, kTolerance);
  EXPECT_NEAR(b.dram_write, 0.0319445776173687, kTolerance);
  EXPECT_NEAR(b.l2_read, 0.012321695263088342, kTolerance);
  EXPECT_NEAR(b.l2_write, 0.012146935769301662, kTolerance);
  EXPECT_NEAR(b.tex, 0.12322187152929427, kTolerance);
  EXPECT_EQ(b.local, 0.0);
  EXPECT_NEAR(b.ins_fitted, 10938744832.0, 1e-3);  // 32 · 341835776
  EXPECT_NEAR(b.ins_util, 0.61807272656632983, kTolerance);
  EXPECT_NEAR(b.inst_f32, 0.48630568823393744, kTolerance);
  EXPECT_NEAR(b.inst_int, 0.025595036222838811, kTolerance);
  EXPECT_NEAR(b.inst_ldst, 0.062565644100272655, kTolerance);
  EXPECT_NEAR(b.util_max, 0.78680981595092025, kTolerance);
  EXPECT_NEAR(b.issue, 0.19994142044055666, kTolerance);
  EXPECT_NEAR(b.sm, 0.0007202652193716119, kTolerance);
  EXPECT_NEAR(b.occupancy, 0.15511550863569179, kTolerance);
  EXPECT_EQ(b.cores, 68.0 * 64.0);
  EXPECT_EQ(b.parallelism, 0.0);  // 16.7 M threads ≫ 5·4352
}

TEST(AnalyseRecorded, CoulombRtx2080SpillingConfiguration40) {
  auto counters = canonical_counters(test_data::recorded_counters(test_data::kCoulombRtx2080, 40),
                                     CounterFamily::Ktt).values;
  Bottlenecks b = analyse_bottlenecks(counters, kRtx2080Ti);
  // (136314880 + 136314880) local sectors / 138414945 L2 write sectors > 1 -> 1.
  EXPECT_EQ(b.local_share, 1.0);
  EXPECT_NEAR(b.local, 0.78152335442542742, kTolerance);  // L2 at 78.15 %
  EXPECT_NEAR(b.l2_write, 0.72264055887553402, kTolerance);
  EXPECT_NEAR(b.dram_write, 0.13402258303460385, kTolerance);
  EXPECT_EQ(b.issue, 0.0);  // util_max 0.39 ≤ 0.7
}

TEST(AnalyseRecorded, CoulombGtx1070PreVolta) {
  auto counters = canonical_counters(
      test_data::recorded_counters(test_data::kCoulombGtx1070, test_data::kFirstProfiledGtx1070),
      CounterFamily::PreVolta).values;
  Bottlenecks b = analyse_bottlenecks(counters, kGtx1070);
  EXPECT_NEAR(b.dram_read, 0.10719646016905249, kTolerance);
  EXPECT_NEAR(b.dram_write, 0.092803539830947496, kTolerance);
  EXPECT_NEAR(b.ins_util, 0.78096757113195314, kTolerance);  // 78.1 / 100
  EXPECT_NEAR(b.inst_f32, 0.7283403221733068, kTolerance);
  EXPECT_NEAR(b.util_max, 0.93261276024257045, kTolerance);
  EXPECT_NEAR(b.issue, 0.16983245953876952, kTolerance);
  EXPECT_NEAR(b.sm, 0.16527236957096092, kTolerance);
  EXPECT_NEAR(b.occupancy, 0.39022522107676938, kTolerance);
  EXPECT_EQ(b.parallelism, 0.0);  // 524288 threads ≥ 5 · 15 · 128 = 9600
}

}  // namespace
}  // namespace steer
