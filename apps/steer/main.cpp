// steer: the command-line tool. One file per subcommand; this file only dispatches.
#include <cstdio>
#include <exception>
#include <fmt/core.h>
#include <map>
#include <string>

#include "commands.hpp"
#include "steer/error.hpp"

namespace {

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
    return app.exit(e);
  }
  try {
    for (auto& [sub, runner] : runners) {
      if (sub->parsed()) return runner();
    }
    return 2;
  } catch (const steer::ExpressionError& e) {
    fmt::print(stderr, "steer: error: {}\n", e.detailed());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "steer: error: {}\n", e.what());
    return 1;
  }
}
