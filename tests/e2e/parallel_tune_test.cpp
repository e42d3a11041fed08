// End-to-end: steer tune on several devices at once, as one process (--devices) and as the
// ranks of an MPI job (mpirun --oversubscribe -np 3, each rank on the OpenCL CPU device,
// PoCL). Every test is measured once and reaches the store, a resume serves them, and
// kill -9 of a rank loses no finished test. The MPI tests skip, saying why, where mpirun is
// missing or steer was built without MPI. Under Slurm, srun starts the ranks on a private
// one-node cluster (scripts/slurm-one-node); that test skips where Slurm is not installed
// (scripts/setup --slurm installs it).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "e2e/tune_support.hpp"

namespace {

using namespace e2e;

const std::string kTune = "tune " + kSpec + " --backend opencl --size small --searcher random --seed 5 --final-check 0 ";

// Each configuration once, and the keys.
std::map<std::string, int> occurrences(const std::vector<steer::Result>& results) {
  std::map<std::string, int> count;
  for (const steer::Result& r : results) ++count[r.key()];
  return count;
}

// Why the MPI tests cannot run here, or empty when they can.
std::string mpi_missing() {
  if (!have_opencl()) return "no OpenCL device";
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) return "mpirun is not installed (openmpi-bin)";
  // Open MPI refuses to run as root unless told that it is meant.
  if (geteuid() == 0) {
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  }
  // In a sanitizer build the MPI tests do not check for leaks: Open MPI leaves allocations of
  // the components it unloads at MPI_Finalize, which LeakSanitizer cannot attribute (so not
  // suppress). Addresses and undefined behaviour are still checked.
  const char* asan = std::getenv("ASAN_OPTIONS");
  setenv("ASAN_OPTIONS", ((asan && *asan ? std::string(asan) + ":" : std::string()) + "detect_leaks=0").c_str(), 1);
  return {};
}

std::string mpirun_command(int ranks, const std::string& arguments, const std::string& mpirun_options = "") {
  return "mpirun --oversubscribe " + mpirun_options + " -np " + std::to_string(ranks) + " '" STEER_BINARY "' " +
         arguments;
}

// A command's standard output (rank 0's, under a launcher), its exit status, and standard
// error apart.
struct MpiRun {
  Output out;
  std::string errors;
};
MpiRun run_command(const std::string& command) {
  const fs::path errors = fs::temp_directory_path() / ("steer_e2e_mpi_errors_" + std::to_string(getpid()));
  MpiRun run;
  FILE* pipe = popen((command + " 2>'" + errors.string() + "'").c_str(), "r");
  if (!pipe) return run;
  char block[4096];
  for (std::size_t n; (n = std::fread(block, 1, sizeof block, pipe)) > 0;) run.out.output.append(block, n);
  const int status = pclose(pipe);
  run.out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream text(errors);
  run.errors.assign(std::istreambuf_iterator<char>(text), std::istreambuf_iterator<char>());
  fs::remove(errors);
  return run;
}
MpiRun mpirun(int ranks, const std::string& arguments) { return run_command(mpirun_command(ranks, arguments)); }

TEST(ParallelTune, DevicesRunsOneTestOnEachAtOnceAndStoresEveryTestOnce) {
  if (!have_opencl()) GTEST_SKIP() << "no OpenCL device";
  const fs::path db = fresh_db("devices");
  // PoCL has one device: given twice, it stands in for two (steer warns that their timings disturb each other).
  const std::string arguments = kTune + "--budget 6 --devices 0,0 --json --db " + db.string();
  Output out = run_steer(arguments);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  const auto summary = nlohmann::json::parse(out.output);
  EXPECT_EQ(summary["devices"], 2);
  EXPECT_EQ(summary["tests"], 6);
  const std::vector<steer::Result> stored = stored_results(db);
  EXPECT_EQ(stored.size(), 6u);
  EXPECT_EQ(occurrences(stored).size(), 6u) << "each configuration once";

  Output again = run_steer(arguments);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(nlohmann::json::parse(again.output)["resumed"], 6) << "resumed as on one device";
}

