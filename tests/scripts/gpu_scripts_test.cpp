// scripts/gpu/record.sh and energy.sh as the H200 runs them, with a fake steer in place of the
// bundle's (STEER_GPU_BUNDLE): what they do to the stores of data/h200/ around a run. These
// scripts change committed ground truth, so what they must never do is checked here: lose a
// measurement, or mix two profiler ranges in one store. Each test starts from a copy of a
// committed store put in the state it needs (the scripts take a store already in OUT over the
// committed one), so the tests do not depend on how far the recordings have come.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// The fake steer: logs its arguments and the profiler range it was given, one line per call,
// to $FAKE_STEER_LOG. With `--set file=LIST` it "measures" the first configuration of the
// list: energy 999 J over a 0.5 s window, as a run stopped by its deadline after one test.
// Asked for counters on a store that does not exist, it makes one with a profiled test.
constexpr const char* kFakeSteer = R"py(#!/usr/bin/env python3
import os, sqlite3, sys
args = sys.argv[1:]
with open(os.environ["FAKE_STEER_LOG"], "a") as log:
    log.write("range=%s args=%s\n" % (os.environ.get("STEER_CUPTI_RANGE", ""), " ".join(args)))
db = args[args.index("--db") + 1]
listed = [a[5:] for a in args if a.startswith("file=")]
if "--counters" in args and not os.path.exists(db):
    con = sqlite3.connect(db)
    con.execute("create table tunings (id integer primary key)")
    con.execute("create table tests (id integer primary key, config_key text, energy_joules_per_launch real, energy_window_s real)")
    con.execute("create table counters (test_id integer, name text, value real)")
    con.execute("insert into tunings values (1)")
    con.execute("insert into tests values (1, 'A=1', null, null)")
    con.execute("insert into counters values (1, 'smsp__inst_executed.sum', 1e6)")
    con.commit()
if listed and os.path.exists(db):
    keys = [l.strip() for l in open(listed[0]) if l.strip() and not l.startswith("#")]
    con = sqlite3.connect(db)
    con.execute("update tests set energy_joules_per_launch = 999, energy_window_s = 0.5 where config_key = ?", (keys[0],))
    con.commit()
sys.exit(1)
)py";

std::string read(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class GpuScripts : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("steer_gpu_scripts_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "bundle");
    fs::create_directories(dir_ / "out");
    std::ofstream(dir_ / "bundle" / "steer") << kFakeSteer;
    fs::permissions(dir_ / "bundle" / "steer", fs::perms::owner_all);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs a script of scripts/gpu/ with OUT and the fake bundle; returns its output. The script
  // must exit with `expected_exit`.
  std::string run(const std::string& environment, const std::string& script_and_args, int expected_exit = 0) {
    const fs::path output = dir_ / "output.txt";
    const std::string command = "cd '" STEER_SOURCE_DIR "' && env OUT='" + (dir_ / "out").string() +
                                "' STEER_GPU_BUNDLE='" + (dir_ / "bundle").string() + "' FAKE_STEER_LOG='" +
                                (dir_ / "steer.log").string() + "' " + environment + " bash scripts/gpu/" +
                                script_and_args + " >'" + output.string() + "' 2>&1";
    const int status = std::system(command.c_str());
    EXPECT_TRUE(WIFEXITED(status)) << read(output);
    EXPECT_EQ(WEXITSTATUS(status), expected_exit) << read(output);
    return read(output);
  }

  std::string steer_log() { return read(dir_ / "steer.log"); }

  // Copies data/h200/STEM.db.gz into OUT as STEM.db and runs `sql` on it: the state a test
  // starts from.
  void prepare(const std::string& stem, const std::string& sql) {
    const fs::path db = dir_ / "out" / (stem + ".db");
    const std::string gunzip =
        "gunzip -c '" STEER_SOURCE_DIR "/data/h200/" + stem + ".db.gz' > '" + db.string() + "'";
    ASSERT_EQ(std::system(gunzip.c_str()), 0) << gunzip;
    sqlite3* handle = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &handle), SQLITE_OK);
    char* error = nullptr;
    const int status = sqlite3_exec(handle, sql.c_str(), nullptr, nullptr, &error);
    const std::string message = error ? error : "";
    sqlite3_free(error);
    sqlite3_close(handle);
    ASSERT_EQ(status, SQLITE_OK) << sql << ": " << message;
  }

  // The first column of the first row of `sql` on a store in OUT, as text ("" when none).
  std::string query(const std::string& store, const std::string& sql) {
    sqlite3* db = nullptr;
    std::string value;
    if (sqlite3_open_v2((dir_ / "out" / store).c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
      sqlite3_stmt* statement = nullptr;
      if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK &&
          sqlite3_step(statement) == SQLITE_ROW && sqlite3_column_text(statement, 0)) {
        value = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
      }
      sqlite3_finalize(statement);
    }
    sqlite3_close(db);
    return value;
  }

  fs::path dir_;
};

