// steer report: the plots of a recording or results store (--db) and of simulated tuning
// (--simulation, or --searcher with --db), with the data behind every plot. docs/report.md.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "number_checks.hpp"
#include "steer/error.hpp"
#include "steer/eval.hpp"
#include "steer/recording.hpp"

namespace steer::cli {
namespace {

struct ReportArgs {
  std::string db;
  std::optional<std::int64_t> tuning;
  std::string simulation;
  std::string explain;
  std::vector<std::string> searchers;
  std::uint64_t runs = 100;
  double target = 1.1;
  std::optional<std::uint64_t> budget;
  std::uint64_t seed = 1;
  unsigned threads = 0;
  std::optional<std::size_t> bins;
  std::string out;
  std::string python;
  std::string title;
  bool no_plots = false;
  bool no_searcher_time = false;
  int compile_threads = CostModel{}.compile_threads;
  std::string compile_times = "recorded";
  bool score = false;
};

SimulationReport simulate_here(const Recording& recording, const ReportArgs& args) {
  EvaluationOptions options;
  options.simulation.target = args.target;
  options.simulation.budget = args.budget;
  options.runs = args.runs;
  options.seed = args.seed;
  options.threads = args.threads > 0 ? args.threads : std::max(1u, std::thread::hardware_concurrency());
  options.simulation.cost.charge_searcher = !args.no_searcher_time;
  options.simulation.cost.compile_threads = args.compile_threads;
  options.simulation.cost.compile_times = args.compile_times == "mean" ? CompileTimes::Mean : CompileTimes::Recorded;
  options.score = args.score;
  SimulationReport simulation;
  simulation.data = args.db;
  simulation.kernel = recording.kernel();
  simulation.device = recording.device();
  simulation.runs = args.runs;
  simulation.compile_threads = options.simulation.cost.compile_threads;
  simulation.compile_times = args.compile_times;
  simulation.seed = args.seed;
  simulation.budget = args.budget;
  simulation.target = args.target;
  simulation.evaluation = evaluate(recording, args.searchers, options);
  return simulation;
}

int run_report(const ReportArgs& args) {
  if (args.db.empty() && args.simulation.empty() && args.explain.empty()) {
    throw Error(
        "nothing to report: give --db FILE (a recording or results store), --simulation FILE, --explain FILE, or "
        "several");
  }
  if (!args.searchers.empty() && args.db.empty()) throw Error("--searcher simulates on the --db recording: give --db");
  if (!args.searchers.empty() && !args.simulation.empty()) {
    throw Error("--searcher and --simulation both give a simulation: choose one");
  }
  if (args.tuning && args.db.empty()) throw Error("--tuning picks a tuning of the --db results store: give --db");

  std::optional<SimulationReport> simulation;
  std::vector<SimulationReport> spaces;
  if (!args.simulation.empty()) {  // before writing anything
    spaces = read_simulations_json(args.simulation);
    if (spaces.size() == 1) {
      simulation = std::move(spaces.front());
      spaces.clear();
    } else if (!args.db.empty()) {
      throw Error(fmt::format("--simulation '{}' covers {} spaces: --db adds a single recording, leave it out",
                              args.simulation, spaces.size()));
    }
  }
  std::optional<ImportedRecording> imported;
  std::optional<Recording> recording;
  if (!args.db.empty()) {
    imported = import_recording(args.db, args.tuning);
    try {
      recording = Recording::from_import(*imported);
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", args.db, e.what()));
    }
    if (!args.searchers.empty()) {
      if (!recording->best_runtime_ms()) {
        throw Error(fmt::format("{}: no valid configuration to aim for ({} recorded, none with status ok)", args.db,
                                recording->present_count()));
      }
      simulation = simulate_here(*recording, args);
    }
  }
  ReportInput input{.source = args.db,
                    .imported = imported ? &*imported : nullptr,
                    .recording = recording ? &*recording : nullptr,
                    .simulation = simulation ? &*simulation : nullptr,
                    .spaces = spaces.empty() ? nullptr : &spaces,
                    .explanations = args.explain};
  ReportOptions options{.out = args.out, .title = args.title, .bins = args.bins, .plots = !args.no_plots,
                        .python = args.python};
  const std::size_t plots = write_report(input, options);
  fmt::print("wrote {} to {}\n",
             args.no_plots ? fmt::format("the data of {} plots", plots) : fmt::format("{} plots (PNG, SVG)", plots),
             (options.out / "index.html").string());
  return 0;
}

}  // namespace

Runner register_report(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* command = app.add_subcommand(
      "report", "Plots of a recording and of simulated tuning (PNG, SVG, index.html) and the data behind them (CSV)");
  command->add_option("--db", args->db,
                      "Results store (SQLite, .gz read) or any recording steer import reads: runtime histogram, "
                      "time-energy Pareto plot, best so far in recorded order");
  command->add_option("--tuning", args->tuning, "Tuning id, for a store with several");
  command->add_option("--explain", args->explain,
                      "The explanations of a tuning run (steer tune --explain-to FILE): what the counters decided")
      ->check(CLI::ExistingFile);
  command->add_option("--simulation", args->simulation,
                      "Output of `steer simulate --json --details`: convergence and tests-to-target plots");
  command->add_option("--searcher", args->searchers, "Simulate these searchers on the --db recording (comma-separated)")
      ->delimiter(',');
  command->add_option("--runs", args->runs, "With --searcher: runs per searcher")
      ->capture_default_str()
      ->check(kPositive);
  command->add_option("--target", args->target, "With --searcher: well-performing within this factor of the best")
      ->capture_default_str()
      ->check(number_in(1.0, 1e9));
  command->add_option("--budget", args->budget, "With --searcher: tests per run (default: the whole space)")
      ->check(kPositive);
  command->add_option("--seed", args->seed, "With --searcher: seed of the first run")->capture_default_str()->check(kNonNegative);
  command->add_option("--threads", args->threads, "With --searcher: threads (default: all)");
  command->add_option("--bins", args->bins, "Bins of the runtime histogram (default: sqrt(n), 5 to 60)")
      ->check(kPositive);
  command->add_option("--out", args->out, "Output folder (created)")->required();
  command->add_option("--python", args->python,
                      "Python 3 with matplotlib (default: python3 on PATH, else /usr/bin/python3)");
  command->add_option("--title", args->title, "Title of index.html (default: kernel on device)");
  command->add_flag("--score", args->score, "With --searcher: also the performance score P, and its plots");
  command->add_flag("--no-searcher-time", args->no_searcher_time,
                    "With --searcher: leave the searchers' own measured computation off the simulated clock");
  command->add_option("--compile-threads", args->compile_threads,
                      "With --searcher: compile streams working ahead of the device (0: each compile before its "
                      "test); as steer simulate")
      ->capture_default_str()
      ->check(kNonNegative);
  command->add_option("--compile-times", args->compile_times,
                      "With --searcher: each compile charged as recorded or at the recording's mean; as steer "
                      "simulate")
      ->capture_default_str()
      ->check(CLI::IsMember({"recorded", "mean"}));
  command->add_flag("--no-plots", args->no_plots, "Write the CSV data and index.html only; needs no Python");
  return [args] { return run_report(*args); };
}

}  // namespace steer::cli
