#pragma once
// Each subcommand lives in its own file and registers itself with one line in main.cpp.
#include <CLI/CLI.hpp>
#include <functional>

namespace steer::cli {

// A subcommand adds itself to `app` and returns the function to run when it is chosen.
// The function returns the process exit code.
using Runner = std::function<int()>;

// Exit codes, the same for every subcommand (docs/cli.md, "Exit codes").
inline constexpr int kSuccess = 0;
inline constexpr int kError = 1;          // bad input, a failure; the message says which
inline constexpr int kUsageError = 2;     // the command line itself: an unknown option, a bad value
inline constexpr int kNoValidResult = 3;  // a tuning ran but no configuration was valid
inline constexpr int kRankLost = 4;  // under MPI: a rank was lost (its tests failed; the rest stored)
inline constexpr int kInterrupted = 130;  // Ctrl-C: stopped after the test in progress
using Registration = Runner (*)(CLI::App& app);

Runner register_space(CLI::App& app);
Runner register_tune(CLI::App& app);
Runner register_profile(CLI::App& app);
Runner register_export(CLI::App& app);
Runner register_import(CLI::App& app);
Runner register_simulate(CLI::App& app);
Runner register_model(CLI::App& app);
Runner register_report(CLI::App& app);

}  // namespace steer::cli