TEST_F(GpuScripts, EnergyMeasuredAgainReplacesTheOldAndADeadlineLosesNothing) {
  // dgemm_energy_h200 with energy for every configuration (its timing-only tests left out), the
  // near-best band's from 0.1 s windows.
  prepare("dgemm_energy_h200",
          "delete from tests where energy_joules_per_launch is null; "
          "update tests set energy_window_s = 0.1 where status = 'ok' and median_ms <= "
          "1.2 * (select min(median_ms) from tests where status = 'ok')");
  ASSERT_EQ(query("dgemm_energy_h200.db", "select count(*) from tests where energy_joules_per_launch is null"), "0");
  std::string output = run("", "energy.sh dgemm_energy:0");
  EXPECT_THAT(output, HasSubstr("in the band had energy from windows under 0.4 s: measured again"));
  EXPECT_THAT(output, HasSubstr("not measured again keep their earlier energy"));
  EXPECT_THAT(steer_log(), HasSubstr("--searcher list"));
  EXPECT_THAT(steer_log(), HasSubstr("--energy-window 0.5"));

  const std::string store = "dgemm_energy_h200.db";
  EXPECT_EQ(query(store, "select count(*) from tests where energy_joules_per_launch is null"), "0");
  EXPECT_EQ(query(store, "select count(*) from tests where energy_joules_per_launch = 999"), "1")
      << "the one configuration the run measured again keeps its new figure";
  EXPECT_EQ(query(store, "select count(*) from tests where energy_window_s is null"), "0");
  EXPECT_EQ(query(store, "select count(*) from sqlite_master where name = 'steer_energy_earlier'"), "0");
}

// A store with counters and no record of its range: one from before stores recorded it, when
// the user range was the default.
constexpr const char* kStoreFromBeforeRanges = "drop table if exists steer_recording";

TEST_F(GpuScripts, AStoreKeepsTheProfilerRangeItsCountersWereMeasuredWith) {
  prepare("conv_h200", kStoreFromBeforeRanges);
  const std::string profiled = query("conv_h200.db", "select count(distinct test_id) from counters");
  ASSERT_NE(profiled, "0");
  std::string output = run("STEER_RECORD_COUNTERS=default STEER_CUPTI_RANGE=kernel", "record.sh conv");
  EXPECT_THAT(output, HasSubstr("counters with the user range"));
  EXPECT_THAT(output, HasSubstr("STEER_CUPTI_RANGE=kernel ignored"));
  EXPECT_THAT(steer_log(), HasSubstr("range=user"));
  EXPECT_EQ(query("conv_h200.db", "select value from steer_recording where key = 'profiler_range'"), "user");
  EXPECT_EQ(query("conv_h200.db", "select count(distinct test_id) from counters"), profiled) << "no counter dropped";
}

TEST_F(GpuScripts, AStoreThatSaysItsRangeKeepsIt) {
  // The committed stores say "kernel" (all measured again with it in session 5).
  prepare("conv_h200", "insert or replace into steer_recording values ('profiler_range', 'kernel')");
  std::string output = run("STEER_RECORD_COUNTERS=default STEER_CUPTI_RANGE=user", "record.sh conv");
  EXPECT_THAT(output, HasSubstr("counters with the kernel range"));
  EXPECT_THAT(output, HasSubstr("STEER_CUPTI_RANGE=user ignored"));
  EXPECT_THAT(steer_log(), HasSubstr("range=kernel"));
  EXPECT_EQ(query("conv_h200.db", "select value from steer_recording where key = 'profiler_range'"), "kernel");
}

