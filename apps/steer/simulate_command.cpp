// steer simulate: replay searchers against a recording many times; how many tests (and
// simulated seconds) each needs to find a well-performing configuration. docs/simulate.md.
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "recording_input.hpp"
#include "steer/error.hpp"
#include "steer/eval.hpp"
#include "steer/replay.hpp"
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
  std::string curves;
  std::string trace;
};

// NaN (no run reached the target) becomes null, never a number.
nlohmann::ordered_json number_or_null(double value) {
  return std::isnan(value) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(value);
}

std::string cell(double value, int decimals) {
  return std::isnan(value) ? std::string("-") : fmt::format("{:.{}f}", value, decimals);
}

// A curve as columns: {"x": [...], "runs_with_valid": [...], "mean_best_ms": [...], "std_best_ms": [...]}.
nlohmann::ordered_json curve_json(const std::vector<CurvePoint>& curve) {
  nlohmann::ordered_json x = nlohmann::ordered_json::array(), runs = nlohmann::ordered_json::array(),
                         mean = nlohmann::ordered_json::array(), std = nlohmann::ordered_json::array();
  for (const CurvePoint& point : curve) {
    x.push_back(point.x);
    runs.push_back(point.runs_with_valid);
    mean.push_back(point.runs_with_valid > 0 ? nlohmann::ordered_json(point.mean_best_ms) : nullptr);
    std.push_back(point.runs_with_valid > 0 ? nlohmann::ordered_json(point.std_best_ms) : nullptr);
  }
  return {{"x", x}, {"runs_with_valid", runs}, {"mean_best_ms", mean}, {"std_best_ms", std}};
}

void print_json(const Evaluation& evaluation, const Recording& recording, const SimulateArgs& args,
                std::size_t left_out) {
  nlohmann::ordered_json searchers = nlohmann::ordered_json::array();
  for (const SearcherEvaluation& e : evaluation.searchers) {
    nlohmann::ordered_json searcher = {{"name", e.name},
                                       {"mean_tests", number_or_null(e.mean_tests)},
                                       {"median_tests", number_or_null(e.median_tests)},
                                       {"p90_tests", number_or_null(e.p90_tests)},
                                       {"failed_runs", e.failed_runs},
                                       {"mean_time_s", number_or_null(e.mean_time_s)},
                                       {"ratio_to_random", number_or_null(e.ratio_to_random.value_or(NAN))},
                                       {"runs", e.runs}};
    if (args.details) {  // what `steer report --simulation` plots
      nlohmann::ordered_json to_target = nlohmann::ordered_json::array(), tests = nlohmann::ordered_json::array(),
                             time_s = nlohmann::ordered_json::array();
      for (const RunSummary& run : e.per_run) {
        to_target.push_back(run.tests_to_target ? nlohmann::ordered_json(*run.tests_to_target) : nullptr);
        tests.push_back(run.tests);
        time_s.push_back(run.time_s);
      }
      searcher["run_tests_to_target"] = to_target;
      searcher["run_tests"] = tests;
      searcher["run_time_s"] = time_s;
      searcher["curve_by_test"] = curve_json(e.by_test);
      searcher["curve_by_time"] = curve_json(e.by_time);
    }
    searchers.push_back(std::move(searcher));
  }
  nlohmann::ordered_json report = {{"best_time", evaluation.best_ms},
                                   {"configs", evaluation.configs},
                                   {"valid", evaluation.valid},
                                   {"searchers", searchers},
                                   {"kernel", recording.kernel()},
                                   {"device", recording.device()},
                                   {"data", args.data},
                                   {"target", args.target},
                                   {"target_time", evaluation.target_ms},
                                   {"runs", args.runs},
                                   {"budget", args.budget ? nlohmann::ordered_json(*args.budget) : nullptr},
                                   {"seed", args.seed},
                                   {"repetitions", args.repetitions}};
  if (args.with_counters) report["left_out_without_counters"] = left_out;
  fmt::print("{}\n", report.dump(2));
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
  fmt::print("{} runs per searcher; tests to target over the runs that reached it\n\n", args.runs);
  fmt::print("{:<14} {:>10} {:>8} {:>8} {:>7} {:>12} {:>9}\n", "searcher", "mean", "median", "p90", "failed",
             "mean time s", "vs random");
  for (const SearcherEvaluation& e : evaluation.searchers) {
    fmt::print("{:<14} {:>10} {:>8} {:>8} {:>7} {:>12} {:>9}\n", e.name, cell(e.mean_tests, 1),
               cell(e.median_tests, 1), cell(e.p90_tests, 0), e.failed_runs, cell(e.mean_time_s, 3),
               cell(e.ratio_to_random.value_or(NAN), 3));
  }
}

// Long format, one row per searcher, axis and point: easy to plot with pandas or matplotlib.
void write_curves(const Evaluation& evaluation, const std::string& file) {
  std::ofstream out(file);
  if (!out) throw Error(fmt::format("cannot write the curves to '{}'", file));
  out << "searcher,axis,x,runs_with_valid,mean_best_ms,std_best_ms\n";
  for (const SearcherEvaluation& e : evaluation.searchers) {
    for (const auto& [axis, curve] : {std::pair{"tests", &e.by_test}, std::pair{"time_s", &e.by_time}}) {
      for (const CurvePoint& point : *curve) {
        out << fmt::format("{},{},{},{},{},{}\n", e.name, axis, point.x, point.runs_with_valid, point.mean_best_ms,
                           point.std_best_ms);
      }
    }
  }
  if (!out.flush()) throw Error(fmt::format("cannot write the curves to '{}'", file));
}

// One row per test of every run: where each searcher went, e.g. to see what the runs that
// took long profiled first. The configuration key is quoted (it holds commas).
void write_trace(const Evaluation& evaluation, const Recording& recording, const SimulateArgs& args) {
  std::ofstream out(args.trace);
  if (!out) throw Error(fmt::format("cannot write the trace to '{}'", args.trace));
  out << "searcher,run,seed,test,with_counters,status,runtime_ms,well_performing,config\n";
  for (const SearcherEvaluation& e : evaluation.searchers) {
    for (std::size_t r = 0; r < e.per_run.size(); ++r) {
      const RunSummary& run = e.per_run[r];
      for (std::size_t t = 0; t < run.tested.size(); ++t) {
        const ConfigIndex config = run.tested[t];
        const double runtime = recording.runtime_ms(config);
        const bool ok = recording.status(config) == Status::Ok;
        out << fmt::format("{},{},{},{},{},{},{},{},\"{}\"\n", e.name, r, args.seed + r, t + 1,
                           run.with_counters[t] ? 1 : 0, to_string(recording.status(config)),
                           ok ? fmt::format("{}", runtime) : std::string(),
                           ok && runtime <= evaluation.target_ms ? 1 : 0, recording.space().key(config));
      }
    }
  }
  if (!out.flush()) throw Error(fmt::format("cannot write the trace to '{}'", args.trace));
}

int run_simulate(const SimulateArgs& args) {
  std::optional<Spec> spec;
  if (!args.spec.empty()) spec = load_spec(args.spec);
  // Any recording `steer import` reads, or a results store (.db, .db.gz).
  std::size_t left_out = 0;
  Recording recording = load_recording(args.data, spec ? &spec->space : nullptr, {},
                                       args.with_counters ? RecordedTests::WithCounters : RecordedTests::All, &left_out);

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

  if (!args.curves.empty()) write_curves(evaluation, args.curves);
  if (!args.trace.empty()) write_trace(evaluation, recording, args);
  if (args.json) {
    print_json(evaluation, recording, args, left_out);
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
