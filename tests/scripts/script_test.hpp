#pragma once
// What the tests of scripts/ share: a scratch folder of each test's own (removed afterwards),
// where a script runs with its output captured, and a fake steer written into it when the test
// needs one.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace steer::test_support {

inline std::string read_file(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class ScriptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("steer_script_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes `script` as the executable DIR/steer.
  void write_fake_steer(const std::string& script) {
    std::ofstream(dir_ / "steer") << script;
    std::filesystem::permissions(dir_ / "steer", std::filesystem::perms::owner_all);
  }

  // Runs the shell command line `command` in the scratch folder, expecting it to exit with
  // `expected_exit` (`what` names it in a failure); returns what it printed on stdout and stderr.
  std::string run_in_scratch(const std::string& command, const std::string& what, int expected_exit) {
    const std::filesystem::path output = dir_ / "output.txt";
    const std::string line = "cd '" + dir_.string() + "' && " + command + " >'" + output.string() + "' 2>&1";
    const int status = std::system(line.c_str());
    EXPECT_TRUE(WIFEXITED(status)) << read_file(output);
    EXPECT_EQ(WEXITSTATUS(status), expected_exit) << what << "\n" << read_file(output);
    return read_file(output);
  }

  std::filesystem::path dir_;
};

}  // namespace steer::test_support
