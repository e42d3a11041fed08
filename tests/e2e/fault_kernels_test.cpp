// Kernels that fail in every way a kernel can (tests/e2e/faults: one that never finishes,
// one that writes far out of bounds, one that does not compile, one that asks for more
// local memory than the device has, one that computes the wrong output), tuned by the steer
// binary on PoCL: each ends in its own status and message, the run goes on with the other
// configurations, and nothing measured is lost, also when the run is interrupted or killed
// while a kernel hangs.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "e2e/tune_support.hpp"

namespace {

using namespace e2e;
using Clock = std::chrono::steady_clock;

const std::string kFaults = std::string(STEER_SOURCE_DIR) + "/tests/e2e/faults/spec.json";

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::map<std::string, steer::Result> by_configuration(const std::vector<steer::Result>& results) {
  std::map<std::string, steer::Result> keyed;
  for (const steer::Result& r : results) keyed[r.key()] = r;
  return keyed;
}

// The configuration the run is testing now, as the store names it ("" when none).
std::string running_configuration(const fs::path& db) {
  sqlite3* connection = nullptr;
  std::string key;
  if (sqlite3_open_v2(db.c_str(), &connection, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(connection, "SELECT config_key FROM running", -1, &statement, nullptr) == SQLITE_OK &&
        sqlite3_step(statement) == SQLITE_ROW) {
      key = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
    }
    sqlite3_finalize(statement);
  }
  sqlite3_close(connection);
  return key;
}

// Starts `steer ARGUMENTS` in the background (output to `log`) in a process group of its
// own, as a shell starts a job; returns its pid, which is the group's.
pid_t start_steer(const std::string& arguments, const fs::path& log) {
  const pid_t child = fork();
  if (child == 0) {
    setpgid(0, 0);
    const std::string command = std::string(STEER_BINARY) + " " + arguments + " >" + log.string() + " 2>&1";
    execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return child;
}

// Waits until the store says the run is testing `key`; false after a minute.
bool wait_until_running(const fs::path& db, const std::string& key) {
  const auto deadline = Clock::now() + std::chrono::minutes(1);
  while (Clock::now() < deadline) {
    if (fs::exists(db) && running_configuration(db) == key) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST(FaultKernels, EachFaultEndsInItsOwnStatusAndTheRunGoesOnWithTheOthers) {
  if (!have_opencl()) GTEST_SKIP() << "no OpenCL device";
  const fs::path db = fresh_db("faults");
  const auto started = Clock::now();
  // The spec's kernel.timeout_ms (1500) is the hang timeout.
  Output out = run_steer("tune " + kFaults + " --backend opencl --searcher exhaustive --final-check 0 --json --db " +
                         db.string());
  const double took_s = seconds_since(started);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto summary = nlohmann::json::parse(out.output);
  EXPECT_EQ(summary["tests"], 7);
  EXPECT_EQ(summary["valid"], 2);
  EXPECT_EQ(summary["failed"], 5);
  EXPECT_LT(took_s, 60) << "a hang costs its timeout, not more";

  auto results = by_configuration(stored_results(db));
  ASSERT_EQ(results.size(), 7u) << "every test is stored";
  auto expect = [&](const std::string& key, steer::Status status, const std::string& words) {
    const steer::Result& r = results[key];
    EXPECT_EQ(r.status, status) << key << ": " << r.message;
    EXPECT_NE(r.message.find(words), std::string::npos) << key << ": " << r.message;
  };
  expect("FAULT=0", steer::Status::Ok, "");
  expect("FAULT=1", steer::Status::Timeout, "did not finish within the 1500 ms limit");
  expect("FAULT=2", steer::Status::LaunchError, "the OpenCL worker process died during the launch");
  expect("FAULT=3", steer::Status::CompileError, "failed: CL_BUILD_PROGRAM_FAILURE");
  expect("FAULT=4", steer::Status::LaunchError, "bytes of local memory");
  expect("FAULT=5", steer::Status::InvalidOutput, "output 'out'");
  expect("FAULT=6", steer::Status::Ok, "");
  EXPECT_GT(results["FAULT=0"].time.median_ms, 0);
  EXPECT_GT(results["FAULT=6"].time.median_ms, 0) << "measured after the faults, by a new worker";
}

// Ctrl-C while a kernel hangs (with a limit of ten minutes) stops the run at once: the
// finished test is stored, the hanging one is not, and the exit status is 130. The terminal
// sends SIGINT to the whole process group, the worker included: the tuner decides.
TEST(FaultKernels, CtrlCStopsARunWhoseTestHangs) {
  if (!have_opencl()) GTEST_SKIP() << "no OpenCL device";
  const fs::path db = fresh_db("faults_sigint");
  const fs::path log = db.string() + ".log";
  const pid_t child = start_steer("tune " + kFaults +
                                      " --backend opencl --searcher exhaustive --final-check 0 --timeout-ms 600000 "
                                      "--json --db " + db.string(),
                                  log);
  ASSERT_GT(child, 0);
  ASSERT_TRUE(wait_until_running(db, "FAULT=1")) << "the run did not reach the hanging kernel";
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // into the kernel, past its compile
  const auto interrupted = Clock::now();
  ASSERT_EQ(kill(-child, SIGINT), 0);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_LT(seconds_since(interrupted), 10) << "the run waited for the hanging kernel";
  ASSERT_TRUE(WIFEXITED(status)) << "Ctrl-C must end the run cleanly, not kill it";
  EXPECT_EQ(WEXITSTATUS(status), 130);
  std::ifstream in(log);
  const std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(output.find("\"interrupted\":true"), std::string::npos) << output;
  auto results = by_configuration(stored_results(db));
  EXPECT_EQ(results.size(), 1u);
  EXPECT_EQ(results["FAULT=0"].status, steer::Status::Ok);
  EXPECT_EQ(running_configuration(db), "") << "the abandoned test is not left as running";
  fs::remove(log);
}

// The whole tuner killed while a kernel hangs (kill -9 cannot be caught): the store names
// the configuration it died on, and resuming records it as failed instead of running it
// again; a resumed run that waited for it would take the ten minutes of its limit.
TEST(FaultKernels, ResumingAfterTheTunerDiedOnAKernelRecordsThatKernelAsFailed) {
  if (!have_opencl()) GTEST_SKIP() << "no OpenCL device";
  const fs::path db = fresh_db("faults_kill");
  const fs::path log = db.string() + ".log";
  const std::string arguments = "tune " + kFaults +
                                " --backend opencl --searcher exhaustive --final-check 0 --timeout-ms 600000 --json "
                                "--db " + db.string();
  const pid_t child = start_steer(arguments, log);
  ASSERT_GT(child, 0);
  ASSERT_TRUE(wait_until_running(db, "FAULT=1")) << "the run did not reach the hanging kernel";
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  ASSERT_EQ(stored_results(db).size(), 1u);

  const auto resumed_at = Clock::now();
  Output resumed = run_steer(arguments, true);
  EXPECT_LT(seconds_since(resumed_at), 120) << "the resumed run tested the hanging kernel again";
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("FAULT=1 was running when an earlier run of this tuning ended without finishing it"),
            std::string::npos)
      << resumed.output;
  auto results = by_configuration(stored_results(db));
  ASSERT_EQ(results.size(), 7u);
  EXPECT_EQ(results["FAULT=1"].status, steer::Status::LaunchError);
  EXPECT_NE(results["FAULT=1"].message.find("the tuner ended while this configuration ran"), std::string::npos)
      << results["FAULT=1"].message;
  EXPECT_EQ(results["FAULT=0"].status, steer::Status::Ok);
  EXPECT_EQ(results["FAULT=6"].status, steer::Status::Ok);
  fs::remove(log);
}

// An argument list the kernel does not take fails every configuration: the run stops before
// tuning with one error naming the kernel's parameters and the spec's arguments, exit 1.
TEST(FaultKernels, ArgumentsTheKernelDoesNotTakeStopTheRunBeforeTuning) {
  if (!have_opencl()) GTEST_SKIP() << "no OpenCL device";
  const fs::path folder = fs::temp_directory_path() / ("steer_e2e_arguments_" + std::to_string(getpid()));
  fs::create_directories(folder);
  fs::copy_file(fs::path(kFaults).parent_path() / "faults.cl", folder / "faults.cl",
                fs::copy_options::overwrite_existing);
  nlohmann::json spec = nlohmann::json::parse(std::ifstream(kFaults));
  spec["kernel"]["arguments"].erase(2);  // the kernel's `n`
  spec["parameters"][0]["values"] = {0, 5, 6};
  spec.erase("reference");
  std::ofstream(folder / "spec.json") << spec.dump(1);
  const fs::path db = fresh_db("arguments");

  Output out = run_steer("tune " + (folder / "spec.json").string() + " --backend opencl --searcher exhaustive --db " +
                             db.string(),
                         true);
  EXPECT_EQ(out.exit_code, 1) << out.output;
  EXPECT_NE(out.output.find("stopped before tuning: the first 3 tests failed the same way"), std::string::npos)
      << out.output;
  EXPECT_NE(out.output.find("takes 3 parameters (float* out, float* in, int n), but the spec passes 2 arguments "
                            "(out, in)"),
            std::string::npos)
      << out.output;
  EXPECT_TRUE(stored_results(db).empty()) << "nothing is stored for such tests";
  fs::remove_all(folder);
}

}  // namespace
