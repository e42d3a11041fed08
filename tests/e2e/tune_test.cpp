// End-to-end: the steer binary tunes the transpose kernel on the OpenCL CPU device (PoCL),
// stores every test, and resumes after being killed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>

#include "steer/backend.hpp"
#include "steer/spec.hpp"
#include "steer/space.hpp"
#include "steer/store.hpp"
#include "steer_cli_runner.hpp"
#include "e2e/tune_support.hpp"

namespace {

using namespace e2e;

TEST(TuneEndToEnd, JsonSummaryHasTheDocumentedFields) {
  if (!have_opencl()) GTEST_SKIP() << "no OpenCL device";
  fs::path db = fresh_db("json");
  // The final check of the best few is off here: measured again, the best could change.
  Output out = run_steer("tune " + kSpec + " --backend opencl --size small --budget 5 --seed 3 --final-check 0 "
                         "--json --db " + db.string());
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto summary = nlohmann::json::parse(out.output);
  for (const char* field : {"tests", "valid", "failed", "resumed", "shortened", "wall_s", "best"}) {
    EXPECT_TRUE(summary.contains(field)) << field;
  }
  EXPECT_EQ(summary["tests"], 5);
  EXPECT_TRUE(summary["best"]["config"].contains("TILE_SIZE_X"));
  // Work rates from the spec's counts: transpose moves 8·M·N bytes and does no floating-point work.
  const double best_ms = summary["best"]["time_ms"].get<double>();
  EXPECT_TRUE(summary["best"]["gflop_per_s"].is_null());
  EXPECT_NEAR(summary["best"]["gb_per_s"].get<double>(), 8.0 * 512 * 512 / (best_ms / 1e3) / 1e9, 1e-9);

  // The same command again resumes: nothing is run twice.
  Output again = run_steer("tune " + kSpec + " --backend opencl --size small --budget 5 --seed 3 --final-check 0 "
                           "--json --db " + db.string());
  ASSERT_EQ(again.exit_code, 0);
  auto resumed = nlohmann::json::parse(again.output);
  EXPECT_EQ(resumed["tests"], 5);
  EXPECT_EQ(resumed["resumed"], 5);
  EXPECT_EQ(resumed["best"], summary["best"]);
  EXPECT_EQ(stored_results(db).size(), 5u);

  // With the final check (the default): the best 3 of 5 measured again, 3 rounds of 10 launches.
  Output checked = run_steer("tune " + kSpec + " --backend opencl --size small --budget 5 --seed 3 --final-check 3 "
                             "--json --db " + db.string());
  ASSERT_EQ(checked.exit_code, 0) << checked.output;
  auto finalists = nlohmann::json::parse(checked.output)["finalists"];
  ASSERT_EQ(finalists.size(), 3u);
  for (const auto& f : finalists) {
    EXPECT_EQ(f["launches"], 30);
    EXPECT_LE(f["low_ms"].get<double>(), f["time_ms"].get<double>());
    EXPECT_GE(f["high_ms"].get<double>(), f["time_ms"].get<double>());
  }
  EXPECT_TRUE(finalists[0]["tied"]) << "the best is tied with itself";
  EXPECT_EQ(nlohmann::json::parse(checked.output)["best"]["config"], finalists[0]["config"]);
  EXPECT_EQ(stored_results(db).size(), 5u) << "re-measurements are not stored";
}

TEST(TuneEndToEnd, KillNineThenResumeLosesNoFinishedTestAndDuplicatesNone) {
  if (!have_opencl()) GTEST_SKIP() << "no OpenCL device";
  fs::path db = fresh_db("kill");
  const std::string arguments = "tune " + kSpec + " --backend opencl --size small --searcher random --seed 11 " +
                                "--budget 60 --repetitions 2 --db " + db.string();
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::string command = std::string(STEER_BINARY) + " " + arguments + " >/dev/null 2>&1";
    execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Kill it once some tests are committed, in the middle of the run.
  std::size_t seen = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!fs::exists(db)) continue;
    try {
      seen = stored_results(db).size();
    } catch (const steer::Error&) {
      continue;  // the child may be creating the schema
    }
    if (seen >= 8) break;
  }
  ASSERT_GE(seen, 8u) << "the tuning did not commit tests in time";
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the run finished before it could be killed";

  std::vector<steer::Result> before = stored_results(db);
  ASSERT_GE(before.size(), seen);
  ASSERT_LT(before.size(), 60u);
  std::map<std::string, double> before_times;
  for (const steer::Result& r : before) before_times[r.key()] = r.time.median_ms;

  Output resumed = run_steer(arguments + " --json");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  auto summary = nlohmann::json::parse(resumed.output);
  EXPECT_EQ(summary["tests"], 60);

  // Killed during a test, the run left that test's configuration behind as running: resuming
  // records it as failed rather than running it (and, were it the culprit, dying) again.
  std::vector<steer::Result> after = stored_results(db);
  ASSERT_EQ(after.size(), 60u);
  std::size_t abandoned = 0;
  for (const steer::Result& r : after) {
    if (r.message.find("the tuner ended while this configuration ran") != std::string::npos) ++abandoned;
  }
  EXPECT_LE(abandoned, 1u);
  EXPECT_EQ(summary["resumed"].get<std::size_t>(), before.size() + abandoned);
  std::map<std::string, int> occurrences;
  for (const steer::Result& r : after) ++occurrences[r.key()];
  for (const auto& [key, count] : occurrences) EXPECT_EQ(count, 1) << key << " stored twice";
  for (const steer::Result& r : after) {
    auto it = before_times.find(r.key());
    if (it != before_times.end()) {
      EXPECT_EQ(r.time.median_ms, it->second) << "a finished test was re-measured";
    }
  }
  for (const auto& [key, time] : before_times) EXPECT_EQ(occurrences.count(key), 1u) << key << " was lost";
}

