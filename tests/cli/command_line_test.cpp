// What every subcommand shares (apps/steer/main.cpp, number_checks.hpp): its exit codes,
// numbers on the command line checked for what CLI11 lets through, and output that cannot
// be written reported.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include <filesystem>
#include <fstream>
#include <string>

#include "steer_cli_runner.hpp"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using steer::test_support::run_steer;

const std::string kSpec = STEER_SOURCE_DIR "/kernels/transpose/spec.json";
const std::string kTune = "tune '" + kSpec + "' --backend opencl --size small --searcher random ";

TEST(CommandLine, ABadCommandLineIsAUsageErrorWithExitCode2) {
  const std::pair<std::string, std::string> cases[] = {
      {"--time nan", "--time: nan is not a finite number"},
      {"--fraction nan", "--fraction: nan is not a finite number"},
      {"--target-ms -1", "--target-ms: -1 is not a positive number"},
      {"--budget 99999999999999999999", "is larger than 18446744073709551615"},
      {"--seed 18446744073709551616", "is larger than 18446744073709551615"},
      {"--compile-threads -3", "--compile-threads: -3 is not in [0, 4096]"},
      {"--no-such-option", "--no-such-option"},
  };
  for (const auto& [arguments, message] : cases) {
    auto outcome = run_steer(kTune + arguments, true);
    EXPECT_EQ(outcome.exit_code, 2) << arguments << ": " << outcome.output;
    EXPECT_THAT(outcome.output, HasSubstr(message)) << arguments;
  }
  auto simulate = run_steer("simulate --data x --searcher random --target nan", true);
  EXPECT_EQ(simulate.exit_code, 2) << simulate.output;
  EXPECT_EQ(run_steer("--version", false).exit_code, 0);
  EXPECT_EQ(run_steer("tune --help", false).exit_code, 0);
}

TEST(CommandLine, BadInputIsAnErrorWithExitCode1) {
  auto missing = run_steer("space /nonexistent/spec.json --count", true);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.output, HasSubstr("/nonexistent/spec.json"));
  // Searchers without settings refuse any, as the others refuse those they do not know.
  for (const char* searcher : {"random", "exhaustive"}) {
    auto outcome = run_steer("simulate --data '" STEER_DATA_DIR "/recordings/ktt/coulomb_rtx2080.ktt.json.gz' --runs 2 "
                             "--searcher " + std::string(searcher) + " --set popsize=4",
                             true);
    EXPECT_EQ(outcome.exit_code, 1) << searcher;
    EXPECT_THAT(outcome.output, HasSubstr("unknown setting(s) popsize; it has no settings")) << searcher;
  }
}

TEST(CommandLine, OutputThatCannotBeWrittenIsAnError) {
  const fs::path errors = fs::temp_directory_path() / ("steer_full_" + std::to_string(getpid()) + ".txt");
  const std::string command = "'" STEER_BINARY "' space '" + kSpec + "' --count >/dev/full 2>'" + errors.string() + "'";
  const int status = std::system(command.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 1);
  std::ifstream in(errors);
  const std::string message((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(message, HasSubstr("steer space could not write its output: No space left on device"));
  fs::remove(errors);
  // With nowhere to say so either, it still fails, and does not crash.
  EXPECT_EQ(run_steer("space '" + kSpec + "' --count >/dev/full", true).exit_code, 1);
}

TEST(CommandLine, ATuningWithoutAValidConfigurationExitsWith3) {
  // The transpose spec with a kernel that never compiles.
  const fs::path dir = fs::temp_directory_path() / ("steer_command_line_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ifstream in(kSpec);
  std::string spec((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir / "spec.json") << spec;
  std::ofstream(dir / "kernel.cl") << "__kernel void transpose(__global float* out) { this does not compile }\n";
  std::ofstream(dir / "kernel.cu") << "this does not compile\n";
  auto outcome = run_steer("tune '" + (dir / "spec.json").string() + "' --backend opencl --size small --budget 2", true);
  EXPECT_EQ(outcome.exit_code, 3) << outcome.output;
  EXPECT_THAT(outcome.output, HasSubstr("no configuration was valid (2 tested, 2 failed)"));
  fs::remove_all(dir);
}

TEST(CommandLine, TheListSearcherRunsInASimulation) {
  // The list: the configuration exhaustive search tests first, from its trace.
  const std::string data = STEER_DATA_DIR "/recordings/ktt/coulomb_rtx2080.ktt.json.gz";
  const fs::path trace = fs::temp_directory_path() / ("steer_list_" + std::to_string(getpid()) + ".csv");
  const fs::path list = fs::temp_directory_path() / ("steer_list_" + std::to_string(getpid()) + ".txt");
  ASSERT_EQ(run_steer("simulate --data '" + data + "' --runs 1 --no-score --searcher exhaustive --target 1e9 --trace '" +
                          trace.string() + "'",
                      true)
                .exit_code,
            0);
  std::ifstream rows(trace);
  std::string header, row;
  std::getline(rows, header);
  std::getline(rows, row);
  const std::size_t open = row.find('"'), close = row.find('"', open + 1);
  ASSERT_NE(close, std::string::npos) << row;
  std::ofstream(list) << row.substr(open + 1, close - open - 1) << "\n";
  auto outcome = run_steer("simulate --data '" + data + "' --runs 2 --no-score --target 1e9 --searcher list --set list.file='" +
                               list.string() + "'",
                           true);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_THAT(outcome.output, HasSubstr("\nlist "));
  fs::remove(list);
  fs::remove(trace);
}

}  // namespace
