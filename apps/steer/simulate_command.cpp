// steer simulate: replay searchers against a recording many times; how many tests (and
// simulated seconds) each needs to find a well-performing configuration. docs/simulate.md.
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <memory>
#include <sstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "steer/error.hpp"
#include "steer/eval.hpp"
#include "steer/recording.hpp"
#include "steer/spec.hpp"

namespace steer::cli {
namespace {

struct SimulateArgs {
  std::string data;
  std::vector<std::string> searchers;
  std::string spec;
  std::string model;
  std::vector<std::string> settings;
  std::uint64_t runs = 1000;
  double target = 1.1;
  std::optional<std::uint64_t> budget;
  std::uint64_t seed = 1;
  unsigned threads = 0;  // 0: every hardware thread
  int repetitions = 1;
  int profiling_passes = 5;
  double pass_overhead_ms = 12.5;
  std::size_t ahead = 1;
  bool json = false;
  bool details = false;
  bool with_counters = false;
  bool score = false;
  std::size_t score_points = 50;
  std::string curves;
  std::string trace;
};

std::string cell(double value, int decimals) {
  return std::isnan(value) ? std::string("-") : fmt::format("{:.{}f}", value, decimals);
}

void print_table(const Evaluation& evaluation, const Recording& recording, const SimulateArgs& args,
                 std::size_t left_out) {
  fmt::print("{} on {}: {} configurations, {} valid, best {:.4f} ms, target {:.4f} ms ({}x)\n",
             recording.kernel(), recording.device(), evaluation.configs, evaluation.valid, evaluation.best_ms,
             evaluation.target_ms, args.target);
  if (args.with_counters) fmt::print("{} valid tests without counters left out (--with-counters)\n", left_out);
  if (recording.present_count() != evaluation.configs || recording.outside_space() > 0) {
    // Only with --spec: missing configurations replay as skipped tests.
    fmt::print("{} of the configurations are in the recording; {} recorded ones are outside the space\n",
               recording.present_count(), recording.outside_space());
  }
  fmt::print("{} runs per searcher; tests to target over the runs that reached it\n", args.runs);
  if (evaluation.score) {
    const ScoreCutoffs& cutoffs = *evaluation.score;
    fmt::print("performance score P over {} points: tests 1 to {}, simulated time {:.4g} to {:.4g} s "
               "({:.4g} ms a test)\n",
               cutoffs.points, cutoffs.end_tests, cutoffs.start_s, cutoffs.end_s, cutoffs.test_cost_ms);
  }
  fmt::print("\n{:<14} {:>10} {:>8} {:>8} {:>7} {:>12} {:>9}", "searcher", "mean", "median", "p90", "failed",
             "mean time s", "vs random");
  if (evaluation.score) fmt::print(" {:>8} {:>8}", "P tests", "P time");
  fmt::print("\n");
  for (const SearcherEvaluation& e : evaluation.searchers) {
    fmt::print("{:<14} {:>10} {:>8} {:>8} {:>7} {:>12} {:>9}", e.name, cell(e.mean_tests, 1),
               cell(e.median_tests, 1), cell(e.p90_tests, 0), e.failed_runs, cell(e.mean_time_s, 3),
               cell(e.ratio_to_random.value_or(NAN), 3));
    if (evaluation.score) fmt::print(" {:>8} {:>8}", cell(e.score.fevals, 3), cell(e.score.time, 3));
    fmt::print("\n");
  }
}

// Writes `file` with `write`, naming the file when it cannot be written.
template <typename Write>
void write_file(const std::string& file, const char* what, Write&& write) {
  std::ofstream out(file);
  if (!out) throw Error(fmt::format("cannot write the {} to '{}'", what, file));
  write(out);
  if (!out.flush()) throw Error(fmt::format("cannot write the {} to '{}'", what, file));
}

int run_simulate(const SimulateArgs& args) {
  std::optional<Spec> spec;
  if (!args.spec.empty()) spec = load_spec(args.spec);
  // Any recording `steer import` reads, or a results store (.db, .db.gz).
  std::size_t left_out = 0;
  Recording recording = Recording::load(args.data,
                                       {.definition = spec ? &spec->space : nullptr, .tuning = {}, .only_with_counters = args.with_counters},
                                       &left_out);

  EvaluationOptions options;
  options.simulation.target = args.target;
  options.simulation.budget = args.budget;
  options.simulation.ahead = args.ahead;
  options.simulation.cost = {args.repetitions, args.profiling_passes, args.pass_overhead_ms};
  options.runs = args.runs;
  options.seed = args.seed;
  options.threads = args.threads > 0 ? args.threads : std::max(1u, std::thread::hardware_concurrency());
  options.model_path = args.model;
  options.keep_routes = !args.trace.empty();
  options.score = args.score;
  options.score_points = args.score_points;
  for (const std::string& setting : args.settings) {
    auto eq = setting.find('=');
    if (eq == std::string::npos) throw Error(fmt::format("--set '{}': expected NAME=VALUE", setting));
    options.settings[setting.substr(0, eq)] = setting.substr(eq + 1);
  }
  if (!recording.best_runtime_ms()) {
    throw Error(fmt::format("{}: no valid configuration to aim for ({} recorded, none with status ok)", args.data,
                            recording.present_count()));
  }
  Evaluation evaluation = evaluate(recording, args.searchers, options);

  if (!args.curves.empty()) {
    write_file(args.curves, "curves", [&](std::ostream& out) { write_convergence_csv(out, evaluation); });
  }
  if (!args.trace.empty()) {
    write_file(args.trace, "trace", [&](std::ostream& out) { write_trace_csv(out, evaluation, recording, args.seed); });
  }
  if (args.json) {
    SimulationReport report{.data = args.data,
                            .kernel = recording.kernel(),
                            .device = recording.device(),
                            .target = args.target,
                            .runs = args.runs,
                            .seed = args.seed,
                            .budget = args.budget,
                            .repetitions = args.repetitions,
                            .left_out_without_counters = args.with_counters ? std::optional(left_out) : std::nullopt,
                            .evaluation = std::move(evaluation)};
    std::ostringstream text;
    write_simulation_json(text, report, args.details);
    fmt::print("{}", text.str());
  } else {
    print_table(evaluation, recording, args, left_out);
  }
  return 0;
}

}  // namespace

Runner register_simulate(CLI::App& app) {
  auto args = std::make_shared<SimulateArgs>();
  CLI::App* command = app.add_subcommand(
      "simulate", "Replay searchers against a recording: tests and simulated time to a well-performing configuration");
  command
      ->add_option("--data", args->data,
                   "Recording (KTT JSON, Kernel Tuner cache, T4, Steer JSON) or results store; .gz read")
      ->required();
  command->add_option("--searcher", args->searchers, "Searchers to evaluate, comma-separated")
      ->required()
      ->delimiter(',');
  command->add_option("--spec", args->spec, "Replay over this spec's space instead of the recorded configurations");
  command->add_option("--model", args->model, "Model file for model-guided searchers");
  command->add_flag("--with-counters", args->with_counters,
                    "Replay only the configurations that could be profiled: leave out valid tests without counters");
  command->add_option("--set", args->settings,
                      "Searcher setting NAME=VALUE for every searcher evaluated, or SEARCHER.NAME=VALUE for one (repeatable)");
  command->add_option("--runs", args->runs, "Runs per searcher (seeds seed, seed+1, ...)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command->add_option("--target", args->target, "Well-performing: within this factor of the best valid runtime")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1e9));
  command->add_option("--budget", args->budget, "Tests per run (default: the whole space)")->check(CLI::PositiveNumber);
  command->add_option("--seed", args->seed, "Seed of the first run")->capture_default_str();
  command->add_option("--threads", args->threads, "Threads (default: all; results do not depend on it)");
  command->add_option("--ahead", args->ahead, "Proposals requested at a time, like the loop's compile-ahead window")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command->add_option("--repetitions", args->repetitions, "Timed launches costed per test")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command->add_option("--profiling-passes", args->profiling_passes, "Kernel replays costed per profiled test")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  command->add_option("--pass-overhead-ms", args->pass_overhead_ms, "Overhead costed per profiling pass")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  command->add_flag("--score", args->score,
                    "Also compute the performance score P against the calculated random-search baseline, over "
                    "tests and over simulated time (runs of their own that go on past the target)");
  command->add_option("--score-points", args->score_points, "Points between the cut-offs that P is averaged over")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command->add_flag("--json", args->json, "Print the statistics as JSON");
  command->add_flag("--details", args->details,
                    "With --json: add per-run tests to target and the best-so-far curves (for steer report)");
  command->add_option("--curves", args->curves, "Write best-so-far curves (mean, std vs tests and time) as CSV");
  command->add_option("--trace", args->trace,
                      "Write every test of every run as CSV (searcher, run, seed, test, counters asked for, status, "
                      "runtime, well-performing, configuration)");
  return [args] { return run_simulate(*args); };
}

}  // namespace steer::cli