TEST(ParallelTune, ThreeMpiRanksStoreEveryTestOnceAndAResumeServesThem) {
  if (const std::string missing = mpi_missing(); !missing.empty()) GTEST_SKIP() << missing;
  const fs::path db = fresh_db("mpi");
  const MpiRun run = mpirun(3, kTune + "--budget 9 --json --db " + db.string());
  if (run.errors.find("MPI support was not built") != std::string::npos) GTEST_SKIP() << "steer was built without MPI";
  const Output& out = run.out;
  ASSERT_EQ(out.exit_code, 0) << out.output << run.errors;
  const auto summary = nlohmann::json::parse(out.output);  // rank 0 alone prints
  EXPECT_EQ(summary["devices"], 3) << "rank 0 and two serving ranks";
  EXPECT_EQ(summary["tests"], 9);
  EXPECT_EQ(summary["valid"], 9);
  std::vector<steer::Result> stored = stored_results(db);
  EXPECT_EQ(stored.size(), 9u);
  EXPECT_EQ(occurrences(stored).size(), 9u) << "each configuration measured once";

  // Resuming under MPI, or as one process, serves what is stored and measures only the rest.
  const Output more = mpirun(3, kTune + "--budget 12 --json --db " + db.string()).out;
  ASSERT_EQ(more.exit_code, 0) << more.output;
  const auto resumed = nlohmann::json::parse(more.output);
  EXPECT_EQ(resumed["tests"], 12);
  EXPECT_EQ(resumed["resumed"], 9);
  stored = stored_results(db);
  EXPECT_EQ(stored.size(), 12u);
  EXPECT_EQ(occurrences(stored).size(), 12u);
}

// A rank that cannot open its device tells rank 0 why; rank 0 ends the run at once (not after
// --rank-timeout), saying which rank and why.
TEST(ParallelTune, ARankThatCannotOpenItsDeviceEndsTheRunAtOnceSayingWhy) {
  if (const std::string missing = mpi_missing(); !missing.empty()) GTEST_SKIP() << missing;
  const fs::path db = fresh_db("mpi_rank_without_device");
  const std::string steer = "'" STEER_BINARY "' " + kTune + "--budget 30 --rank-timeout 120 --db " + db.string();
  const auto started = std::chrono::steady_clock::now();
  // Rank 1 is told to use a device that does not exist.
  const MpiRun run =
      run_command("mpirun --oversubscribe -np 1 " + steer + " : -np 1 " + steer + " --device 99 : -np 1 " + steer);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
  if (run.errors.find("MPI support was not built") != std::string::npos) GTEST_SKIP() << "steer was built without MPI";
  EXPECT_NE(run.out.exit_code, 0) << run.errors;
  EXPECT_NE(run.errors.find("rank 1 could not start: OpenCL device 99 does not exist"), std::string::npos)
      << run.errors;
  EXPECT_LT(took.count(), 60) << "the run ended at once, not after --rank-timeout";
}

// The pids of the ranks mpirun started, by rank (their environment says which).
std::map<int, pid_t> ranks_of(pid_t mpirun_pid) {
  std::map<int, pid_t> ranks;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const std::size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    int parent = 0;
    char state = 0;
    std::istringstream(line.substr(close + 2)) >> state >> parent;
    if (parent != mpirun_pid) continue;
    std::ifstream environ(entry.path() / "environ");
    std::string variable;
    while (std::getline(environ, variable, '\0')) {
      if (variable.rfind("OMPI_COMM_WORLD_RANK=", 0) == 0) ranks[std::stoi(variable.substr(21))] = std::stoi(name);
    }
  }
  return ranks;
}

// Starts `mpirun` with `ranks` ranks of `steer ARGUMENTS` in the background, its standard
// error to `errors` (or nowhere); returns its pid.
pid_t start_mpirun(int ranks, const std::string& arguments, const std::string& mpirun_options = "",
                   const std::string& errors = "/dev/null") {
  const pid_t child = fork();
  if (child == 0) {
    const std::string command = mpirun_command(ranks, arguments, mpirun_options) + " >/dev/null 2>'" + errors + "'";
    execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return child;
}

// Waits, for two minutes at most, until `db` holds `tests` tests or mpirun (`child`) ended;
// the tests stored, and whether it ended (`status` then holds its status).
std::size_t wait_for_stored(const fs::path& db, std::size_t tests, pid_t child, bool& ended, int& status) {
  std::size_t seen = 0;
  ended = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (std::chrono::steady_clock::now() < deadline && seen < tests) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (waitpid(child, &status, WNOHANG) == child) {
      ended = true;
      break;
    }
    if (!fs::exists(db)) continue;
    try {
      seen = stored_results(db).size();
    } catch (const steer::Error&) {
      continue;  // the schema is being created
    }
  }
  return seen;
}

