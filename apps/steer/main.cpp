// steer: the command-line tool. One file per subcommand; this file only dispatches.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <system_error>
#include <fmt/core.h>
#include <map>
#include <string>

#include "commands.hpp"
#include "steer/error.hpp"

namespace {

// Error messages never throw: stderr itself may be what cannot be written to.
void report(const std::string& message) {
  std::fputs(("steer: error: " + message + "\n").c_str(), stderr);
}

// The registration lines: add a subcommand here.
constexpr steer::cli::Registration kCommands[] = {
    steer::cli::register_space,
    steer::cli::register_tune,
    steer::cli::register_profile,
    steer::cli::register_export,
    steer::cli::register_import,
    steer::cli::register_simulate,
    steer::cli::register_model,
    steer::cli::register_report,
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"steer: a GPU kernel autotuner guided by hardware counters"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "steer 0.1.0");
  std::map<CLI::App*, steer::cli::Runner> runners;
  for (auto registration : kCommands) {
    auto before = app.get_subcommands({});
    steer::cli::Runner runner = registration(app);
    auto after = app.get_subcommands({});
    for (CLI::App* sub : after) {
      bool is_new = true;
      for (CLI::App* old : before) is_new = is_new && old != sub;
      if (is_new) runners[sub] = runner;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints the message, or the help or version asked for
    return code == 0 ? 0 : steer::cli::kUsageError;
  }
  std::string command = "steer";
  try {
    for (auto& [sub, runner] : runners) {
      if (!sub->parsed()) continue;
      command = "steer " + sub->get_name();
      const int code = runner();
      // Output that could not be written (a full disk, a closed pipe) is an error, not success.
      if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
        report(fmt::format("{} could not write its output: {}", command, std::strerror(errno)));
        return steer::cli::kError;
      }
      return code;
    }
    return steer::cli::kUsageError;
  } catch (const steer::ExpressionError& e) {
    report(e.detailed());
  } catch (const std::bad_alloc&) {
    report(command + " ran out of memory (the space, recording or store is too large for this machine's memory)");
  } catch (const std::system_error& e) {
    report(command + ": the system refused: " + e.what());
  } catch (const std::exception& e) {
    report(e.what());
  }
  return steer::cli::kError;
}
