#pragma once
// Runs the steer binary built with the tests (STEER_BINARY) as a user would, for the tests of
// the command-line interface: its exit status and what it printed.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace steer::test_support {

struct CliOutcome {
  int exit_code = -1;
  std::string output;  // stdout; stderr too when asked
};

inline CliOutcome run_steer(const std::string& arguments, bool with_stderr = true) {
  std::string command = "'" STEER_BINARY "' " + arguments + (with_stderr ? " 2>&1" : " 2>/dev/null");
  CliOutcome outcome;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) {
    ADD_FAILURE() << "cannot run " << command;
    return outcome;
  }
  char block[4096];
  for (std::size_t n; (n = std::fread(block, 1, sizeof block, pipe)) > 0;) outcome.output.append(block, n);
  int status = pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

}  // namespace steer::test_support