TEST_F(GpuScripts, TheRangeOfOneStoreDoesNotCarryOverToTheNext) {
  // conv: user range (its counters); gemm@m16: no store yet, so the default, the kernel range.
  prepare("conv_h200", kStoreFromBeforeRanges);
  std::string output = run("STEER_RECORD_COUNTERS=default", "record.sh conv gemm@m16");
  EXPECT_THAT(output, HasSubstr("counters with the user range"));
  EXPECT_THAT(output, HasSubstr("counters with the kernel range"));
  std::string log = steer_log();
  const auto conv = log.find("range=user"), gemm = log.find("range=kernel");
  EXPECT_NE(conv, std::string::npos) << log;
  EXPECT_NE(gemm, std::string::npos) << log;
  EXPECT_LT(conv, gemm) << log;
  EXPECT_EQ(query("gemm_m16.db", "select value from steer_recording where key = 'profiler_range'"), "kernel")
      << "a new store records the range its first counters were measured with";
}

TEST_F(GpuScripts, RecountMeasuresEveryConfigurationIntoANewStoreAndLeavesTheOriginal) {
  prepare("transpose_h200", kStoreFromBeforeRanges);
  const std::string configurations = query("transpose_h200.db", "select count(*) from tests");
  const std::string profiled = query("transpose_h200.db", "select count(distinct test_id) from counters");
  std::string output = run("STEER_RECORD_RECOUNT=1", "record.sh transpose");
  EXPECT_THAT(output, HasSubstr("recount: " + configurations + " configurations"));
  EXPECT_THAT(output, HasSubstr("counters with the kernel range"));
  std::string log = steer_log();
  EXPECT_THAT(log, HasSubstr("range=kernel"));
  EXPECT_THAT(log, HasSubstr("transpose_h200_kernel_range.db"));
  EXPECT_THAT(log, HasSubstr("--counters default"));
  EXPECT_EQ(query("transpose_h200.db", "select count(distinct test_id) from counters"), profiled)
      << "the original store is not touched";
  std::ifstream list(dir_ / "out" / "transpose_h200_kernel_range.list");
  int lines = 0;
  for (std::string line; std::getline(list, line);) lines += line.empty() || line[0] == '#' ? 0 : 1;
  EXPECT_EQ(std::to_string(lines), configurations);
}

TEST_F(GpuScripts, ContinueRecountsWhatItIsToldAndExtendsTheStoresNamedAfterwards) {
  // One lane here (no nvidia-smi): the counters lane, then the energy lane. The recount of
  // transpose goes into its own store; the extension of conv then records new configurations
  // into conv's store itself, with counters and no recount; the archive holds both stores.
  std::string output = run("STEER_RECORD_RECOUNT=1 CONTINUE_SKIP='1 2 3 5 6' CONTINUE_RECORD=transpose "
                           "CONTINUE_EXTEND=conv CONTINUE_RECORD_AFTER_ENERGY= CONTINUE_TIMING_AFTER_ENERGY= "
                           "CONTINUE_DEADLINE=120",
                           "continue.sh");
  EXPECT_THAT(output, HasSubstr("recount:"));
  EXPECT_THAT(output, HasSubstr("== conv (h200, random)"));
  EXPECT_THAT(output, HasSubstr("continue.sh: done"));
  std::string log = steer_log();
  EXPECT_THAT(log, HasSubstr("--searcher list"));
  EXPECT_THAT(log, HasSubstr("transpose_h200_kernel_range.db"));
  const auto conv = log.find("conv_h200.db");
  ASSERT_NE(conv, std::string::npos) << log;
  const std::string conv_call = log.substr(log.rfind('\n', conv) + 1, log.find('\n', conv) - log.rfind('\n', conv));
  EXPECT_THAT(conv_call, HasSubstr("--searcher random --seed 1"));
  EXPECT_THAT(conv_call, HasSubstr("--counters default"));
  EXPECT_THAT(conv_call, HasSubstr("range=kernel"));
  EXPECT_TRUE(fs::exists(dir_ / "out" / "summary.txt"));
  const std::string listing = "tar tzf '" + (dir_ / "out" / "results.tgz").string() + "' > '" +
                              (dir_ / "listing.txt").string() + "'";
  ASSERT_EQ(std::system(listing.c_str()), 0);
  EXPECT_THAT(read(dir_ / "listing.txt"), HasSubstr("transpose_h200_kernel_range.db"));
  EXPECT_THAT(read(dir_ / "listing.txt"), HasSubstr("conv_h200.db"));
}

