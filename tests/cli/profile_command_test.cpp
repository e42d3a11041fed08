// `steer profile --data`: the expert system's analysis of a configuration's recorded counters,
// run as a user runs it (no GPU needed). Measuring on a GPU is covered by the CUDA tests.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "steer_cli_runner.hpp"

namespace {

using ::testing::HasSubstr;

using steer::test_support::run_steer;
using Outcome = steer::test_support::CliOutcome;

const std::string kGemmSpec = "'" STEER_SOURCE_DIR "/kernels/gemm/spec.json'";
const std::string kGemmStore = "'" STEER_SOURCE_DIR "/data/h200/gemm_h200.db.gz'";
// A gemm configuration that stages A and B in shared memory (in the recording: a fixture).
const std::string kStagedInSharedMemory =
    "MWG=64,NWG=64,KWG=32,MDIMC=8,NDIMC=8,MDIMA=32,NDIMB=16,KWI=2,VWM=2,VWN=4,STRM=0,STRN=0,SA=1,SB=1,PRECISION=32";

TEST(ProfileCommand, AnalysesTheCountersARecordingHolds) {
  Outcome outcome =
      run_steer("profile " + kGemmSpec + " --data " + kGemmStore + " --config " + kStagedInSharedMemory + " --json",
                false);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  const nlohmann::json out = nlohmann::json::parse(outcome.output);
  EXPECT_EQ(out["config"], kStagedInSharedMemory);
  EXPECT_EQ(out["device"], "NVIDIA H200");
  EXPECT_EQ(out["size"], "h200");
  EXPECT_EQ(out["status"], "ok");
  EXPECT_NEAR(out["time_ms"].get<double>(), 3.82, 0.05);
  // GFLOP/s and GB/s from the spec's counts at size h200 (4096³: 2·M·N·K FLOP, 4·(MK + KN + 2MN) bytes).
  const double seconds = out["time_ms"].get<double>() / 1e3;
  EXPECT_NEAR(out["gflop_per_s"].get<double>(), 2.0 * 4096 * 4096 * 4096 / seconds / 1e9, 1e-6);
  EXPECT_NEAR(out["gb_per_s"].get<double>(), 4.0 * 4 * 4096 * 4096 / seconds / 1e9, 1e-9);
  // A gemm that stages A and B in shared memory: its strongest memory bottleneck is the
  // shared-memory loads, and the reaction asks for fewer of them (a negative change).
  const nlohmann::json& bottlenecks = out["bottlenecks"];
  EXPECT_GT(bottlenecks["shr_load"].get<double>(), bottlenecks["dram_read"].get<double>());
  EXPECT_GT(bottlenecks["shr_load"].get<double>(), bottlenecks["l2_read"].get<double>());
  EXPECT_LT(out["reaction"]["SHR_LT"].get<double>(), 0);
  EXPECT_GT(out["canonical"]["SHR_LT"].get<double>(), 0);
  // The gemm spec declares the kernel compute-bound, so FP32 work above r = 0.5 gets a reaction.
  EXPECT_GT(bottlenecks["inst_f32"].get<double>(), 0.5);
  EXPECT_LT(out["reaction"]["INST_F32"].get<double>(), 0);

  Outcome text = run_steer("profile " + kGemmSpec + " --data " + kGemmStore + " --config " + kStagedInSharedMemory,
                           false);
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_THAT(text.output, HasSubstr("recorded in"));
  EXPECT_THAT(text.output, HasSubstr(" GFLOP/s, "));
  EXPECT_THAT(text.output, HasSubstr("reaction (wanted change per counter)"));
}

TEST(ProfileCommand, NamesWhatIsMissingFromTheRecording) {
  // A live profile-based run on the H200 (60 tests, fixed): it profiled one test in six,
  // so most of its tests have no counters, and most of the space is not in it.
  const std::string store = "'" STEER_SOURCE_DIR "/data/h200/runs/profile_based_gemm_h200.db.gz'";
  const auto expect_refused = [&](const std::string& config, const std::string& reason) {
    Outcome outcome = run_steer("profile " + kGemmSpec + " --data " + store + " --config " + config, true);
    EXPECT_NE(outcome.exit_code, 0) << config;
    EXPECT_THAT(outcome.output, HasSubstr(reason)) << config;
  };
  expect_refused("MWG=32,NWG=64,KWG=32,MDIMC=8,NDIMC=8,MDIMA=16,NDIMB=8,KWI=2,VWM=2,VWN=4,STRM=0,STRN=0,SA=1,SB=1,PRECISION=32",
                 "recorded without counters");
  expect_refused("MWG=32,NWG=32,KWG=32,MDIMC=32,NDIMC=32,MDIMA=32,NDIMB=32,KWI=2,VWM=1,VWN=1,STRM=0,STRN=0,SA=0,SB=0,"
                 "PRECISION=32",
                 "not in the recording");
  expect_refused("MWG=3", "--config");
  // Options that ask for a measurement do not pass silently when nothing is measured.
  const std::string recorded = "profile " + kGemmSpec + " --data " + kGemmStore + " --config " + kStagedInSharedMemory;
  Outcome repeat = run_steer(recorded + " --repeat 3", true);
  EXPECT_NE(repeat.exit_code, 0);
  EXPECT_THAT(repeat.output, HasSubstr("--repeat"));
  Outcome size = run_steer(recorded + " --size small", true);
  EXPECT_NE(size.exit_code, 0);
  EXPECT_THAT(size.output, HasSubstr("recorded at size 'h200'"));
}

}  // namespace
