// `steer simulate` as a user runs it: on every recording of other tools in data/recordings, and its errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "recording_files.hpp"
#include "steer_cli_runner.hpp"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using steer::test_support::run_steer;
using Outcome = steer::test_support::CliOutcome;

TEST(SimulateCommand, RunsOnEveryRecordingOfOtherTools) {
  std::vector<fs::path> files = steer::test_support::committed_recordings();
  EXPECT_GE(files.size(), 6u) << "the recordings of data/recordings were not found";
  for (const fs::path& file : steer::test_support::benchmark_hub_recordings()) files.push_back(file);
  for (const fs::path& file : files) {
    const std::string name = file.filename().string();
    Outcome outcome =
        run_steer("simulate --data '" + file.string() + "' --searcher random,exhaustive --runs 50 --json", false);
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
}

TEST(SimulateCommand, PrintsATableAndWritesCurves) {
  const fs::path curves = fs::temp_directory_path() / ("steer_simulate_" + std::to_string(getpid()) + ".csv");
  Outcome outcome = run_steer("simulate --data '" STEER_DATA_DIR
                              "/recordings/ktt/coulomb_rtx2080.ktt.json.gz' --searcher random --runs 20 --threads 2 --curves '" +
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

TEST(SimulateCommand, TraceWritesEveryTestOfEveryRunAndWhichWereProfiled) {
  const std::string stem = (fs::temp_directory_path() / ("steer_trace_" + std::to_string(getpid()))).string();
  const std::string store = STEER_SOURCE_DIR "/data/h200/coulomb_h200.db.gz";
  Outcome trained = run_steer("model train --data '" + store + "' --out '" + stem + ".model.json'", false);
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  Outcome outcome = run_steer("simulate --data '" + store + "' --searcher profile-based --model '" + stem +
                                  ".model.json' --runs 4 --seed 7 --json --details --trace '" + stem + ".csv'",
                              false);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  const nlohmann::json searcher = nlohmann::json::parse(outcome.output)["searchers"][0];

  std::ifstream in(stem + ".csv");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line,
            "searcher,run,seed,test,with_counters,status,runtime_ms,objective,well_performing,config,explanation");
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::size_t quote = line.find('"');
    std::stringstream head(line.substr(0, quote));
    for (std::string cell; std::getline(head, cell, ',');) cells.push_back(cell);
    cells.push_back(line.substr(quote));
    rows.push_back(cells);
  }
  // One row per test: each run's tests up to its first well-performing configuration.
  std::size_t expected_rows = 0;
  for (const auto& tests : searcher["run_tests"]) expected_rows += tests.get<std::size_t>();
  ASSERT_EQ(rows.size(), expected_rows);
  std::size_t row = 0;
  for (int run = 0; run < 4; ++run) {
    const auto tests = searcher["run_tests"][run].get<std::size_t>();
    for (std::size_t t = 1; t <= tests; ++t, ++row) {
      const auto& cells = rows[row];
      EXPECT_EQ(cells[0], "profile-based");
      EXPECT_EQ(cells[1], std::to_string(run));
      EXPECT_EQ(cells[2], std::to_string(7 + run)) << "run r has seed seed + r";
      EXPECT_EQ(cells[3], std::to_string(t));
      // The searcher profiles its first test and then one in n + 1 = 6 (docs/models.md).
      EXPECT_EQ(cells[4], (t - 1) % 6 == 0 ? "1" : "0") << "run " << run << ", test " << t;
      EXPECT_EQ(cells[7], "") << "the objective column is for objectives other than time";
      EXPECT_EQ(cells[8], t == tests ? "1" : "0") << "only the last test reached the target";
      EXPECT_THAT(cells[9], ::testing::StartsWith("\"")) << "the key is quoted: it holds commas";
      // Each profiled test is explained: the bottlenecks of its counters, the changes they
      // ask for and the draws that follow (the last test of a run is never followed).
      if (cells[4] == "1" && t < tests) {
        EXPECT_THAT(cells[9], ::testing::HasSubstr(",\"profiled ")) << "run " << run << ", test " << t;
        EXPECT_THAT(cells[9], ::testing::HasSubstr("; asks ")) << "run " << run << ", test " << t;
        EXPECT_THAT(cells[9], ::testing::HasSubstr("; next 5: ")) << "run " << run << ", test " << t;
      } else if (cells[4] == "0") {
        EXPECT_THAT(cells[9], ::testing::Not(::testing::HasSubstr("profiled "))) << "run " << run << ", test " << t;
      }
    }
  }
  fs::remove(stem + ".csv");
  fs::remove(stem + ".model.json");
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

// `steer simulate --json` of random search on transpose_h200, 20 runs, its own computation
// left off the clock, with `extra` options.
nlohmann::json random_on_transpose(const std::string& extra) {
  Outcome outcome = run_steer("simulate --data '" STEER_SOURCE_DIR "/data/h200/transpose_h200.db.gz' --searcher "
                              "random --runs 20 --no-searcher-time --json" + extra,
                              false);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  return nlohmann::json::parse(outcome.output);
}

// Compiles ahead, as on a device: random search proposes a window of 2 at a time, and the
// next one compiles on the modelled compile stream while a test runs, so the same tests
// take less simulated time than with every compile charged before its test.
TEST(SimulateCommand, CompilesRunAheadUnlessToldNotTo) {
  const nlohmann::json ahead = random_on_transpose(" --no-score");
  const nlohmann::json inline_compiles = random_on_transpose(" --no-score --compile-threads 0");
  EXPECT_EQ(ahead["compile_threads"], 1);
  EXPECT_EQ(inline_compiles["compile_threads"], 0);
  const nlohmann::json& a = ahead["searchers"][0];
  const nlohmann::json& b = inline_compiles["searchers"][0];
  EXPECT_EQ(a["mean_tests"], b["mean_tests"]) << "the same tests, in the same order";
  // transpose_h200 compiles for 116 ms and runs for 135 ms a test on average.
  EXPECT_LT(a["mean_time_s"].get<double>(), 0.7 * b["mean_time_s"].get<double>());

  Outcome table = run_steer("simulate --data '" STEER_SOURCE_DIR "/data/h200/transpose_h200.db.gz' --searcher "
                            "random --runs 2 --no-score",
                            false);
  EXPECT_NE(table.output.find("compiles run ahead on 1 compile stream"), std::string::npos) << table.output;
}

// --compile-times mean charges every valid test the recording's mean compile: the same tests
// are made, the simulated time changes, the report says which was charged, and a mode it
// does not know is refused.
TEST(SimulateCommand, CompileTimesAreTheRecordedOnesOrTheirMean) {
  const nlohmann::json recorded = random_on_transpose(""), mean = random_on_transpose(" --compile-times mean");
  EXPECT_EQ(recorded["compile_times"], "recorded");
  EXPECT_EQ(mean["compile_times"], "mean");
  EXPECT_EQ(recorded["searchers"][0]["mean_tests"], mean["searchers"][0]["mean_tests"]);
  EXPECT_NE(recorded["searchers"][0]["mean_time_s"], mean["searchers"][0]["mean_time_s"]);
  EXPECT_NEAR(recorded["score"]["test_cost_ms"].get<double>(), mean["score"]["test_cost_ms"].get<double>(), 1e-6)
      << "random search's time per test is the recording's either way";

  Outcome table = run_steer("simulate --data '" STEER_SOURCE_DIR "/data/h200/transpose_h200.db.gz' --searcher "
                            "random --runs 2 --no-score --compile-times mean",
                            false);
  EXPECT_NE(table.output.find("each test is charged the mean recorded compile of its outcome"), std::string::npos)
      << table.output;
  Outcome wrong = run_steer("simulate --data '" STEER_SOURCE_DIR "/data/h200/transpose_h200.db.gz' --searcher "
                            "random --runs 2 --compile-times median");
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_NE(wrong.output.find("--compile-times"), std::string::npos) << wrong.output;
}

// The replay standing in for N devices: the same searches, tests run N at a time on the
// simulated clock, and the time to the target shrinks with the devices. Each device compiles
// its own tests, so the one-device run is measured without compiles ahead too.
TEST(SimulateCommand, DevicesSimulatesTuningOnThatManyDevicesAtOnce) {
  auto mean_time = [](int devices) {
    Outcome outcome = run_steer("simulate --data '" STEER_SOURCE_DIR "/data/h200/transpose_h200.db.gz' --searcher "
                                "random --runs 20 --no-score --no-searcher-time --compile-threads 0 --json --devices " +
                                    std::to_string(devices),
                                false);
    EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
    return nlohmann::json::parse(outcome.output)["searchers"][0];
  };
  const nlohmann::json one = mean_time(1), four = mean_time(4);
  EXPECT_EQ(four["failed_runs"], 0);
  // Random search tests the same configurations in the same order on any number of devices.
  EXPECT_NEAR(four["mean_tests"].get<double>(), one["mean_tests"].get<double>(), 0.1 * one["mean_tests"].get<double>());
  EXPECT_LT(four["mean_time_s"].get<double>(), one["mean_time_s"].get<double>() / 3) << "at least 3x on 4 devices";
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
  expect_replayed("runs/profile_based_gemm_h200.db.gz", 10, 10, 50);
  // The failed configurations have no counters and stay, as they cost a test anyway. (The
  // transpose recording is exhaustive, so these counts no longer change as recordings grow.)
  expect_replayed("transpose_h200.db.gz", 1836, 1784, 0);

  Outcome none = run_steer("simulate --data '" STEER_DATA_DIR
                           "/recordings/ktt/pnpoly_rtx3090.ktt.json.gz' --searcher random --runs 5 --with-counters",
                           true);
  EXPECT_NE(none.exit_code, 0);
  EXPECT_THAT(none.output, HasSubstr("no test has counters"));
}

TEST(SimulateCommand, AnEnergyObjectiveReplaysTheConfigurationsWithEnergy) {
  // gemm_h200 holds energy for 1,078 of its 5,788 configurations (data/h200/README.md).
  Outcome outcome = run_steer("simulate --data '" STEER_SOURCE_DIR
                              "/data/h200/gemm_h200.db.gz' --searcher random --runs 5 --objective energy --json",
                              false);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  nlohmann::json report = nlohmann::json::parse(outcome.output);
  EXPECT_EQ(report["objective"], "energy");
  EXPECT_EQ(report["configs"], 1078);
  EXPECT_EQ(report["left_out_without_energy"], 5788 - 1078);
  EXPECT_GT(report["best_time"].get<double>(), 1) << "joules per launch, not milliseconds";

  Outcome none = run_steer("simulate --data '" STEER_DATA_DIR
                           "/recordings/ktt/pnpoly_rtx3090.ktt.json.gz' --searcher random --runs 5 --objective energy",
                           true);
  EXPECT_NE(none.exit_code, 0);
  EXPECT_THAT(none.output, HasSubstr("no test has energy"));
  Outcome bad = run_steer("simulate --data '" STEER_DATA_DIR
                          "/recordings/ktt/pnpoly_rtx3090.ktt.json.gz' --searcher random --runs 5 --objective speed",
                          true);
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.output, HasSubstr("speed"));
}

TEST(SimulateCommand, TakesTheTuningOfAStoreWithSeveral) {
  const fs::path db = fs::temp_directory_path() / ("steer_two_tunings_" + std::to_string(getpid()) + ".db");
  fs::remove(db);
  for (const char* file : {"coulomb_rtx2080", "pnpoly_rtx2080ti"}) {
    ASSERT_EQ(run_steer("import '" STEER_DATA_DIR "/recordings/ktt/" + std::string(file) + ".ktt.json.gz' --db '" +
                            db.string() + "'",
                        true)
                  .exit_code,
              0);
  }
  Outcome which = run_steer("simulate --data '" + db.string() + "' --searcher random --runs 2 --no-score", true);
  EXPECT_EQ(which.exit_code, 1);
  EXPECT_THAT(which.output, HasSubstr("choose one with --tuning ID"));
  Outcome second =
      run_steer("simulate --data '" + db.string() + "' --tuning 2 --searcher random --runs 2 --no-score --json", false);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_EQ(nlohmann::json::parse(second.output)["kernel"], "Pnpoly");
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
}

TEST(SimulateCommand, DetailsGiveEveryRunAndTheCurves) {
  Outcome outcome = run_steer("simulate --data '" STEER_DATA_DIR
                              "/recordings/ktt/coulomb_rtx2080.ktt.json.gz' --searcher exhaustive --runs 4 --json --details",
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

TEST(SimulateCommand, ScorePrintsThePerformanceScoreOnBothAxes) {
  const std::string coulomb =
      "simulate --no-searcher-time --data '" STEER_DATA_DIR "/recordings/ktt/coulomb_rtx2080.ktt.json.gz' ";
  Outcome plain = run_steer(coulomb + "--searcher random,exhaustive --runs 20 --json --no-score", false);
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  nlohmann::json without = nlohmann::json::parse(plain.output);
  EXPECT_TRUE(without["score"].is_null()) << "left out with --no-score";
  EXPECT_TRUE(without["searchers"][0]["score_fevals"].is_null());

  // The default, as --score says.
  Outcome scored = run_steer(coulomb + "--searcher random,exhaustive --runs 20 --json --details", false);
  ASSERT_EQ(scored.exit_code, 0) << scored.output;
  nlohmann::json with = nlohmann::json::parse(scored.output);
  const nlohmann::json& cutoffs = with["score"];
  EXPECT_EQ(cutoffs["time_points"], 1000);
  EXPECT_EQ(cutoffs["end_percentile"], 0.95);
  EXPECT_GT(cutoffs["end_tests"].get<int>(), cutoffs["start_tests"].get<int>());
  EXPECT_GT(cutoffs["test_cost_ms"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(cutoffs["end_s"].get<double>(),
                   cutoffs["end_tests"].get<double>() * cutoffs["median_test_cost_ms"].get<double>() / 1e3);
  const std::size_t test_points = cutoffs["end_tests"].get<std::size_t>() - cutoffs["start_tests"].get<std::size_t>() + 1;
  for (std::size_t s = 0; s < 2; ++s) {
    const nlohmann::json& searcher = with["searchers"][s];
    EXPECT_TRUE(searcher["score_fevals"].is_number()) << s;
    EXPECT_TRUE(searcher["score_time"].is_number()) << s;
    EXPECT_EQ(searcher["score_curve_fevals"]["x"].size(), test_points);
    EXPECT_EQ(searcher["score_curve_time"]["score"].size(), 1000u);
    // The figures to the target are those of the runs without the score.
    EXPECT_EQ(searcher["mean_tests"], without["searchers"][s]["mean_tests"]);
    EXPECT_EQ(searcher["mean_time_s"], without["searchers"][s]["mean_time_s"]);
  }

  Outcome table = run_steer(coulomb + "--searcher random --runs 20 --score --score-resolution 10", false);
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_THAT(table.output, HasSubstr("performance score P: tests "));
  EXPECT_THAT(table.output, HasSubstr("P tests"));
  EXPECT_THAT(table.output, HasSubstr("P time"));
}

TEST(SimulateCommand, ScoresSeveralSpacesAndTheRunsOfAnotherTool) {
  const std::string coulomb = STEER_DATA_DIR "/recordings/ktt/coulomb_rtx2080.ktt.json.gz";
  const std::string pnpoly = STEER_DATA_DIR "/recordings/ktt/pnpoly_rtx2080ti.ktt.json.gz";
  // Two runs of a hand-made strategy on coulomb: a slow configuration first, then the
  // space's best (0.770 ms, valid in the recording), the second after a failed test.
  const fs::path runs = fs::temp_directory_path() / ("steer_runs_" + std::to_string(getpid()) + ".json");
  std::ofstream(runs) << R"({"tool": "Kernel Tuner 1.5.0", "data": "coulomb_rtx2080.ktt.json.gz",
"strategies": {"hand": [{"tests": [[1.0, 5.0], [2.0, 0.7702]]}, {"tests": [[1.0, null], [2.5, 5.0], [3.0, 0.7702]]}]}})";
  Outcome both = run_steer("simulate --data '" + coulomb + "," + pnpoly +
                               "' --searcher default,random --runs 10 --score --json --score-runs '" + runs.string() + "'",
                           false);
  ASSERT_EQ(both.exit_code, 0) << both.output;
  const nlohmann::json json = nlohmann::json::parse(both.output);
  ASSERT_EQ(json["spaces"].size(), 2u);
  const nlohmann::json& first = json["spaces"][0]["searchers"];
  ASSERT_EQ(first.size(), 3u) << "the tool's runs are scored on the recording they were made on";
  EXPECT_EQ(first[2]["name"], "kernel_tuner:hand");
  EXPECT_TRUE(first[2]["score_time"].is_number());
  EXPECT_EQ(json["spaces"][1]["searchers"].size(), 2u);
  ASSERT_EQ(json["aggregate"].size(), 2u) << "only what every space scored";
  const nlohmann::json& aggregate = json["aggregate"][0];
  EXPECT_EQ(aggregate["name"], "default");
  EXPECT_EQ(aggregate["spaces"], 2);
  const double a = json["spaces"][0]["searchers"][0]["score_time"], b = json["spaces"][1]["searchers"][0]["score_time"];
  EXPECT_DOUBLE_EQ(aggregate["score_time"].get<double>(), (a + b) / 2);
  EXPECT_DOUBLE_EQ(aggregate["score_time_spread"].get<double>(), std::abs(a - b) / 2);

  Outcome table = run_steer("simulate --data '" + coulomb + "," + pnpoly + "' --searcher random --runs 5 --score", false);
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_THAT(table.output, HasSubstr("performance score P over 2 spaces"));

  Outcome elsewhere =
      run_steer("simulate --data '" + pnpoly + "' --searcher random --runs 5 --score --score-runs '" + runs.string() + "'", true);
  EXPECT_EQ(elsewhere.exit_code, 1);
  EXPECT_THAT(elsewhere.output, HasSubstr("coulomb_rtx2080.ktt.json.gz")) << "names where the runs were made";
  std::ofstream(runs) << R"({"strategies": {"hand": [{"tests": [[2.0, 1.0], [1.0, 1.0]]}]}})";
  Outcome backwards = run_steer("simulate --data '" + coulomb + "' --searcher random --runs 5 --score --score-runs '" +
                                    runs.string() + "'",
                                true);
  EXPECT_EQ(backwards.exit_code, 1);
  EXPECT_THAT(backwards.output, HasSubstr("go back in time"));
  fs::remove(runs);
}

TEST(SimulateCommand, ExplainsWhatIsWrong) {
  const std::string pnpoly = "--data '" STEER_DATA_DIR "/recordings/ktt/pnpoly_rtx2080ti.ktt.json.gz'";
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