TEST_F(GpuScripts, ContinueRecordsTheTimingOnlySamplesLastWithoutCountersAndWithTheirBudget) {
  // The energy lane with no energy work and no counters: only its timing-only recordings.
  // NAME:N grows the store to a sample of N; a plain NAME goes on through the space.
  std::string output = run("CONTINUE_SKIP='1 2 3 4 6' CONTINUE_ENERGY= CONTINUE_RECORD_AFTER_ENERGY= "
                           "CONTINUE_TIMING_AFTER_ENERGY='gemm_full:20000 coulomb' CONTINUE_DEADLINE=120",
                           "continue.sh");
  EXPECT_THAT(output, HasSubstr("== gemm_full (h200, random, budget 20000)"));
  EXPECT_THAT(output, HasSubstr("== coulomb (h200, random)"));
  EXPECT_THAT(output, ::testing::Not(HasSubstr("energy of every configuration"))) << "CONTINUE_ENERGY= skips it";
  const std::string log = steer_log();
  std::vector<std::string> calls;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) calls.push_back(line);
  ASSERT_EQ(calls.size(), 2u) << log;
  EXPECT_THAT(calls[0], HasSubstr("gemm_full_h200.db"));
  EXPECT_THAT(calls[0], HasSubstr("--budget 20000"));
  EXPECT_THAT(calls[1], HasSubstr("coulomb_h200.db"));
  EXPECT_THAT(calls[1], ::testing::Not(HasSubstr("--budget")));
  for (const std::string& call : calls) {
    EXPECT_THAT(call, ::testing::Not(HasSubstr("--counters"))) << call;
    EXPECT_THAT(call, HasSubstr("--max-test-ms 50")) << "as the counters recordings: " << call;
  }
}

TEST_F(GpuScripts, ContinueOnOneGpuHalvesTheCountersRecordingOnlyWhenTheEnergyLaneHasWork) {
  // One GPU here (no nvidia-smi): the energy lane runs after the counters lane, so the counters
  // recording leaves it half of the call, but only when it has something to do.
  const auto time_limit_of_coulomb = [this] {
    std::istringstream lines(steer_log());
    for (std::string line; std::getline(lines, line);) {
      const auto time = line.find("--time ");
      if (line.find("coulomb_h200.db") != std::string::npos && time != std::string::npos) {
        return std::stoi(line.substr(time + 7));
      }
    }
    ADD_FAILURE() << "no coulomb recording with a time limit: " << steer_log();
    return -1;
  };
  const std::string counters_only = "CONTINUE_SKIP='1 2 3 5 6' CONTINUE_RECORD=coulomb CONTINUE_RECORD_AFTER_ENERGY= "
                                    "CONTINUE_DEADLINE=200 ";
  run(counters_only + "CONTINUE_TIMING_AFTER_ENERGY=", "continue.sh");
  EXPECT_GT(time_limit_of_coulomb(), 150) << "nothing follows: the whole call";
  fs::remove(dir_ / "steer.log");
  fs::remove_all(dir_ / "out");
  fs::create_directories(dir_ / "out");
  run(counters_only + "CONTINUE_TIMING_AFTER_ENERGY=gemm_full:10", "continue.sh");
  EXPECT_LT(time_limit_of_coulomb(), 100) << "half, the rest for the timing-only recording after it";
  EXPECT_THAT(steer_log(), HasSubstr("gemm_full_h200.db"));
}

TEST_F(GpuScripts, ContinueOnTwoGpusRefusesAStoreNamedInBothLanes) {
  // A fake nvidia-smi that lists two GPUs: the lanes would run side by side.
  fs::create_directories(dir_ / "bin");
  std::ofstream(dir_ / "bin" / "nvidia-smi") << "#!/bin/sh\necho 0\necho 1\n";
  fs::permissions(dir_ / "bin" / "nvidia-smi", fs::perms::owner_all);
  const std::string two_gpus = "PATH='" + (dir_ / "bin").string() + "':\"$PATH\" CONTINUE_SKIP='1 2 3 6' "
                               "CONTINUE_ENERGY= CONTINUE_DEADLINE=120 ";

  // conv with counters in one lane and again after the energy work in the other, and the
  // gemm_full sample in both (a sample size does not make it another store).
  const std::string refused = run(two_gpus + "CONTINUE_RECORD='gemm conv' CONTINUE_RECORD_AFTER_ENERGY=conv "
                                             "CONTINUE_TIMING=gemm_full:100 "
                                             "CONTINUE_TIMING_AFTER_ENERGY='dgemm_energy gemm_full:20000'",
                                  "continue.sh", 2);
  EXPECT_THAT(refused, HasSubstr("both lanes would record conv gemm_full: on two GPUs a store may be in one lane only"));
  EXPECT_EQ(steer_log(), "") << "nothing ran";

  // The two-GPU plan of docs/performance.md: gemm and conv in one lane, DGEMM in the other.
  run(two_gpus + "CONTINUE_RECORD='gemm conv' CONTINUE_RECORD_AFTER_ENERGY= CONTINUE_TIMING_AFTER_ENERGY=dgemm_energy",
      "continue.sh");
  EXPECT_THAT(steer_log(), HasSubstr("gemm_h200.db"));
  EXPECT_THAT(steer_log(), HasSubstr("conv_h200.db"));
  EXPECT_THAT(steer_log(), HasSubstr("dgemm_energy_h200.db"));
}

