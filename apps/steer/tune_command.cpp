// steer tune: tune a spec's kernel on a device, store every test, print a summary.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "commands.hpp"
#include "number_checks.hpp"
#include "parallel/mpi_job.hpp"
#include "progress.hpp"
#include "steer/backend.hpp"
#include "steer/counters.hpp"
#include "steer/embed.hpp"
#include "steer/objective.hpp"
#include "steer/searcher.hpp"
#include "steer/spec.hpp"
#include "steer/store.hpp"
#include "steer/tuner.hpp"
#include "work_rate.hpp"

namespace steer::cli {
namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_sigint(int) {
  g_interrupted.store(true);
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process at once
}

struct TuneArgs {
  std::string spec;
  std::string backend = "auto";
  std::optional<int> device;  // unset: 0, or under MPI the rank's place on its node
  std::vector<int> devices;  // --devices: one test on each at once
  std::string size;
  std::string searcher = "default";
  std::optional<std::uint64_t> budget;
  std::optional<double> time_s;
  std::optional<double> fraction;
  std::optional<double> target_ms;
  std::uint64_t seed = 1;
  std::string db;
  bool fresh = false;
  std::optional<std::int64_t> tuning;
  std::size_t final_check = 5;
  bool json = false;
  bool explain = false;
  std::string explain_to;
  bool no_compile_ahead = false;
  int compile_threads = 0;
  std::size_t guesses = TuneOptions{}.guesses;
  int repetitions = 10;
  int warmup = 1;
  double max_test_ms = 0;
  double max_test_relative = TuneOptions{}.max_test_relative;
  std::string validate_on = "device";
  std::optional<double> timeout_ms;  // --timeout-ms; unset: the spec's, else 10 s
  std::vector<std::string> settings;
  std::string model;
  std::string counters;            // empty: no counters (--counters)
  std::string objective = "time";  // --objective
  double energy_window_s = 0.5;    // MeasureRequest's default window
  double rank_timeout_s = 600;     // under MPI: a rank without an answer this long is lost
};

nlohmann::json config_json(const Result& result) {
  nlohmann::json config = nlohmann::json::object();
  for (const auto& [name, value] : result.configuration) {
    switch (value.type()) {
      case ValueType::Int: config[name] = value.as_int(); break;
      case ValueType::Float: config[name] = value.as_double(); break;
      case ValueType::Bool: config[name] = value.as_bool(); break;
      case ValueType::String: config[name] = value.as_string(); break;
    }
  }
  return config;
}

std::string config_text(const Result& result) {
  std::string text;
  for (const auto& [name, value] : result.configuration) {
    text += fmt::format("{}{}={}", text.empty() ? "" : " ", name, value.to_string());
  }
  return text;
}

MeasureRequest measure_request(const std::string& counters, double energy_window_s) {
  MeasureRequest measure;
  if (!counters.empty()) {
    measure.counters = true;
    measure.metrics = select_profiling_metrics(counters);
  }
  measure.energy_window_s = energy_window_s;
  return measure;
}

std::string energy_text(const Result& r) {
  if (!r.energy) return "";
  return fmt::format("{:.4f} J ({:.0f} W, spread {:.1f} %)", r.energy->joules_per_launch, r.energy->average_watts,
                     100 * r.energy->spread);
}

void print_summary(const TuneSummary& s, const Spec& spec) {
  fmt::print("\n{} tests ({} valid, {} failed, {} resumed from the store) on {}{}, size '{}'; stopped: {}\n",
             s.tests, s.valid, s.failed, s.resumed, s.devices > 1 ? fmt::format("{} x ", s.devices) : "", s.device,
             s.problem_size, s.stop_reason);
  if (s.tuning != 0) fmt::print("stored as tuning {} ({})\n", s.tuning, s.new_tuning ? "new" : "continued");
  if (s.best) {
    const std::string rate = work_rate_text(work_rate(spec, s.problem_size, s.best->time.median_ms));
    fmt::print("best ({}): {:.4f} ms{}{}{}  {}\n", s.objective, s.best->time.median_ms,
               rate.empty() ? "" : " (" + rate + ")",
               s.best->energy ? ", " + energy_text(*s.best) : "",
               s.objective == "time" ? "" : fmt::format(", objective {:.6g}", s.best_objective), config_text(*s.best));
    if (s.best->time.median_ms > 0 && s.median_valid_ms > 0) {
      fmt::print("speed-up over the median tested configuration ({:.4f} ms): {:.2f}x\n", s.median_valid_ms,
                 s.median_valid_ms / s.best->time.median_ms);
    }
  } else {
    fmt::print("no valid configuration found\n");
  }
  if (!s.finalists.empty() && s.objective == "time") {
    fmt::print("measured again, interleaved ({} launches each; median and its 95 % interval):\n",
               s.finalists.front().result.time.samples_ms.size());
    for (const TuneSummary::Finalist& f : s.finalists) {
      fmt::print("  {:.4f} ms [{:.4f}, {:.4f}]{}  {}\n", f.result.time.median_ms, f.low_ms, f.high_ms,
                 &f == &s.finalists.front() ? "  best" : (f.tied ? "  tied with the best" : ""), config_text(f.result));
    }
  } else if (!s.finalists.empty()) {
    // Scores are lower-is-better; gflops-per-watt's is its value negated.
    const double sign = Objective::parse(s.objective).kind() == Objective::Kind::GflopsPerWatt ? -1 : 1;
    fmt::print("measured again, interleaved (an energy window in each round; objective {}, of the median round "
               "[range of the rounds]):\n",
               s.objective);
    for (const TuneSummary::Finalist& f : s.finalists) {
      const double a = sign * f.low_score, b = sign * f.high_score;
      fmt::print("  {:.6g} [{:.6g}, {:.6g}]  {:.4f} ms, {}{}  {}\n", sign * f.score, std::min(a, b), std::max(a, b),
                 f.result.time.median_ms, energy_text(f.result),
                 &f == &s.finalists.front() ? "  best" : (f.tied ? "  tied with the best" : ""), config_text(f.result));
    }
  }
  if (s.profiled > 0) {
    fmt::print("profiled {} tests: {:.1f} passes each, {:.2f} s collecting counters; profiled tests took {:.2f}x "
               "their plain time; overhead per pass beyond the kernel: {:.2f} ms (median)\n",
               s.profiled, s.mean_passes, s.profiling_s,
               s.profiled_run_s > s.profiling_s ? s.profiled_run_s / (s.profiled_run_s - s.profiling_s) : 0.0,
               s.median_pass_overhead_ms);
  }
  if (!s.pareto.empty()) {
    fmt::print("time-energy Pareto front ({} configurations):\n", s.pareto.size());
    for (const Result& r : s.pareto) fmt::print("  {:.4f} ms  {}  {}\n", r.time.median_ms, energy_text(r), config_text(r));
  }
  if (s.shortened > 0) {
    fmt::print("{} valid tests timed fewer launches than asked: slower than the fastest so far by more than "
               "--max-test-relative allows, or past --max-test-ms\n",
               s.shortened);
  }
  for (const std::string& warning : s.warnings) fmt::print("warning: {}\n", warning);
  fmt::print("wall {:.2f} s = setup {:.2f} + compile wait {:.2f} + run {:.2f} + validation {:.2f} + framework {:.2f}"
             " (compiler time {:.2f} s{}; framework median {:.3f} ms/test)\n",
             s.wall_s, s.setup_s, s.compile_wait_s, s.run_s, s.validation_s, s.overhead_s, s.compile_cpu_s,
             s.compiled_ahead ? ", mostly hidden by compiling ahead" : ", compiled inline", s.median_overhead_ms);
  if (s.guessed > 0) {
    fmt::print("compiled {} of the searcher's likely next proposals ahead; {} of them were proposed and tested\n",
               s.guessed, s.guesses_tested);
  }
}

nlohmann::json summary_json(const TuneSummary& s, const Spec& spec) {
  nlohmann::json out = {
      {"tests", s.tests},         {"valid", s.valid},
      {"failed", s.failed},       {"resumed", s.resumed},
      {"shortened", s.shortened},
      {"interrupted", s.interrupted}, {"stop_reason", s.stop_reason},
      {"compiled_ahead", s.compiled_ahead},
      {"wall_s", s.wall_s},       {"setup_s", s.setup_s},
      {"compile_wait_s", s.compile_wait_s}, {"compile_cpu_s", s.compile_cpu_s},
      {"guessed", s.guessed},     {"guesses_tested", s.guesses_tested},
      {"run_s", s.run_s},         {"validation_s", s.validation_s},
      {"overhead_s", s.overhead_s}, {"median_overhead_ms", s.median_overhead_ms},
      {"median_valid_ms", s.median_valid_ms},
      {"device", s.device},       {"devices", s.devices},
      {"size", s.problem_size},
  };
  out["tuning"] = s.tuning != 0 ? nlohmann::json(s.tuning) : nlohmann::json(nullptr);
  out["new_tuning"] = s.new_tuning;
  out["objective"] = s.objective;
  auto energy_json = [](const Result& r) -> nlohmann::json {
    if (!r.energy) return nullptr;
    const EnergyStats& e = *r.energy;
    return {{"joules_per_launch", e.joules_per_launch}, {"spread", e.spread}, {"average_watts", e.average_watts},
            {"window_s", e.window_s}, {"launches", e.launches}, {"sm_clock_mhz", e.sm_clock_mhz},
            {"temperature_c", e.temperature_c}};
  };
  if (s.best) {
    out["best"] = {{"config", config_json(*s.best)}, {"time_ms", s.best->time.median_ms},
                   {"objective_value", s.best_objective}, {"energy", energy_json(*s.best)}};
    add_work_rate(out["best"], work_rate(spec, s.problem_size, s.best->time.median_ms));
  } else {
    out["best"] = nullptr;
  }
  out["profiling"] = {{"profiled_tests", s.profiled}, {"profiling_s", s.profiling_s},
                      {"profiled_run_s", s.profiled_run_s}, {"mean_passes", s.mean_passes},
                      {"median_pass_overhead_ms", s.median_pass_overhead_ms}};
  nlohmann::json finalists = nlohmann::json::array();
  for (const TuneSummary::Finalist& f : s.finalists) {
    finalists.push_back({{"config", config_json(f.result)},
                         {"time_ms", f.result.time.median_ms},
                         {"low_ms", f.low_ms},
                         {"high_ms", f.high_ms},
                         {"launches", f.result.time.samples_ms.size()},
                         {"score", f.score},
                         {"low_score", f.low_score},
                         {"high_score", f.high_score},
                         {"energy", energy_json(f.result)},
                         {"tied", f.tied}});
  }
  out["finalists"] = finalists;
  nlohmann::json front = nlohmann::json::array();
  for (const Result& r : s.pareto) {
    front.push_back({{"config", config_json(r)}, {"time_ms", r.time.median_ms}, {"energy", energy_json(r)}});
  }
  out["pareto_front"] = front;
  out["warnings"] = s.warnings;
  return out;
}

// Under an MPI launcher (mpirun, srun) with more than one process: the job, else null.
std::unique_ptr<MpiJob> join_mpi_job(const TuneArgs& args) {
  if (const std::optional<int> tasks = srun_tasks_without_mpi()) {
    throw Error(fmt::format(
        "srun started {} tasks without an MPI plugin, so they cannot form one run: each would tune on its own "
        "into the same store. Start them with `srun --mpi=pmix` (or the plugin the site's MPI was built for: "
        "`srun --mpi=list`), or run one task; docs/parallel.md",
        *tasks));
  }
  const std::optional<int> launched = mpi_launched_size();
  if (!launched || *launched < 2) return nullptr;
  if (!args.devices.empty()) {
    throw Error("--devices and an MPI launch do not mix: under mpirun or srun each rank tunes on one device "
                "(docs/parallel.md)");
  }
  return MpiJob::join();  // says so when MPI support was not built
}

// The rank's device: --device, else its place on its node; a node whose ranks each see
// one device (CUDA_VISIBLE_DEVICES set per rank, srun --gpus-per-task=1) or that has fewer
// devices than ranks (a CPU device) uses device 0.
std::unique_ptr<Backend> open_rank_backend(const TuneArgs& args, const MpiJob& job, std::string* note) {
  if (args.device || job.local_rank() == 0) {
    return open_backend(args.backend, BackendOptions{.device = args.device.value_or(0)}, note);
  }
  try {
    return open_backend(args.backend, BackendOptions{.device = job.local_rank()}, note);
  } catch (const Error&) {
    return open_backend(args.backend, BackendOptions{.device = 0}, note);
  }
}

// How long another rank waits for a word from rank 0, which says it is alive every second:
// a minute without one (less with a short --rank-timeout, never under 10 s) means it died
// while the launcher let the job go on.
double rank_silence_s(const TuneArgs& args) { return std::clamp(args.rank_timeout_s, 10.0, 60.0); }

// A rank that stopped answering cannot take part in ending the job in order (MPI_Finalize
// would wait for it forever): every finished test is stored, and the job is ended at once.
[[noreturn]] void end_after_a_lost_rank(MpiJob& job, int code) {
  fmt::print(stderr, "steer: a rank was lost during the run; every finished test is stored; ending the MPI job\n");
  std::fflush(nullptr);
  job.abort(code);
}

// Tunes as `args` say: alone, or as a rank of `job`.
int tune_as_told(const TuneArgs& args, MpiJob* job) {
  const bool serving = job && job->rank() != 0;  // measures what rank 0 hands it; prints nothing
  Spec loaded = load_spec(args.spec);
  std::string note;
  const int first_device = args.devices.empty() ? args.device.value_or(0) : args.devices.front();
  auto backend = job ? open_rank_backend(args, *job, &note)
                     : open_backend(args.backend, BackendOptions{.device = first_device}, &note);
  if (!note.empty() && !serving) fmt::print(stderr, "steer: {}\n", note);
  // The same façade an application tunes through (steer/embed.hpp), on the spec as loaded.
  Tuner tuner = Tuner::from_spec(std::move(loaded), std::move(backend), args.size);
  std::vector<std::unique_ptr<Slot>> more_devices;
  for (std::size_t i = 1; i < args.devices.size(); ++i) {
    if (std::find(args.devices.begin(), args.devices.begin() + static_cast<std::ptrdiff_t>(i), args.devices[i]) !=
        args.devices.begin() + static_cast<std::ptrdiff_t>(i)) {
      fmt::print(stderr, "steer: warning: device {} is given more than once: its tests run at the same time and "
                 "disturb each other's timings\n", args.devices[i]);
    }
    const std::string kind = tuner.backend().device().backend;  // as the first device's: auto decided once
    more_devices.push_back(tuner.device_slot(open_backend(kind, BackendOptions{.device = args.devices[i]}),
                                             fmt::format("device {}", args.devices[i])));
  }
  tuner.also_on(std::move(more_devices));
  const Spec& spec = tuner.spec();
  // Configurations the device cannot launch are left out before the search, and counted.
  const Space& space = tuner.space();
  if (serving) {
    const std::unique_ptr<DeviceExecutor> executor = tuner.make_executor();
    job->serve(*executor, rank_silence_s(args));
    return kSuccess;
  }
  if (job) tuner.also_on(job->remote_slots(args.rank_timeout_s));
  if (const Tuner::DeviceLimit limit = tuner.device_limit(); limit.left_out > 0) {
    fmt::print(stderr, "steer: left out {} configurations beyond {}\n", limit.left_out, limit.rule);
  }

  SearcherOptions searcher_options;
  searcher_options.seed = args.seed;
  searcher_options.model_path = args.model;
  searcher_options.objective = Objective::parse(args.objective).name();
  for (const std::string& setting : args.settings) {
    auto eq = setting.find('=');
    if (eq == std::string::npos) throw Error(fmt::format("--set '{}': expected NAME=VALUE", setting));
    searcher_options.settings[setting.substr(0, eq)] = setting.substr(eq + 1);
  }
  // The spec's "compute_bound" is the user's declaration the expert system reads (method.md
  // §4: inst_reaction 0.5 instead of 0.7); an explicit --set compute_bound=... wins.
  const bool reads_compute_bound = args.searcher == "profile-based" || args.searcher == "guided" ||
                                   (args.searcher == "default" && !args.model.empty());
  if (reads_compute_bound && spec.kernel && spec.kernel->compute_bound &&
      !searcher_options.settings.contains("compute_bound")) {
    searcher_options.settings["compute_bound"] = "true";
  }
  auto searcher = make_searcher(args.searcher, searcher_options);
  if (!args.db.empty()) tuner.store(args.db).open_store();  // a store that cannot be opened says so now

  const StopConditions stop{.tests = args.budget, .wall_seconds = args.time_s, .space_fraction = args.fraction,
                            .target_ms = args.target_ms};
  TuneOptions& options = tuner.options();
  options.compile_ahead = !args.no_compile_ahead;
  options.compile_threads = args.compile_threads;
  options.guesses = args.guesses;
  options.run.repetitions = args.repetitions;
  options.run.warmup = args.warmup;
  options.run.max_total_ms = args.max_test_ms;
  options.max_test_relative = args.max_test_relative;
  options.validate_on_device = args.validate_on == "device";
  options.timeout_ms = args.timeout_ms;
  options.run.measure = measure_request(args.counters, args.energy_window_s);
  options.objective = Objective::parse(args.objective);
  options.final_check = args.final_check;
  options.fresh = args.fresh;
  options.tuning = args.tuning;
  options.on_warning = [](const std::string& warning) { fmt::print(stderr, "steer: warning: {}\n", warning); };
  options.interrupt = &g_interrupted;
  Progress progress(isatty(STDERR_FILENO) != 0);
  // The run as the explanations refer to it: every test, and what the searcher concluded after which.
  nlohmann::json explained_tests = nlohmann::json::array(), explanations = nlohmann::json::array();
  options.on_test = [&](const Result& result, const TuneProgress& p) {
    progress.update(result, p);
    if (!args.explain_to.empty()) {
      explained_tests.push_back({{"test", p.tests},
                                 {"config", space.key(result.config_index)},
                                 {"status", to_string(result.status)},
                                 {"runtime_ms", result.ok() ? nlohmann::json(result.time.median_ms) : nullptr},
                                 {"profiled", !result.counters.empty()},
                                 {"elapsed_s", p.elapsed_s}});
    }
  };
  if (args.explain || !args.explain_to.empty()) {
    options.on_explanation = [&](const Explanation& e) {
      progress.note("explain: " + describe(e, space));
      nlohmann::json next = nlohmann::json::array();
      for (ConfigIndex c : e.next) next.push_back(space.key(c));
      explanations.push_back({{"after_test", explained_tests.size()},
                              {"profiled", space.key(e.profiled)},
                              {"reused", e.reused},
                              {"bottlenecks", e.bottlenecks},
                              {"changes", e.changes},
                              {"next", next}});
      if (!e.predicted_inputs.empty()) explanations.back()["predicted_inputs"] = e.predicted_inputs;
      if (!e.missing_inputs.empty()) explanations.back()["missing_inputs"] = e.missing_inputs;
    };
  }

  g_interrupted.store(false);
  std::signal(SIGINT, on_sigint);
  TuneSummary summary;
  try {
    summary = tuner.tune(stop, *searcher);
  } catch (const Interrupted&) {
    // Before the first test (while the reference configuration ran): there is nothing to sum up.
    progress.finish();
    fmt::print(stderr, "steer: interrupted before the first test\n");
    return kInterrupted;
  }
  std::signal(SIGINT, SIG_DFL);
  progress.finish();

  if (!args.explain_to.empty()) {
    const nlohmann::json document = {{"kernel", spec.name},
                                     {"searcher", searcher->name()},
                                     {"tests", explained_tests},
                                     {"explanations", explanations}};
    std::ofstream out(args.explain_to);
    out << document.dump(1) << "\n";
    if (!out.flush()) throw Error(fmt::format("cannot write the explanations to '{}'", args.explain_to));
  }
  if (args.json) {
    fmt::print("{}\n", summary_json(summary, spec).dump());
  } else {
    print_summary(summary, spec);
  }
  int code = kSuccess;
  if (summary.interrupted) {
    code = kInterrupted;
  } else if (!summary.best) {
    fmt::print(stderr, "steer: no configuration was valid ({} tested, {} failed)\n", summary.tests, summary.failed);
    code = kNoValidResult;
  }
  if (job && job->lost_a_rank()) end_after_a_lost_rank(*job, code == kSuccess ? kRankLost : code);
  return code;
}

int run_tune(const TuneArgs& args) {
  const std::unique_ptr<MpiJob> job = join_mpi_job(args);
  int code = kSuccess;
  try {
    code = tune_as_told(args, job.get());
  } catch (const std::exception& e) {
    if (job && !job->lost_a_rank() && job->rank() != 0) {
      // A rank that could not get ready tells rank 0, which ends the run in order and prints
      // why; where rank 0 stopped first (with an error of its own), this rank's is printed.
      try {
        if (!job->refuse(e.what(), rank_silence_s(args))) fmt::print(stderr, "steer: error: {}\n", e.what());
        return kError;
      } catch (const std::exception& silence) {
        fmt::print(stderr, "steer: error: {}\nsteer: error: {}\n", e.what(), silence.what());
        end_after_a_lost_rank(*job, kError);
      }
    }
    if (!job || !job->lost_a_rank()) throw;
    fmt::print(stderr, "steer: error: {}\n", e.what());
    end_after_a_lost_rank(*job, kError);
  }
  // A rank found lost only when told to stop.
  if (job && job->lost_a_rank()) end_after_a_lost_rank(*job, code == kSuccess ? kRankLost : code);
  return code;
}

}  // namespace