TEST(TuneEndToEnd, CtrlCStopsCleanlyWithEveryFinishedTestStored) {
  if (!have_opencl()) GTEST_SKIP() << "no OpenCL device";
  fs::path db = fresh_db("sigint");
  fs::path summary_file = db.string() + ".json";
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::string command = std::string(STEER_BINARY) + " tune " + kSpec +
                          " --backend opencl --size small --searcher random --seed 5 --budget 500 --repetitions 2" +
                          " --json --db " + db.string() + " >" + summary_file.string() + " 2>/dev/null";
    execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  std::size_t seen = 0;
  while (seen < 5 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    try {
      if (fs::exists(db)) seen = stored_results(db).size();
    } catch (const steer::Error&) {
    }
  }
  ASSERT_GE(seen, 5u);
  ASSERT_EQ(kill(child, SIGINT), 0);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "Ctrl-C must end the run cleanly, not kill it";
  EXPECT_EQ(WEXITSTATUS(status), 130);
  std::ifstream in(summary_file);
  auto summary = nlohmann::json::parse(in);
  EXPECT_TRUE(summary["interrupted"].get<bool>());
  EXPECT_LT(summary["tests"].get<std::size_t>(), 500u);
  EXPECT_EQ(stored_results(db).size(), summary["tests"].get<std::size_t>()) << "every finished test is stored";
  fs::remove(summary_file);
}

TEST(TuneEndToEnd, ConfigurationsTheDeviceCannotLaunchAreLeftOutAndCounted) {
  // conv's blocks reach 128 x 64 threads, more than PoCL's 4,096 work-items per group.
  Output out = run_steer("tune " STEER_SOURCE_DIR "/kernels/conv/spec.json --backend opencl --size small --budget 1 "
                         "--searcher random",
                         true);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_TRUE(std::regex_search(out.output, std::regex("left out [1-9][0-9]* configurations beyond what .* can "
                                                       "launch: blocks of at most [0-9]+ threads")))
      << out.output;
}

TEST(TuneEndToEnd, TestsFarSlowerThanTheFastestStopTimingEarly) {
  if (!have_opencl()) GTEST_SKIP() << "no OpenCL device";
  // A cap of 0.001 x the fastest test's 5 launches is less than any one launch: every test
  // after the first valid one times a single launch; without the cap, all five.
  for (const char* relative : {"0.001", "0"}) {
    fs::path db = fresh_db(std::string("relative_") + relative);
    Output out = run_steer("tune " + kSpec + " --backend opencl --size small --searcher random --seed 3 --budget 6 " +
                           "--repetitions 5 --final-check 0 --max-test-relative " + relative + " --db " + db.string(),
                           true);
    ASSERT_EQ(out.exit_code, 0) << out.output;
    std::vector<steer::Result> results = stored_results(db);
    ASSERT_EQ(results.size(), 6u);
    bool valid_before = false;
    for (const steer::Result& r : results) {
      if (!r.ok()) continue;
      const std::size_t expected = valid_before && std::string(relative) != "0" ? 1 : 5;
      EXPECT_EQ(r.time.samples_ms.size(), expected) << relative << " " << r.key();
      valid_before = true;
    }
    EXPECT_TRUE(valid_before);
    // The summary says how many were shortened: every valid test but the first, or none.
    const auto valid = std::count_if(results.begin(), results.end(), [](const steer::Result& r) { return r.ok(); });
    if (std::string(relative) == "0") {
      EXPECT_EQ(out.output.find("timed fewer launches"), std::string::npos) << out.output;
    } else {
      EXPECT_NE(out.output.find(std::to_string(valid - 1) + " valid tests timed fewer launches"), std::string::npos)
          << out.output;
    }
    fs::remove(db);
  }
}