TEST_F(GpuScripts, TakeResultsNeverReplacesAStoreWithOneThatLacksItsConfigurations) {
  // A call's archive (scripts/gpu/take_results, between device calls) with two stores: coulomb
  // resumed from an older state and lacks one configuration data/h200 has; gemm_cube128 holds
  // ten more than data/h200's.
  const fs::path data = dir_ / "data";
  const fs::path call = dir_ / "call";
  fs::create_directories(data);
  fs::create_directories(call);
  fs::copy_file(STEER_SOURCE_DIR "/data/h200/coulomb_h200.db.gz", data / "coulomb_h200.db.gz");
  prepare("gemm_cube128", "delete from tests where sequence < 10");
  ASSERT_EQ(std::system(("gzip -c '" + (dir_ / "out" / "gemm_cube128.db").string() + "' > '" +
                         (data / "gemm_cube128.db.gz").string() + "'").c_str()), 0);
  prepare("gemm_cube128", "select 1");
  prepare("coulomb_h200", "delete from tests where sequence = 5");
  std::ofstream(dir_ / "out" / "gemm_cube128.json") << "{\"tests\": 1062}";
  std::ofstream(call / "summary.txt") << "continue.sh: done\n";
  ASSERT_EQ(std::system(("tar czf '" + (call / "results.tgz").string() + "' -C '" + (dir_ / "out").string() +
                         "' coulomb_h200.db gemm_cube128.db gemm_cube128.json").c_str()), 0);
  const std::string before = read(data / "coulomb_h200.db.gz");

  const fs::path output = dir_ / "output.txt";
  const std::string command = "cd '" STEER_SOURCE_DIR "' && STEER_DATA='" + data.string() +
                              "' bash scripts/gpu/take_results '" + call.string() + "' session_call1 > '" +
                              output.string() + "' 2>&1";
  const int status = std::system(command.c_str());
  const std::string said = read(output);
  EXPECT_NE(status, 0) << "a refused store fails the command: " << said;
  EXPECT_THAT(said, HasSubstr("coulomb_h200 refused: the call's store lacks 1 of the 210 configurations"));
  EXPECT_EQ(read(data / "coulomb_h200.db.gz"), before) << "data/h200's coulomb store is kept as it was";
  EXPECT_THAT(said, HasSubstr("gemm_cube128: 1052 -> 1062 tests"));
  ASSERT_EQ(std::system(("gunzip -c '" + (data / "gemm_cube128.db.gz").string() + "' > '" +
                         (dir_ / "out" / "taken.db").string() + "'").c_str()), 0);
  EXPECT_EQ(query("taken.db", "select count(*) from tests"), "1062");
  EXPECT_EQ(read(data / "gemm_cube128.json"), "{\"tests\": 1062}") << "the run's summary comes along";
  EXPECT_EQ(read(data / "check" / "session_call1.txt"), "continue.sh: done\n");
}

