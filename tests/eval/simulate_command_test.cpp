// `steer simulate` as a user runs it: on every recording in the shared data, and its errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "steer_cli_runner.hpp"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using steer::test_support::run_steer;
using Outcome = steer::test_support::CliOutcome;

TEST(SimulateCommand, RunsOnEveryRecordingInTheSharedData) {
  int recordings = 0;
  for (const auto& entry : fs::recursive_directory_iterator(STEER_SHARED_DIR "/data")) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || name == "README.md") continue;
    ++recordings;
    Outcome outcome =
        run_steer("simulate --data '" + entry.path().string() + "' --searcher random,exhaustive --runs 50 --json",
                  false);
    ASSERT_EQ(outcome.exit_code, 0) << name << ": " << outcome.output;
    nlohmann::json report = nlohmann::json::parse(outcome.output);
    EXPECT_GT(report["best_time"].get<double>(), 0) << name;
    EXPECT_GT(report["configs"].get<int>(), 0) << name;
    EXPECT_GT(report["valid"].get<int>(), 0) << name;
    EXPECT_LE(report["valid"].get<int>(), report["configs"].get<int>()) << name;
    ASSERT_EQ(report["searchers"].size(), 2u) << name;
    const nlohmann::json& random = report["searchers"][0];
    EXPECT_EQ(random["name"], "random");
    EXPECT_EQ(random["failed_runs"], 0) << name << ": the budget is the whole space";
    EXPECT_EQ(random["ratio_to_random"], 1.0) << name;
    EXPECT_GE(random["mean_tests"].get<double>(), 1) << name;
    EXPECT_LE(random["median_tests"].get<double>(), random["p90_tests"].get<double>()) << name;
    EXPECT_GT(random["mean_time_s"].get<double>(), 0) << name;
    const nlohmann::json& exhaustive = report["searchers"][1];
    EXPECT_EQ(exhaustive["mean_tests"], exhaustive["median_tests"]) << name << ": the same order in every run";
  }
  EXPECT_GE(recordings, 6) << "the shared recordings were not found";
}

TEST(SimulateCommand, PrintsATableAndWritesCurves) {
  const fs::path curves = fs::temp_directory_path() / ("steer_simulate_" + std::to_string(getpid()) + ".csv");
  Outcome outcome = run_steer("simulate --data '" STEER_SHARED_DIR
                              "/data/ktt/coulomb_rtx2080.ktt.json.gz' --searcher random --runs 20 --threads 2 --curves '" +
                                  curves.string() + "'",
                              true);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_THAT(outcome.output, HasSubstr("210 configurations"));
  EXPECT_THAT(outcome.output, HasSubstr("random"));
  std::ifstream in(curves);
  std::string header, first;
  std::getline(in, header);
  std::getline(in, first);
  EXPECT_EQ(header, "searcher,axis,x,runs_with_valid,mean_best_ms,std_best_ms");
  EXPECT_THAT(first, ::testing::StartsWith("random,tests,1,"));
  fs::remove(curves);
}

TEST(SimulateCommand, ReadsAGzippedResultsStore) {
  // data/h200/coulomb_h200.db.gz: `steer tune --db` on the H200, every configuration, gzipped.
  Outcome outcome = run_steer(
      "simulate --data '" STEER_SOURCE_DIR "/data/h200/coulomb_h200.db.gz' --searcher random --runs 10 --json", false);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  nlohmann::json report = nlohmann::json::parse(outcome.output);
  EXPECT_EQ(report["configs"], 210);
  EXPECT_EQ(report["valid"], 210);
  EXPECT_EQ(report["device"], "NVIDIA H200");
  EXPECT_FALSE(report["searchers"][0].contains("run_tests_to_target")) << "per-run data only with --details";
}