TEST(TuneEndToEnd, AStoreResumesOnlyWhatTheSameContentMeasured) {
  if (!have_opencl()) GTEST_SKIP() << "no OpenCL device";
  // A copy of the transpose kernel folder, edited as a user would.
  const fs::path folder = fs::temp_directory_path() / ("steer_e2e_keyed_" + std::to_string(getpid()));
  fs::remove_all(folder);
  fs::copy(STEER_SOURCE_DIR "/kernels/transpose", folder);
  const fs::path db = fresh_db("keyed");
  const std::string command = "tune '" + (folder / "spec.json").string() +
                              "' --backend opencl --size small --budget 2 --seed 3 --final-check 0 --db " + db.string();
  Output first = run_steer(command, true);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output.find("stored as tuning 1 (new)"), std::string::npos) << first.output;

  // The spec re-serialised with another description: the same tuning.
  nlohmann::ordered_json spec = nlohmann::ordered_json::parse(std::ifstream(folder / "spec.json"));
  spec["description"] = "Another description.";
  std::ofstream(folder / "spec.json") << spec.dump(8);
  Output relaid = run_steer(command, true);
  ASSERT_EQ(relaid.exit_code, 0) << relaid.output;
  EXPECT_NE(relaid.output.find("2 resumed from the store"), std::string::npos) << relaid.output;
  EXPECT_NE(relaid.output.find("stored as tuning 1 (continued)"), std::string::npos) << relaid.output;

  // The kernel changed: its old timings are not served, and the run says why.
  std::ofstream(folder / "kernel.cl", std::ios::app) << "\n// a changed kernel\n";
  Output edited = run_steer(command, true);
  ASSERT_EQ(edited.exit_code, 0) << edited.output;
  EXPECT_NE(edited.output.find("0 resumed from the store"), std::string::npos) << edited.output;
  EXPECT_NE(edited.output.find("stored as tuning 2 (new)"), std::string::npos) << edited.output;
  EXPECT_NE(edited.output.find("tuning 1 (2 tests): kernel source changed"), std::string::npos) << edited.output;

  // --fresh: a new tuning although one matches.
  Output fresh = run_steer(command + " --fresh", true);
  ASSERT_EQ(fresh.exit_code, 0) << fresh.output;
  EXPECT_NE(fresh.output.find("stored as tuning 3 (new)"), std::string::npos) << fresh.output;
  EXPECT_NE(fresh.output.find("0 resumed from the store"), std::string::npos) << fresh.output;
  EXPECT_FALSE(fs::exists(db.string() + "-wal")) << "the WAL is folded back on exit";
  fs::remove_all(folder);
}

TEST(TuneEndToEnd, BadInputGetsAClearErrorAndNonZeroExit) {
  Output missing = run_steer("tune /nonexistent/spec.json --budget 1", true);
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.output.find("/nonexistent/spec.json"), std::string::npos) << missing.output;
  Output bad_searcher = run_steer("tune " + kSpec + " --backend opencl --searcher nonsense --budget 1", true);
  EXPECT_NE(bad_searcher.exit_code, 0);
  EXPECT_NE(bad_searcher.output.find("unknown searcher 'nonsense'"), std::string::npos) << bad_searcher.output;
  Output bad_place = run_steer("tune " + kSpec + " --backend opencl --validate-on gpu --budget 1", true);
  EXPECT_NE(bad_place.exit_code, 0);
  EXPECT_NE(bad_place.output.find("--validate-on"), std::string::npos) << bad_place.output;
}

// Outputs compared on the host or, where the device is no GPU, on the host anyway: the same
// verdicts and the same stored tests either way.
TEST(TuneEndToEnd, ValidatingOnTheHostOrTheDeviceFindsTheSame) {
  if (!have_opencl()) GTEST_SKIP() << "no OpenCL device";
  std::vector<std::map<std::string, steer::Status>> verdicts;
  for (const char* where : {"device", "host"}) {
    fs::path db = fresh_db(std::string("validate_on_") + where);
    Output out = run_steer("tune " + kSpec + " --backend opencl --size small --searcher random --budget 4 --seed 3 "
                           "--final-check 0 --json --validate-on " + where + " --db " + db.string());
    ASSERT_EQ(out.exit_code, 0) << out.output;
    EXPECT_EQ(nlohmann::json::parse(out.output)["valid"], 4) << where;
    auto& verdict = verdicts.emplace_back();
    for (const steer::Result& r : stored_results(db)) verdict[r.key()] = r.status;
  }
  EXPECT_EQ(verdicts[0], verdicts[1]) << "the same seed tests the same configurations, judged alike";
}

}  // namespace