// Two GPUs recording one space side by side (scripts/gpu/split_remaining, record.sh NAME/PART,
// take_results): the parts are what the store lacks, each configuration in one part only, and
// taking a part appends it to the store without replacing anything measured.
class SplitRecording : public GpuScripts {
 protected:
  void SetUp() override {
    GpuScripts::SetUp();
    fs::create_directories(dir_ / "data");
    fs::create_directories(dir_ / "real_bundle");
    fs::create_symlink(STEER_BINARY, dir_ / "real_bundle" / "steer");
  }
  // data/ holds coulomb_h200 less its tests of sequence 100 to 109.
  void coulomb_lacking_ten() {
    prepare("coulomb_h200", "delete from tests where sequence between 100 and 109");
    gzip("coulomb_h200.db", dir_ / "data" / "coulomb_h200.db.gz");
  }
  void gzip(const std::string& store, const fs::path& to) {
    ASSERT_EQ(std::system(("gzip -c '" + (dir_ / "out" / store).string() + "' > '" + to.string() + "'").c_str()), 0);
  }
  std::vector<std::string> list(const std::string& name) {
    std::vector<std::string> keys;
    std::ifstream in(dir_ / "real_bundle" / "lists" / name);
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line[0] != '#') keys.push_back(line);
    return keys;
  }
  // Runs take_results on an archive of the stores of OUT named; returns its output.
  std::string take(const std::string& stores, int expected_exit) {
    fs::create_directories(dir_ / "call");
    std::ofstream(dir_ / "call" / "summary.txt") << "continue.sh: done\n";
    EXPECT_EQ(std::system(("tar czf '" + (dir_ / "call" / "results.tgz").string() + "' -C '" +
                           (dir_ / "out").string() + "' " + stores).c_str()), 0);
    const fs::path output = dir_ / "output.txt";
    const int status = std::system(("cd '" STEER_SOURCE_DIR "' && STEER_DATA='" + (dir_ / "data").string() +
                                    "' bash scripts/gpu/take_results '" + (dir_ / "call").string() + "' > '" +
                                    output.string() + "' 2>&1").c_str());
    EXPECT_EQ(WEXITSTATUS(status), expected_exit) << read(output);
    return read(output);
  }
  std::string taken(const std::string& sql) {
    EXPECT_EQ(std::system(("gunzip -c '" + (dir_ / "data" / "coulomb_h200.db.gz").string() + "' > '" +
                           (dir_ / "out" / "taken.db").string() + "'").c_str()), 0);
    return query("taken.db", sql);
  }
};

TEST_F(SplitRecording, PartsHoldWhatTheStoreLacksEachConfigurationOnce) {
  coulomb_lacking_ten();
  std::string output = run("STEER_DATA='" + (dir_ / "data").string() + "' STEER_GPU_BUNDLE='" +
                               (dir_ / "real_bundle").string() + "'",
                           "split_remaining coulomb 2");
  EXPECT_THAT(output, HasSubstr("5 of the 10 configurations left (200 of 210 recorded)"));
  std::vector<std::string> first = list("coulomb_h200_part1.list"), second = list("coulomb_h200_part2.list");
  ASSERT_EQ(first.size(), 5u);
  ASSERT_EQ(second.size(), 5u);
  std::vector<std::string> both = first;
  both.insert(both.end(), second.begin(), second.end());
  std::sort(both.begin(), both.end());
  EXPECT_EQ(std::unique(both.begin(), both.end()), both.end()) << "no configuration is in both parts";
  for (const std::string& key : both) {
    EXPECT_EQ(query("coulomb_h200.db", "select count(*) from tests where config_key = '" + key + "'"), "0") << key;
  }
  // Run again on a store that holds everything: nothing is left to deal.
  prepare("coulomb_h200", "select 1");
  gzip("coulomb_h200.db", dir_ / "data" / "coulomb_h200.db.gz");
  output = run("STEER_DATA='" + (dir_ / "data").string() + "' STEER_GPU_BUNDLE='" + (dir_ / "real_bundle").string() + "'",
               "split_remaining coulomb 2");
  EXPECT_THAT(output, HasSubstr("0 of the 0 configurations left (210 of 210 recorded)"));
  EXPECT_TRUE(list("coulomb_h200_part1.list").empty());
}

TEST_F(SplitRecording, RecordMeasuresAPartsListIntoAStoreOfItsOwn) {
  fs::create_directories(dir_ / "bundle" / "lists");
  std::ofstream(dir_ / "bundle" / "lists" / "coulomb_h200_part2.list") << "# part 2 of 2\n";
  std::string output = run("", "record.sh coulomb/part2 coulomb/part3");
  const std::string log = steer_log();
  EXPECT_THAT(log, HasSubstr("--searcher list --set file=" + (dir_ / "bundle" / "lists" / "coulomb_h200_part2.list").string()));
  EXPECT_THAT(log, HasSubstr("--db " + (dir_ / "out" / "coulomb_h200_part2.db").string()));
  EXPECT_THAT(log, ::testing::Not(HasSubstr("part3")));
  EXPECT_THAT(output, HasSubstr("coulomb/part3: no list"));
}