TEST(ParallelTune, KillNineOfAServingRankLosesNoFinishedTest) {
  if (const std::string missing = mpi_missing(); !missing.empty()) GTEST_SKIP() << missing;
  const fs::path db = fresh_db("mpi_kill");
  const std::string arguments = kTune + "--budget 60 --repetitions 2 --db " + db.string();
  const pid_t child = start_mpirun(3, arguments);
  ASSERT_GE(child, 0);
  int status = 0;
  bool ended = false;
  const std::size_t seen = wait_for_stored(db, 6, child, ended, status);
  if (ended && seen == 0) GTEST_SKIP() << "mpirun ended before a test was stored (steer built without MPI?)";
  ASSERT_FALSE(ended) << "the run ended before a rank could be killed";
  const std::map<int, pid_t> ranks = ranks_of(child);
  ASSERT_GE(seen, 6u) << "the tuning did not commit tests in time";
  ASSERT_TRUE(ranks.contains(2)) << "rank 2 not found among mpirun's children";
  ASSERT_EQ(kill(ranks.at(2), SIGKILL), 0);
  waitpid(child, &status, 0);  // Open MPI ends the job when a rank dies

  const std::vector<steer::Result> before = stored_results(db);
  ASSERT_GE(before.size(), seen);
  std::map<std::string, double> before_times;
  for (const steer::Result& r : before) before_times[r.key()] = r.time.median_ms;

  // Resumed as one process: nothing finished is measured again, nothing is stored twice.
  Output resumed = run_steer(arguments + " --json", false);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  const auto summary = nlohmann::json::parse(resumed.output);
  EXPECT_EQ(summary["tests"], 60);
  EXPECT_EQ(summary["resumed"].get<std::size_t>(), before.size());
  const std::vector<steer::Result> after = stored_results(db);
  EXPECT_EQ(after.size(), 60u);
  for (const auto& [key, count] : occurrences(after)) EXPECT_EQ(count, 1) << key << " stored twice";
  for (const steer::Result& r : after) {
    if (auto it = before_times.find(r.key()); it != before_times.end()) {
      EXPECT_EQ(r.time.median_ms, it->second) << "a finished test was measured again";
    }
  }
}

// Waits, for `limit` at most, until mpirun (`child`) ends; whether it did. One that did not is
// ended, its ranks too.
bool wait_for_end(pid_t child, std::chrono::seconds limit) {
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(child, &status, WNOHANG) == child) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (const auto& [rank, pid] : ranks_of(child)) kill(pid, SIGKILL);
  kill(child, SIGKILL);
  waitpid(child, &status, 0);
  return false;
}

std::string text_of(const fs::path& file) {
  std::ifstream text(file);
  return {std::istreambuf_iterator<char>(text), std::istreambuf_iterator<char>()};
}

// Starts an `mpirun --enable-recovery` job of three ranks tuning `budget` tests into `db`
// (--rank-timeout 5, standard error to `errors`), and kills rank `victim` once 6 tests are
// stored; `child` is mpirun, `seen` the tests stored by then. Skips where MPI is missing.
void start_and_kill_a_rank(const fs::path& db, const fs::path& errors, int budget, int victim, pid_t& child,
                           std::size_t& seen) {
  if (const std::string missing = mpi_missing(); !missing.empty()) GTEST_SKIP() << missing;
  const std::string arguments =
      kTune + "--budget " + std::to_string(budget) + " --repetitions 20 --rank-timeout 5 --db " + db.string();
  child = start_mpirun(3, arguments, "--enable-recovery", errors.string());
  ASSERT_GE(child, 0);
  int status = 0;
  bool ended = false;
  seen = wait_for_stored(db, 6, child, ended, status);
  if (ended && seen == 0) GTEST_SKIP() << "mpirun ended before a test was stored (steer built without MPI?)";
  ASSERT_FALSE(ended) << "the run ended before rank " << victim << " could be killed";
  const std::map<int, pid_t> ranks = ranks_of(child);
  ASSERT_TRUE(ranks.contains(victim)) << "rank " << victim << " not found among mpirun's children";
  ASSERT_EQ(kill(ranks.at(victim), SIGKILL), 0);
}

