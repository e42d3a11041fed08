// steer simulate: replay searchers against a recording many times; how many tests (and
// simulated seconds) each needs to find a well-performing configuration. docs/simulate.md.
#include <cmath>
#include <fmt/format.h>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "number_checks.hpp"
#include "steer/error.hpp"
#include "steer/eval.hpp"
#include "steer/recording.hpp"
#include "steer/spec.hpp"

namespace steer::cli {
namespace {

struct SimulateArgs {
  std::vector<std::string> data;
  std::vector<std::string> searchers;
  std::string spec;
  std::optional<std::int64_t> tuning;
  std::string model;
  std::vector<std::string> settings;
  std::uint64_t runs = 1000;
  double target = 1.1;
  std::optional<std::uint64_t> budget;
  std::uint64_t seed = 1;
  unsigned threads = 0;  // 0: every hardware thread
  std::optional<int> repetitions;
  int profiling_passes = 5;
  double pass_overhead_ms = 12.5;
  double profiler_enable_ms = CostModel{}.profiler_enable_ms;
  std::size_t ahead = 0;
  int compile_threads = CostModel{}.compile_threads;
  std::size_t guesses = TuneOptions{}.guesses;
  std::string compile_times = "recorded";
  std::size_t devices = 1;
  bool json = false;
  bool details = false;
  bool with_counters = false;
  bool no_searcher_time = false;
  bool score = true;
  ScoreSettings score_settings;
  std::vector<std::string> score_runs;
  std::string objective = "time";
  std::string curves;
  std::string trace;
};

// The unit of an objective's values, for the table's header line.
std::string unit_of(const Objective& objective) {
  switch (objective.kind()) {
    case Objective::Kind::Time: return " ms";
    case Objective::Kind::Energy: return " J";
    case Objective::Kind::Edp: return " J·s";
    default: return "";
  }
}

std::string cell(double value, int decimals) {
  return std::isnan(value) ? std::string("-") : fmt::format("{:.{}f}", value, decimals);
}

void print_table(const Evaluation& evaluation, const Recording& recording, const SimulateArgs& args,
                 std::size_t left_out) {
  const Objective objective = Objective::parse(args.objective);
  const std::string unit = unit_of(objective);
  fmt::print("{} on {}: {} configurations, {} valid, best {:.4g}{}, target {:.4g}{} ({}x){}\n", recording.kernel(),
             recording.device(), evaluation.configs, evaluation.valid, evaluation.best_ms, unit, evaluation.target_ms,
             unit, args.target, objective.kind() == Objective::Kind::Time ? "" : ", objective " + objective.name());
  if (args.with_counters && objective.needs_energy()) {
    fmt::print("{} valid tests without counters or energy left out (--with-counters; the objective cannot score "
               "those without energy)\n",
               left_out);
  } else if (args.with_counters) {
    fmt::print("{} valid tests without counters left out (--with-counters)\n", left_out);
  } else if (objective.needs_energy()) {
    fmt::print("{} valid tests without energy left out: the objective cannot score them\n", left_out);
  }
  if (recording.present_count() != evaluation.configs || recording.outside_space() > 0) {
    // Only with --spec: missing configurations replay as skipped tests.
    fmt::print("{} of the configurations are in the recording; {} recorded ones are outside the space\n",
               recording.present_count(), recording.outside_space());
  }
  fmt::print("{} runs per searcher; tests to target over the runs that reached it\n", args.runs);
  if (evaluation.score) {
    const ScoreCutoffs& cutoffs = *evaluation.score;
    fmt::print("performance score P: tests {} to {}, simulated time {:.4g} to {:.4g} s ({:.4g} ms a test, median "
               "{:.4g} ms)\n",
               cutoffs.start_tests, cutoffs.end_tests, cutoffs.start_s, cutoffs.end_s, cutoffs.test_cost_ms,
               cutoffs.median_test_cost_ms);
  }
  fmt::print("\n{:<24} {:>10} {:>8} {:>8} {:>7} {:>12} {:>9}", "searcher", "mean", "median", "p90", "failed",
             "mean time s", "vs random");
  if (evaluation.score) fmt::print(" {:>8} {:>8}", "P tests", "P time");
  fmt::print("\n");
  for (const SearcherEvaluation& e : evaluation.searchers) {
    fmt::print("{:<24} {:>10} {:>8} {:>8} {:>7} {:>12} {:>9}", e.name, cell(e.mean_tests, 1),
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

// What the replay charges that the recording does not hold, said once per recording.
void print_charged_costs(const Recording& recording, const CostModel& cost, std::size_t devices) {
  const RecordedCosts recorded = RecordedCosts::of(recording);
  if (devices == 1 && cost.compile_threads > 0 && (recorded.compile || !recorded.framework)) {
    fmt::print("compiles run ahead on {} compile stream{}, as the loop's compile pool does (--compile-threads 0 "
               "charges them inline)\n",
               cost.compile_threads, cost.compile_threads == 1 ? "" : "s");
  } else if (devices == 1 && cost.compile_threads > 0) {
    fmt::print("the recording's framework times include compiling: they are charged inline, not ahead\n");
  }
  if (recorded.compile && cost.compile_times == CompileTimes::Mean) {
    fmt::print("each test is charged the mean recorded compile of its outcome: {:.1f} ms valid, {:.1f} ms failed\n",
               recorded.mean_valid_compile_ms, recorded.mean_failed_compile_ms);
  }
  if (!recorded.compile && !recorded.framework) {
    fmt::print("the recording holds no compile or framework times: each test is charged the typical {} ms compile "
               "and {} ms framework time measured on the H200\n",
               cost.typical_compile_ms, cost.typical_framework_ms);
  } else if (!recorded.framework) {
    fmt::print("the recording holds no framework times: each test is charged the typical {} ms measured on the "
               "H200\n",
               cost.typical_framework_ms);
  }
}

EvaluationOptions evaluation_options(const SimulateArgs& args) {
  EvaluationOptions options;
  options.simulation.target = args.target;
  options.simulation.budget = args.budget;
  options.simulation.ahead = args.ahead;
  options.simulation.devices = args.devices;
  options.simulation.cost.repetitions = args.repetitions;
  options.simulation.cost.profiling_passes = args.profiling_passes;
  options.simulation.cost.pass_overhead_ms = args.pass_overhead_ms;
  options.simulation.cost.profiler_enable_ms = args.profiler_enable_ms;
  options.simulation.cost.charge_searcher = !args.no_searcher_time;
  options.simulation.cost.compile_threads = args.compile_threads;
  options.simulation.guesses = args.guesses;
  options.simulation.cost.compile_times = args.compile_times == "mean" ? CompileTimes::Mean : CompileTimes::Recorded;
  options.simulation.objective = Objective::parse(args.objective);
  options.runs = args.runs;
  options.seed = args.seed;
  options.threads = args.threads > 0 ? args.threads : std::max(1u, std::thread::hardware_concurrency());
  options.model_path = args.model;
  options.keep_routes = !args.trace.empty();
  options.score = args.score;
  options.score_settings = args.score_settings;
  for (const std::string& setting : args.settings) {
    auto eq = setting.find('=');
    if (eq == std::string::npos) throw Error(fmt::format("--set '{}': expected NAME=VALUE", setting));
    options.settings[setting.substr(0, eq)] = setting.substr(eq + 1);
  }
  return options;
}

std::string file_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

// The runs of other tools made on this recording: those whose "data" names the same file.
std::vector<ExternalRuns> external_runs_for(const std::string& data, const std::vector<ExternalRuns>& all) {
  std::vector<ExternalRuns> mine;
  for (const ExternalRuns& runs : all) {
    if (file_name(runs.data) == file_name(data)) mine.push_back(runs);
  }
  return mine;
}

void print_aggregate(const std::vector<SimulationReport>& reports) {
  std::vector<const Evaluation*> evaluations;
  for (const SimulationReport& report : reports) evaluations.push_back(&report.evaluation);
  fmt::print("\nperformance score P over {} spaces: mean (standard deviation over spaces)\n", reports.size());
  fmt::print("{:<24} {:>16} {:>16}\n", "searcher", "P tests", "P time");
  for (const AggregateScore& score : aggregate_scores(evaluations)) {
    fmt::print("{:<24} {:>16} {:>16}\n", score.name,
               fmt::format("{} ({})", cell(score.fevals, 3), cell(score.fevals_spread, 3)),
               fmt::format("{} ({})", cell(score.time, 3), cell(score.time_spread, 3)));
  }
}

int run_simulate(const SimulateArgs& args) {
  std::optional<Spec> spec;
  if (!args.spec.empty()) spec = load_spec(args.spec);
  if (!args.score_runs.empty() && !args.score) throw Error("--score-runs scores runs: leave out --no-score");
  if (args.data.size() > 1 && (!args.curves.empty() || !args.trace.empty())) {
    throw Error("--curves and --trace take one --data recording");
  }
  std::vector<ExternalRuns> external;
  for (const std::string& file : args.score_runs) external.push_back(read_external_runs(file));
  for (const ExternalRuns& runs : external) {
    bool matched = false;
    for (const std::string& data : args.data) matched = matched || file_name(runs.data) == file_name(data);
    if (!matched) {
      throw Error(fmt::format("--score-runs: the runs of {} were made on '{}', which no --data names", runs.tool,
                              runs.data));
    }
  }
  const EvaluationOptions shared = evaluation_options(args);

  std::vector<SimulationReport> reports;
  for (const std::string& data : args.data) {
    // Any recording `steer import` reads, or a results store (.db, .db.gz).
    std::size_t left_out = 0;
    const bool needs_energy = shared.simulation.objective.needs_energy();
    Recording recording = Recording::load(data,
                                          {.definition = spec ? &spec->space : nullptr,
                                           .tuning = args.tuning,
                                           .only_with_counters = args.with_counters,
                                           .only_with_energy = needs_energy},
                                          &left_out);
    if (!recording.best_runtime_ms()) {
      throw Error(fmt::format("{}: no valid configuration to aim for ({} recorded, none with status ok)", data,
                              recording.present_count()));
    }
    EvaluationOptions options = shared;
    options.external = external_runs_for(data, external);
    Evaluation evaluation = evaluate(recording, args.searchers, options);

    if (!args.curves.empty()) {
      write_file(args.curves, "curves", [&](std::ostream& out) { write_convergence_csv(out, evaluation); });
    }
    if (!args.trace.empty()) {
      write_file(args.trace, "trace",
                 [&](std::ostream& out) { write_trace_csv(out, evaluation, recording, args.seed); });
    }
    if (!args.json) {
      if (!reports.empty()) fmt::print("\n");
      print_charged_costs(recording, options.simulation.cost, options.simulation.devices);
      print_table(evaluation, recording, args, left_out);
    }
    reports.push_back({.data = data,
                       .kernel = recording.kernel(),
                       .device = recording.device(),
                       .target = args.target,
                       .runs = args.runs,
                       .seed = args.seed,
                       .budget = args.budget,
                       .repetitions = args.repetitions.value_or(0),
                       .compile_threads = args.devices == 1 ? args.compile_threads : 0,
                       .guesses = args.guesses,
                       .compile_times = args.compile_times,
                       .left_out_without_counters = args.with_counters ? std::optional(left_out) : std::nullopt,
                       .left_out_without_energy = needs_energy ? std::optional(left_out) : std::nullopt,
                       .evaluation = std::move(evaluation)});
  }
  if (args.json) {
    std::ostringstream text;
    if (reports.size() == 1) {
      write_simulation_json(text, reports.front(), args.details);
    } else {
      write_simulations_json(text, reports, args.details);
    }
    fmt::print("{}", text.str());
  } else if (reports.size() > 1 && args.score) {
    print_aggregate(reports);
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
                   "Recordings (KTT JSON or CSV, Kernel Tuner cache, T4, Steer JSON) or results stores, .gz read; "
                   "several (comma-separated or repeated): each is simulated, and with --score P is also "
                   "aggregated over them")
      ->required()
      ->delimiter(',');
  command->add_option("--searcher", args->searchers, "Searchers to evaluate, comma-separated")
      ->required()
      ->delimiter(',');
  command->add_option("--spec", args->spec, "Replay over this spec's space instead of the recorded configurations");
  command->add_option("--tuning", args->tuning, "The tuning of a results store that holds several (each --data)");
  command->add_option("--model", args->model, "Model file for model-guided searchers");
  command->add_option("--objective", args->objective,
                      "What the runs optimise: time (default), energy, weighted:ALPHA or edp; the target and P are "
                      "of its values. An objective with energy replays only the configurations recorded with "
                      "energy")
      ->capture_default_str();
  command->add_flag("--with-counters", args->with_counters,
                    "Replay only the configurations that could be profiled: leave out valid tests without counters");
  command->add_option("--set", args->settings,
                      "Searcher setting NAME=VALUE for every searcher evaluated, or SEARCHER.NAME=VALUE for one (repeatable)");
  command->add_option("--runs", args->runs, "Runs per searcher (seeds seed, seed+1, ...)")
      ->capture_default_str()
      ->check(kPositive);
  command->add_option("--target", args->target, "Well-performing: within this factor of the best valid runtime")
      ->capture_default_str()
      ->check(number_in(1.0, 1e9));
  command->add_option("--budget", args->budget, "Tests per run (default: the whole space)")->check(kPositive);
  command->add_option("--seed", args->seed, "Seed of the first run")->capture_default_str()->check(kNonNegative);
  command->add_option("--threads", args->threads, "Threads (default: all; results do not depend on it)");
  command->add_option("--ahead", args->ahead,
                      "Proposals requested at a time, like the loop's compile-ahead window (default: twice "
                      "--compile-threads, 1 without them)")
      ->check(kPositive);
  command->add_option("--compile-threads", args->compile_threads,
                      "Compile streams working ahead of the device, as the loop's compile pool does (one by "
                      "default, the conservative reading); 0 charges each compile inline before its test, as "
                      "Kernel Tuner's simulation does")
      ->capture_default_str()
      ->check(kNonNegative);
  command->add_option("--guesses", args->guesses,
                      "The searcher's likely next proposals compiled at a time on compile streams that would idle, "
                      "as on a device (none with one stream); 0: none")
      ->capture_default_str()
      ->check(kNonNegative);
  command->add_option("--compile-times", args->compile_times,
                      "What each test is charged for its compile where the recording holds compile times: "
                      "recorded (its own) or mean (the mean of the recording's valid, or failed, "
                      "configurations), for recordings whose compile times hold a compile pool's queue "
                      "(docs/simulate.md, \"Compile times\")")
      ->capture_default_str()
      ->check(CLI::IsMember({"recorded", "mean"}));
  command->add_option("--devices", args->devices,
                      "Simulated devices tuning at once (tests run in parallel on the simulated clock)")
      ->capture_default_str()
      ->check(kPositive);
  command->add_option("--repetitions", args->repetitions, "Timed launches costed per test (default: as recorded)")
      ->check(kPositive);
  command->add_option("--profiling-passes", args->profiling_passes, "Kernel replays costed per profiled test")
      ->capture_default_str()
      ->check(kNonNegative);
  command->add_option("--pass-overhead-ms", args->pass_overhead_ms, "Overhead costed per profiling pass")
      ->capture_default_str()
      ->check(kNonNegative);
  command->add_option("--profiler-enable-ms", args->profiler_enable_ms,
                      "Costed for enabling the profiler again, for a profiled test after an energy window or a test "
                      "without counters")
      ->capture_default_str()
      ->check(kNonNegative);
  command->add_flag("--no-searcher-time", args->no_searcher_time,
                    "Leave the searchers' own computation (measured as they run) off the simulated clock, so that "
                    "simulated times depend on the recording alone");
  command->add_flag("--score,!--no-score", args->score,
                    "Also compute the performance score P against the calculated random-search baseline, over "
                    "tests and over simulated time, from runs of their own that go on past the target (the "
                    "default; --no-score leaves it out, for half the work)");
  command->add_option("--score-cutoff", args->score_settings.end_percentile,
                      "P's end cut-off: where random search is expected to reach optimum + (median - optimum) x "
                      "(1 - this)")
      ->capture_default_str()
      ->check(number_in(0.0, 1.0));
  command->add_option("--score-start", args->score_settings.start_percentile, "P's start cut-off, likewise")
      ->capture_default_str()
      ->check(number_in(0.0, 1.0));
  command->add_option("--score-resolution", args->score_settings.time_points,
                      "Points of the time axis between the cut-offs that P is averaged over")
      ->capture_default_str()
      ->check(number_in(2, 1000000));
  command->add_option("--score-runs", args->score_runs,
                      "Also score runs of another tool (JSON, scripts/bench/kerneltuner_strategies.py writes them) "
                      "on the recording its \"data\" names (repeatable)");
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