TEST_F(SplitRecording, TakeResultsAppendsAPartAndNeverReplacesAMeasurement) {
  coulomb_lacking_ten();
  // The part: the ten tests data/ lacks, and one it has, measured differently.
  prepare("coulomb_h200", "update tests set median_ms = -1 where sequence = 5; "
                          "delete from tests where sequence not between 100 and 109 and sequence <> 5");
  fs::rename(dir_ / "out" / "coulomb_h200.db", dir_ / "out" / "coulomb_h200_part1.db");
  // A part of another tuning (gemm at 128³ named as coulomb's) is refused.
  prepare("gemm_cube128", "select 1");
  fs::rename(dir_ / "out" / "gemm_cube128.db", dir_ / "out" / "coulomb_h200_part2.db");
  const std::string before = read(dir_ / "data" / "coulomb_h200.db.gz");
  std::string output = take("coulomb_h200_part1.db coulomb_h200_part2.db", 1);
  EXPECT_THAT(output, HasSubstr("coulomb_h200_part1 appended to coulomb_h200: 200 -> 210 tests (10 tests appended"));
  EXPECT_THAT(output, HasSubstr("coulomb_h200_part2 refused: it cannot be appended"));
  EXPECT_THAT(output, HasSubstr("hold different tunings"));
  EXPECT_FALSE(fs::exists(dir_ / "data" / "coulomb_h200_part1.db.gz")) << "a part is not kept on its own";
  EXPECT_EQ(taken("select count(*) from tests"), "210");
  EXPECT_EQ(taken("select count(distinct sequence) from tests"), "210");
  EXPECT_EQ(taken("select count(*) from tests where median_ms = -1"), "0") << "data/'s measurement is kept";
  EXPECT_EQ(taken("select count(distinct c.test_id) from counters c join tests t on t.id = c.test_id"), "210") << "the part's counters come along";
  EXPECT_NE(read(dir_ / "data" / "coulomb_h200.db.gz"), before);
}

TEST_F(SplitRecording, TakeResultsRefusesAPartWhoseCountersCameFromAnotherProfilerRange) {
  // A store's counters all come from one profiler range (record.sh's steer_recording table):
  // data/'s coulomb store says "kernel"; a part measured with the user range must not join it.
  coulomb_lacking_ten();
  prepare("coulomb_h200", "update steer_recording set value = 'user'; "
                          "delete from tests where sequence not between 100 and 104");
  fs::rename(dir_ / "out" / "coulomb_h200.db", dir_ / "out" / "coulomb_h200_part1.db");
  // A timing-only part says the user range too, but has no counters to mix: it is appended.
  prepare("coulomb_h200", "update steer_recording set value = 'user'; delete from counters; "
                          "delete from tests where sequence not between 105 and 109");
  fs::rename(dir_ / "out" / "coulomb_h200.db", dir_ / "out" / "coulomb_h200_part2.db");
  const std::string output = take("coulomb_h200_part1.db coulomb_h200_part2.db", 1);
  EXPECT_THAT(output, HasSubstr("coulomb_h200_part1 refused: it cannot be appended"));
  EXPECT_THAT(output, HasSubstr("measured with the user profiler range"));
  EXPECT_THAT(output, HasSubstr("coulomb_h200_part2 appended to coulomb_h200: 200 -> 205 tests (5 tests appended"));
  EXPECT_EQ(taken("select count(*) from tests"), "205");
  EXPECT_EQ(taken("select value from steer_recording where key = 'profiler_range'"), "kernel");
}

TEST(H200Recordings, AreCommittedCompressedAndEachAtMostTenMegabytes) {
  // Issue #4: the ground truth goes into the repository compressed, each recording at most
  // 10 MB, so that a clone stays small as the recordings grow (the largest, gemm_full's 20,000
  // tests, is a few MB).
  int stores = 0;
  for (const auto& entry : fs::recursive_directory_iterator(STEER_SOURCE_DIR "/data/h200")) {
    if (!entry.is_regular_file()) continue;
    const std::string name = entry.path().filename().string();
    EXPECT_FALSE(name.size() > 3 && name.substr(name.size() - 3) == ".db") << entry.path() << " is not compressed";
    if (name.size() > 6 && name.substr(name.size() - 6) == ".db.gz") ++stores;
    EXPECT_LE(entry.file_size(), 10'000'000u) << entry.path();
  }
  EXPECT_GE(stores, 7);
}