// With Open MPI's --enable-recovery the job outlives a rank that dies: rank 0 records the
// test the rank was running as failed, hands the rest to the others, stores every test once,
// and then ends the job.
TEST(ParallelTune, WithRecoveryEnabledTheRunGoesOnWhenAServingRankIsKilled) {
  const fs::path db = fresh_db("mpi_recovery");
  const fs::path errors = db.string() + ".errors";
  pid_t child = -1;
  std::size_t seen = 0;
  start_and_kill_a_rank(db, errors, 60, 2, child, seen);
  if (HasFatalFailure() || IsSkipped()) return;
  const bool ended = wait_for_end(child, std::chrono::minutes(3));
  const std::string said = text_of(errors);
  const std::vector<steer::Result> stored = stored_results(db);
  ASSERT_TRUE(ended) << "the job did not end after the run; " << stored.size() << " tests stored; it said:\n"
                     << said;

  EXPECT_EQ(stored.size(), 60u) << "the run went on to its budget on the other ranks";
  for (const auto& [key, count] : occurrences(stored)) EXPECT_EQ(count, 1) << key << " stored twice";
  std::size_t failed_on_rank_2 = 0;
  for (const steer::Result& r : stored) {
    if (r.status != steer::Status::Ok && r.message.find("rank 2") != std::string::npos) ++failed_on_rank_2;
  }
  EXPECT_EQ(failed_on_rank_2, 1u) << "the test rank 2 was running is recorded as failed, and only it";
  EXPECT_NE(said.find("a rank was lost"), std::string::npos) << said;
}

// With --enable-recovery a rank 0 that dies does not end the job by itself: the other ranks
// miss its word (it says it is alive every second), end, and so end the job; what rank 0
// stored stays.
TEST(ParallelTune, WithRecoveryEnabledTheOtherRanksEndWhenRankZeroIsKilled) {
  const fs::path db = fresh_db("mpi_rank_0_killed");
  const fs::path errors = db.string() + ".errors";
  pid_t child = -1;
  std::size_t seen = 0;
  // --rank-timeout 5: the others wait 10 s (the least) for a word from rank 0.
  start_and_kill_a_rank(db, errors, 100000, 0, child, seen);
  if (HasFatalFailure() || IsSkipped()) return;
  // Every test of the space would take minutes: a job that ends soon was ended by the others.
  const bool ended = wait_for_end(child, std::chrono::seconds(60));
  const std::string said = text_of(errors);
  ASSERT_TRUE(ended) << "the job did not end within a minute of rank 0's death; it said:\n" << said;
  EXPECT_NE(said.find("rank 0 has died"), std::string::npos) << said;
  const std::vector<steer::Result> stored = stored_results(db);
  EXPECT_GE(stored.size(), seen) << "what rank 0 stored before it died stays";
  for (const auto& [key, count] : occurrences(stored)) EXPECT_EQ(count, 1) << key << " stored twice";
}

// srun with several tasks but no MPI plugin starts processes that cannot form one job: each
// would tune on its own into the same store. steer refuses before its first test.
TEST(ParallelTune, SrunTasksWithoutAnMpiPluginAreRefusedBeforeAnyTest) {
  const fs::path db = fresh_db("srun_without_mpi");
  // What srun --mpi=none sets for a step of three tasks (and no PMI or PMIx variable).
  const MpiRun run = run_command(
      "env -u OMPI_COMM_WORLD_SIZE -u PMI_SIZE -u PMI_RANK -u PMIX_RANK SLURM_STEP_NUM_TASKS=3 SLURM_PROCID=1 '" STEER_BINARY
      "' " + kTune + "--budget 3 --db " + db.string());
  EXPECT_NE(run.out.exit_code, 0) << run.out.output << run.errors;
  EXPECT_NE(run.errors.find("srun started 3 tasks without an MPI plugin"), std::string::npos) << run.errors;
  EXPECT_NE(run.errors.find("--mpi=pmix"), std::string::npos) << run.errors;
  EXPECT_FALSE(fs::exists(db)) << "refused before the store was opened";
}