TEST(SimulateCommand, WithCountersReplaysOnlyWhatCouldHaveBeenProfiled) {
  // Replays a recording of data/h200/ with --with-counters; expects configurations, valid
  // ones, and valid tests left out for lack of counters.
  const auto expect_replayed = [](const std::string& store, int configs, int valid, int left_out) {
    Outcome outcome = run_steer("simulate --data '" STEER_SOURCE_DIR "/data/h200/" + store +
                                    "' --searcher random --runs 5 --with-counters --json",
                                false);
    ASSERT_EQ(outcome.exit_code, 0) << store << ": " << outcome.output;
    nlohmann::json report = nlohmann::json::parse(outcome.output);
    EXPECT_EQ(report["configs"], configs) << store;
    EXPECT_EQ(report["valid"], valid) << store;
    EXPECT_EQ(report["left_out_without_counters"], left_out) << store;
  };
  // The live profile-based run on the H200 profiled one test in six: 60 valid tests, 10 with counters.
  expect_replayed("check/profile_based_gemm_h200.db.gz", 10, 10, 50);
  // The failed configurations have no counters and stay, as they cost a test anyway. (The
  // transpose recording is exhaustive, so these counts no longer change as recordings grow.)
  expect_replayed("transpose_h200.db.gz", 1836, 1784, 0);

  Outcome none = run_steer("simulate --data '" STEER_SHARED_DIR
                           "/data/ktt/pnpoly_rtx3090.ktt.json.gz' --searcher random --runs 5 --with-counters",
                           true);
  EXPECT_NE(none.exit_code, 0);
  EXPECT_THAT(none.output, HasSubstr("no test has counters"));
}

TEST(SimulateCommand, DetailsGiveEveryRunAndTheCurves) {
  Outcome outcome = run_steer("simulate --data '" STEER_SHARED_DIR
                              "/data/ktt/coulomb_rtx2080.ktt.json.gz' --searcher exhaustive --runs 4 --json --details",
                              false);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  nlohmann::json report = nlohmann::json::parse(outcome.output);
  EXPECT_EQ(report["runs"], 4);
  EXPECT_EQ(report["target"], 1.1);
  EXPECT_DOUBLE_EQ(report["target_time"].get<double>(), 1.1 * report["best_time"].get<double>());
  const nlohmann::json& exhaustive = report["searchers"][0];
  ASSERT_EQ(exhaustive["run_tests_to_target"].size(), 4u);
  for (const auto& tests : exhaustive["run_tests_to_target"]) EXPECT_EQ(tests, exhaustive["median_tests"]);
  EXPECT_EQ(exhaustive["run_tests"], exhaustive["run_tests_to_target"]) << "each run stops at the target";
  const nlohmann::json& by_test = exhaustive["curve_by_test"];
  EXPECT_EQ(by_test["x"].size(), exhaustive["median_tests"].get<std::size_t>()) << "one point per test";
  EXPECT_EQ(by_test["runs_with_valid"][0], 4);
  EXPECT_EQ(by_test["std_best_ms"][0], 0.0) << "every exhaustive run is the same";
  EXPECT_EQ(exhaustive["curve_by_time"]["x"].size(), 100u);
}

TEST(SimulateCommand, ExplainsWhatIsWrong) {
  const std::string pnpoly = "--data '" STEER_SHARED_DIR "/data/ktt/pnpoly_rtx2080ti.ktt.json.gz'";
  Outcome unknown = run_steer("simulate " + pnpoly + " --searcher random,clairvoyant --runs 1", true);
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.output, HasSubstr("unknown searcher 'clairvoyant'"));

  Outcome missing = run_steer("simulate --data /nonexistent/recording.json --searcher random", true);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.output, HasSubstr("/nonexistent/recording.json"));

  // A Kernel Tuner cache in which every configuration failed.
  const fs::path failing = fs::temp_directory_path() / ("steer_simulate_failing_" + std::to_string(getpid()) + ".json");
  std::ofstream(failing) << R"({"device_name": "X", "kernel_name": "k", "problem_size": 1024,
"tune_params_keys": ["bx"], "tune_params": {"bx": [32, 64]}, "objective": "time", "cache": {
"32": {"bx": 32, "time": "CompilationFailedConfig"}, "64": {"bx": 64, "time": "RuntimeFailedConfig"}}})";
  Outcome invalid = run_steer("simulate --data '" + failing.string() + "' --searcher random", true);
  EXPECT_EQ(invalid.exit_code, 1);
  EXPECT_THAT(invalid.output, HasSubstr("no valid configuration"));
  fs::remove(failing);
}

}  // namespace