TEST(RecordingStatus, ListsEveryStoreAndWhatItsSpaceLacks) {
  // scripts/recording_status.py over the committed stores: one row per store of data/h200/.
  const fs::path output = fs::temp_directory_path() / ("steer_recording_status_" + std::to_string(getpid()));
  const std::string command = "cd '" STEER_SOURCE_DIR "' && python3 scripts/recording_status.py --steer '" STEER_BINARY
                              "' > '" + output.string() + "' 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << read(output);
  const std::string table = read(output);
  fs::remove(output);
  int stores = 0;
  for (const auto& entry : fs::directory_iterator(STEER_SOURCE_DIR "/data/h200")) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= 6 || name.substr(name.size() - 6) != ".db.gz") continue;
    ++stores;
    EXPECT_THAT(table, HasSubstr("| " + name.substr(0, name.size() - 6) + " |")) << table;
  }
  EXPECT_GE(stores, 7);
  // coulomb_h200 is the whole space of 210, every configuration with counters from the kernel range.
  EXPECT_THAT(table, HasSubstr("| coulomb_h200 | h200 | 210 | 210 | 210 | 210 |")) << table;
  const auto row = table.find("| coulomb_h200 |");
  ASSERT_NE(row, std::string::npos) << table;
  const std::string coulomb = table.substr(row, table.find('\n', row) - row);
  EXPECT_THAT(coulomb, HasSubstr("| kernel |"));
  EXPECT_THAT(coulomb, ::testing::EndsWith("| 0 s |")) << "nothing of its space is left to record";
  // gemm_full's goal is a sample of 20,000 of its 205,216 configurations; it has a row
  // whether or not its store exists yet.
  const auto full = table.find("| gemm_full_h200");
  ASSERT_NE(full, std::string::npos) << table;
  EXPECT_THAT(table.substr(full, table.find('\n', full) - full), HasSubstr("| 205,216 (sample of 20,000) |"));
}

TEST_F(GpuScripts, RecordingStatusPricesTheRestOfASpaceAtTheRateOfTestsMeasuredAsTheLatestWere) {
  // A store's first tests had energy windows (5 s apart), the later ones, a run later, are
  // timing only (1 s apart), and so will the rest of the space be: the 10 configurations it
  // lacks cost 1 s each, not the mean over every test.
  const std::string energy_then_timing =
      "update tests set energy_joules_per_launch = case when sequence < 100 then 1.0 end, "
      "energy_window_s = case when sequence < 100 then 0.5 end, "
      "timestamp = case when sequence < 100 "
      "then strftime('%Y-%m-%dT%H:%M:%SZ', '2026-12-01 10:00:00', '+' || (sequence * 5) || ' seconds') "
      "else strftime('%Y-%m-%dT%H:%M:%SZ', '2026-12-01 11:00:00', '+' || (sequence - 100) || ' seconds') end "
      "where status = 'ok'; delete from tests where sequence >= 200; "
      "delete from counters where test_id not in (select id from tests)";
  const fs::path data = dir_ / "status_data";
  fs::create_directories(data);
  const auto status_of = [&](const std::string& sql) {
    prepare("coulomb_h200", sql);
    EXPECT_EQ(std::system(("gzip -c '" + (dir_ / "out" / "coulomb_h200.db").string() + "' > '" +
                           (data / "coulomb_h200.db.gz").string() + "'").c_str()), 0);
    const fs::path output = dir_ / "status.txt";
    const int status = std::system(("cd '" STEER_SOURCE_DIR "' && python3 scripts/recording_status.py --steer '" STEER_BINARY
                                    "' --data '" + data.string() + "' > '" + output.string() + "' 2>&1").c_str());
    EXPECT_EQ(WEXITSTATUS(status), 0) << read(output);
    const std::string table = read(output);
    const auto row = table.find("| coulomb_h200 |");
    return row == std::string::npos ? table : table.substr(row, table.find('\n', row) - row);
  };
  EXPECT_THAT(status_of(energy_then_timing), HasSubstr("| 200 | 200 | 200 | 100 (100) | kernel | 4.478 ms | 1.00 | 10 s |"));
  // The other way round, energy last: the rest costs what an energy test does.
  const std::string timing_then_energy =
      "update tests set energy_joules_per_launch = case when sequence >= 100 then 1.0 end, "
      "energy_window_s = case when sequence >= 100 then 0.5 end, "
      "timestamp = case when sequence < 100 "
      "then strftime('%Y-%m-%dT%H:%M:%SZ', '2026-12-01 10:00:00', '+' || sequence || ' seconds') "
      "else strftime('%Y-%m-%dT%H:%M:%SZ', '2026-12-01 11:00:00', '+' || ((sequence - 100) * 5) || ' seconds') end "
      "where status = 'ok'; delete from tests where sequence >= 200; "
      "delete from counters where test_id not in (select id from tests)";
  EXPECT_THAT(status_of(timing_then_energy), HasSubstr("| 5.00 | 50 s |"));
}

}  // namespace