// A private one-node Slurm cluster for the length of a test: started in `dir` by
// scripts/slurm-one-node, stopped when it goes out of scope.
class OneNodeSlurm {
 public:
  explicit OneNodeSlurm(fs::path dir) : dir_(std::move(dir)) {
    const MpiRun run = run_command("'" STEER_SOURCE_DIR "/scripts/slurm-one-node' start '" + dir_.string() + "'");
    started_ = run.out.exit_code == 0;
    said_ = run.out.output + run.errors;
  }
  ~OneNodeSlurm() {
    const std::string command = "'" STEER_SOURCE_DIR "/scripts/slurm-one-node' stop '" + dir_.string() + "'";
    if (std::system(command.c_str()) != 0) {
      std::fprintf(stderr, "could not stop the cluster in %s\n", dir_.c_str());
      return;  // its files stay for a look
    }
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  OneNodeSlurm(const OneNodeSlurm&) = delete;
  OneNodeSlurm& operator=(const OneNodeSlurm&) = delete;

  bool started() const { return started_; }
  const std::string& said() const { return said_; }
  // `srun ARGUMENTS` on this cluster: its standard output, exit status and standard error.
  MpiRun srun(const std::string& arguments) const {
    return run_command("SLURM_CONF='" + (dir_ / "slurm.conf").string() + "' srun " + arguments);
  }

 private:
  fs::path dir_;
  std::string said_;
  bool started_ = false;
};

TEST(ParallelTune, ThreeSrunTasksOfASlurmJobStoreEveryTestOnceAndAResumeServesThem) {
  if (const std::string missing = mpi_missing(); !missing.empty()) GTEST_SKIP() << missing;
  for (const char* program : {"srun", "slurmctld", "slurmd", "munged"}) {
    if (std::system(("command -v " + std::string(program) + " >/dev/null 2>&1").c_str()) != 0) {
      GTEST_SKIP() << program << " is not installed (scripts/setup --slurm installs Slurm)";
    }
  }
  const OneNodeSlurm cluster(fs::temp_directory_path() / ("steer_e2e_slurm_" + std::to_string(getpid())));
  if (!cluster.started()) GTEST_SKIP() << "the one-node Slurm cluster did not start: " << cluster.said();
  const fs::path db = fresh_db("srun");
  // One task per device: on this machine three tasks share the one OpenCL CPU device, so
  // they overcommit its cores, as mpirun --oversubscribe does.
  const std::string srun = "--mpi=pmix --overcommit -n 3 '" STEER_BINARY "' ";
  const MpiRun run = cluster.srun(srun + kTune + "--budget 9 --json --db " + db.string());
  if (run.errors.find("MPI support was not built") != std::string::npos) GTEST_SKIP() << "steer was built without MPI";
  ASSERT_EQ(run.out.exit_code, 0) << run.out.output << run.errors;
  const auto summary = nlohmann::json::parse(run.out.output);  // task 0 alone prints
  EXPECT_EQ(summary["devices"], 3) << "task 0 and two serving tasks";
  EXPECT_EQ(summary["tests"], 9);
  std::vector<steer::Result> stored = stored_results(db);
  EXPECT_EQ(stored.size(), 9u);
  EXPECT_EQ(occurrences(stored).size(), 9u) << "each configuration measured once";

  const MpiRun more = cluster.srun(srun + kTune + "--budget 12 --json --db " + db.string());
  ASSERT_EQ(more.out.exit_code, 0) << more.out.output << more.errors;
  const auto resumed = nlohmann::json::parse(more.out.output);
  EXPECT_EQ(resumed["tests"], 12);
  EXPECT_EQ(resumed["resumed"], 9);
  stored = stored_results(db);
  EXPECT_EQ(stored.size(), 12u);
  EXPECT_EQ(occurrences(stored).size(), 12u);
}

}  // namespace