Runner register_tune(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* cmd = app.add_subcommand("tune", "Tune a spec's kernel on a device");
  cmd->add_option("spec", args->spec, "Tuning spec (JSON)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--backend", args->backend, "cuda, opencl or auto")
      ->check(CLI::IsMember({"cuda", "opencl", "auto"}));
  CLI::Option* device = cmd->add_option("--device", args->device,
                                        "Device index (default 0; under MPI, the rank's place on its node)")
                            ->check(kNonNegative);
  cmd->add_option("--devices", args->devices,
                  "Tune on these devices at once (indices, comma-separated; one test on each at a time, all of "
                  "one kind)")
      ->delimiter(',')
      ->excludes(device)
      ->check(kNonNegative);
  cmd->add_option("--rank-timeout", args->rank_timeout_s,
                  "Under MPI: seconds a rank may take for one test (compile, launches, validation) before it "
                  "counts as lost and its test as failed; the other ranks end after this long without a word "
                  "from rank 0 (10 to 60 s)")
      ->capture_default_str()
      ->check(kPositive);
  cmd->add_option("--size", args->size, "Problem size name (default: the spec's)");
  cmd->add_option("--searcher", args->searcher, "Search strategy (steer searchers lists them; default: Steer's default searcher)");
  cmd->add_option("--budget", args->budget, "Stop after this many tests")->check(kPositive);
  cmd->add_option("--time", args->time_s, "Stop after this many seconds")->check(kPositive);
  cmd->add_option("--fraction", args->fraction, "Stop after this fraction of the space")
      ->check(number_in(0.0, 1.0));
  cmd->add_option("--target-ms", args->target_ms, "Stop once a configuration runs this fast")->check(kPositive);
  cmd->add_option("--seed", args->seed, "Random seed of the searcher")->check(kNonNegative);
  CLI::Option* db = cmd->add_option(
      "--db", args->db,
      "Results store (SQLite); continues the tuning whose key (spec content, sources, includes, inputs, compiler, "
      "driver, device) matches, else starts one");
  cmd->add_flag("--fresh", args->fresh, "Start a new tuning in the store even if one matches (later runs continue it)")
      ->needs(db);
  cmd->add_option("--tuning", args->tuning,
                  "Continue this tuning of the store (same spec name, device, backend and size) even though its key differs")
      ->needs(db)
      ->excludes("--fresh")
      ->check(kPositive);
  cmd->add_option("--set", args->settings, "Searcher setting NAME=VALUE (repeatable)");
  cmd->add_option("--model", args->model, "Counter model for model-guided searchers (steer model train)");
  cmd->add_option("--repetitions", args->repetitions, "Timed launches per test")->check(kPositive);
  cmd->add_option("--warmup", args->warmup, "Untimed launches before timing")->check(kNonNegative);
  cmd->add_option("--max-test-ms", args->max_test_ms,
                  "Stop a test's timed launches once this much kernel time was timed (at least one; 0: no cap)")
      ->check(kNonNegative);
  cmd->add_option("--validate-on", args->validate_on,
                  "Where outputs of 16 MiB or more are compared with the reference: on the device where the "
                  "backend can, or always on the host")
      ->capture_default_str()
      ->check(CLI::IsMember({"device", "host"}));
  cmd->add_option("--max-test-relative", args->max_test_relative,
                  "Stop a test's timed launches once they took this many times what the fastest test so far took "
                  "for all of its launches (at least one; 0: no cap)")
      ->capture_default_str()
      ->check(kNonNegative);
  cmd->add_option("--timeout-ms", args->timeout_ms,
                  "A launch slower than this is a timeout, and its kernel is stopped (default: the spec's "
                  "kernel.timeout_ms, else 10000)")
      ->check(kPositive);
  cmd->add_option("--compile-threads", args->compile_threads, "Compiler threads (0: cores - 1)")->check(number_in(0, 4096));
  cmd->add_flag("--no-compile-ahead", args->no_compile_ahead, "Compile each configuration just before it runs");
  cmd->add_option("--guesses", args->guesses,
                  "While the searcher waits for a result, compile up to this many of its likely next proposals "
                  "on compiler threads that would idle (0: none)")
      ->capture_default_str()
      ->check(number_in(0, 4096));
  cmd->add_option("--counters", args->counters,
                  "Collect hardware counters on every test: default (the paper's set + occupancy), all, or "
                  "METRIC,METRIC,... (CUDA)");
  cmd->add_option("--objective", args->objective,
                  "time (default), energy, weighted:ALPHA, edp or gflops-per-watt (energy: CUDA with NVML)");
  cmd->add_option("--energy-window", args->energy_window_s, "Seconds of repeated launches per energy figure")
      ->check(kPositive);
  cmd->add_option("--final-check", args->final_check,
                  "Measure the best N by the objective again at the end, interleaved, 3 rounds each, and rank them "
                  "by all those launches (time) or their median round's energy (other objectives), each with an "
                  "interval; those that cannot be told apart are reported as tied (0: off)")
      ->capture_default_str()
      ->check(number_in(0, 1000));
  cmd->add_flag("--json", args->json, "Print one JSON object at the end");
  cmd->add_flag("--explain", args->explain,
                "Say after each profiled test which bottlenecks the expert system found, which counters it "
                "asked to change and what it proposes next (searchers that profile: profile-based, guided "
                "under an objective other than time or with reaction_draws)");
  cmd->add_option("--explain-to", args->explain_to,
                  "Also write the tests and explanations as JSON, for `steer report --explain FILE`");
  return [args] { return run_tune(*args); };
}

}  // namespace steer::cli
