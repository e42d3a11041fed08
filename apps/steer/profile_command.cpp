// steer profile: measure one configuration in depth — time, validation, hardware counters
// (with the bottlenecks and the reaction the expert system derives from them) and energy;
// or, with --data, the same analysis of a configuration's recorded counters (no GPU needed),
// e.g. to see what the profile-based searcher reacted to in a replay.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>

#include "commands.hpp"
#include "number_checks.hpp"
#include "steer/backend.hpp"
#include "steer/counters.hpp"
#include "steer/expert.hpp"
#include "steer/model.hpp"
#include "steer/objective.hpp"
#include "steer/recording.hpp"
#include "steer/searcher.hpp"
#include "steer/spec.hpp"
#include "steer/tuner.hpp"
#include "work_rate.hpp"

namespace steer::cli {
namespace {

struct ProfileArgs {
  std::string spec;
  std::string config;
  std::string size;
  std::string backend = "cuda";
  int device = 0;
  std::string counters = "default";
  bool no_energy = false;
  double energy_window_s = 0.5;
  int repetitions = 10;
  int repeat = 1;
  bool json = false;
  std::string data;                    // a recording: analyse its counters instead of measuring
  std::optional<std::int64_t> tuning;  // of a store with several
};

// Proposes the one configuration being profiled, `times` times, with what to measure on it.
class SingleConfiguration final : public Searcher {
 public:
  SingleConfiguration(ConfigIndex config, MeasureRequest measure, int times)
      : proposal_{config, std::move(measure)}, times_(times) {}
  std::string name() const override { return "single"; }
  void start(const Space&) override { proposed_ = 0; }
  std::vector<Proposal> propose(std::size_t max) override {
    if (proposed_ >= times_ || max == 0) return {};
    ++proposed_;
    return {proposal_};
  }
  void observe(const Result&) override {}

 private:
  Proposal proposal_;
  int times_ = 1, proposed_ = 0;
};

// What the report shows: one or more results of one configuration (several with --repeat).
struct Profiled {
  std::string key, device, size;
  std::vector<Result> results;
  bool counters_asked = false;
  DeviceFacts facts;
};

int report_profile(const ProfileArgs& args, const Spec& spec, const Profiled& profiled);

// --data: the recorded test of the configuration, analysed with the recorded GPU's facts.
int run_recorded_profile(const ProfileArgs& args, const Spec& spec) {
  if (args.repeat != 1) throw Error("--repeat measures again, and with --data nothing is measured");
  Recording recording = Recording::load(args.data, {.definition = &spec.space, .tuning = args.tuning});
  ConfigIndex config = 0;
  try {
    config = recording.space().index_of_key(args.config);
  } catch (const Error& e) {
    throw Error(fmt::format("--config: {}", e.what()));
  }
  const Result* recorded = recording.recorded(config);
  if (!recorded) throw Error(fmt::format("{}: configuration {} is not in the recording", args.data, args.config));
  const std::optional<DeviceFacts> facts = known_device_facts(recording.device());
  if (!facts) {
    throw Error(fmt::format("{}: the GPU '{}' is not in the table of known GPUs, so its counters cannot be analysed",
                            args.data, recording.device()));
  }
  if (!args.size.empty() && args.size != recorded->problem_size) {
    throw Error(fmt::format("{}: configuration {} was recorded at size '{}', not '{}'", args.data, args.config,
                            recorded->problem_size, args.size));
  }
  Profiled profiled{recording.space().key(config), recording.device(), recorded->problem_size, {*recorded},
                    !recorded->counters.empty(), *facts};
  if (!profiled.counters_asked && recorded->ok()) {
    throw Error(fmt::format("{}: configuration {} was recorded without counters", args.data, args.config));
  }
  return report_profile(args, spec, profiled);
}

int run_profile(const ProfileArgs& args) {
  Spec spec = load_spec(args.spec);
  if (!args.data.empty()) return run_recorded_profile(args, spec);
  Space space = Space::build(spec.space);
  ConfigIndex config = 0;
  try {
    config = space.index_of_key(args.config);
  } catch (const Error& e) {
    throw Error(fmt::format("--config: {}", e.what()));
  }
  std::string note;
  auto backend = open_backend(args.backend, BackendOptions{.device = args.device}, &note);
  if (!note.empty()) fmt::print(stderr, "steer: {}\n", note);
  const DeviceInfo device = backend->device();
  if (device.backend != "cuda") {
    throw Error(fmt::format("steer profile needs a CUDA GPU (hardware counters and energy come from CUPTI and "
                            "NVML); the device found is {} ({})",
                            device.name, device.backend));
  }

  MeasureRequest measure;
  measure.counters = args.counters != "none";
  if (measure.counters) measure.metrics = select_profiling_metrics(args.counters);
  measure.energy = !args.no_energy;
  measure.energy_window_s = args.energy_window_s;
  SingleConfiguration searcher(config, measure, args.repeat);
  TuneOptions options;
  options.stop.tests = static_cast<std::uint64_t>(args.repeat);
  options.size = args.size;
  options.compile_ahead = false;
  options.run.repetitions = args.repetitions;
  options.on_warning = [](const std::string& warning) { fmt::print(stderr, "steer: warning: {}\n", warning); };
  TuneSummary summary = tune(spec, space, *backend, searcher, nullptr, options);
  if (summary.results.empty()) throw Error("the configuration was not run");
  return report_profile(args, spec,
                        {space.key(config), summary.device, summary.problem_size, std::move(summary.results),
                         measure.counters, device_facts(device)});
}

int report_profile(const ProfileArgs& args, const Spec& spec, const Profiled& profiled) {
  const Result& r = profiled.results.front();
  const DeviceFacts& facts = profiled.facts;
  nlohmann::json out = {{"config", profiled.key}, {"device", profiled.device}, {"size", profiled.size},
                        {"status", to_string(r.status)}, {"message", r.message}};
  if (!args.data.empty()) out["recorded_in"] = args.data;
  if (!r.ok()) {
    if (args.json) {
      fmt::print("{}\n", out.dump());
    } else {
      fmt::print("{} on {}: {}\n{}\n", profiled.key, profiled.device, to_string(r.status), r.message);
    }
    return 1;
  }
  out["time_ms"] = r.time.median_ms;
  const Throughput rate = work_rate(spec, profiled.size, r.time.median_ms);
  add_work_rate(out, rate);
  out["profiling"] = {{"passes", r.profiling_passes}, {"ms", r.profiling_ms},
                      {"overhead_per_pass_ms", r.profiling_ms / std::max(1, r.profiling_passes) - r.time.median_ms}};
  out["counters"] = r.counters;
  const CanonicalCounters canonical = canonical_counters(r.counters, facts.family);
  if (profiled.counters_asked) out["canonical"] = canonical.values;
  ExpertOptions expert;
  expert.compute_bound = spec.kernel && spec.kernel->compute_bound;
  std::string analysis_problem = "no counters were asked for";
  if (profiled.counters_asked) try {
    const Bottlenecks b = analyse_bottlenecks(canonical.values, facts, expert);
    nlohmann::json bottlenecks = nlohmann::json::object();
    for (const auto& [name, value] : named_bottlenecks(b)) bottlenecks[name] = value;
    out["bottlenecks"] = bottlenecks;
    out["reaction"] = required_counter_changes(b, expert);
  } catch (const CounterError& e) {
    analysis_problem = e.what();  // e.g. a custom metric set without the analysis's inputs
    out["analysis_problem"] = analysis_problem;
  }

  if (args.repeat > 1) {
    // Repeatability: each repeat is a full measurement (timing, counters, energy window).
    nlohmann::json repeats = nlohmann::json::array();
    std::vector<double> joules;
    for (const Result& x : profiled.results) {
      nlohmann::json one = {{"status", to_string(x.status)}, {"time_ms", x.time.median_ms}};
      if (x.energy) {
        one["joules_per_launch"] = x.energy->joules_per_launch;
        one["average_watts"] = x.energy->average_watts;
        one["spread"] = x.energy->spread;
        one["sm_clock_mhz"] = x.energy->sm_clock_mhz;
        joules.push_back(x.energy->joules_per_launch);
      }
      if (x.profiling_passes > 0) one["profiling_ms"] = x.profiling_ms;
      repeats.push_back(one);
    }
    out["repeats"] = repeats;
    if (joules.size() > 1) {
      const auto [lo, hi] = std::minmax_element(joules.begin(), joules.end());
      const double mean = std::accumulate(joules.begin(), joules.end(), 0.0) / static_cast<double>(joules.size());
      out["energy_repeat_spread"] = (*hi - *lo) / mean;
    }
  }
  if (r.energy) {
    const EnergyStats& e = *r.energy;
    out["energy"] = {{"joules_per_launch", e.joules_per_launch}, {"spread", e.spread},
                     {"average_watts", e.average_watts},         {"window_s", e.window_s},
                     {"launches", e.launches},                   {"sm_clock_mhz", e.sm_clock_mhz},
                     {"temperature_c", e.temperature_c}};
  }
  if (args.json) {
    fmt::print("{}\n", out.dump());
    return 0;
  }
  fmt::print("{} on {}, size '{}'{}\n", profiled.key, profiled.device, profiled.size,
             args.data.empty() ? "" : fmt::format(" (recorded in {})", args.data));
  fmt::print("time: {:.4f} ms (median of {}), output valid\n", r.time.median_ms, r.time.repetitions);
  if (const std::string text = work_rate_text(rate); !text.empty()) fmt::print("work rate: {}\n", text);
  if (profiled.counters_asked) {
    fmt::print("counters: {} passes in {:.1f} ms ({:.2f} ms per pass beyond the kernel)\n", r.profiling_passes,
               r.profiling_ms, r.profiling_ms / std::max(1, r.profiling_passes) - r.time.median_ms);
    for (const auto& [name, value] : r.counters) fmt::print("  {:<80} {:>16.6g}\n", name, value);
    fmt::print("canonical ({}):\n", to_string(facts.family));
    for (const auto& [name, value] : canonical.values) fmt::print("  {:<14} {:>16.6g}\n", name, value);
  }
  if (out.contains("bottlenecks")) {
    fmt::print("bottlenecks (0 idle .. 1 at peak):\n");
    for (const auto& [name, value] : out["bottlenecks"].items()) {
      if (value.get<double>() > 0.005) fmt::print("  {:<12} {:.3f}\n", name, value.get<double>());
    }
    fmt::print("reaction (wanted change per counter):\n");
    for (const auto& [name, value] : out["reaction"].items()) {
      if (value.get<double>() != 0) fmt::print("  {:<12} {:+.3f}\n", name, value.get<double>());
    }
  } else {
    fmt::print("no bottleneck analysis: {}\n", analysis_problem);
  }
  if (r.energy) {
    const EnergyStats& e = *r.energy;
    fmt::print("energy: {:.4f} J per launch ({} launches over {:.2f} s, spread {:.1f} %), {:.0f} W average, "
               "SM clock {:.0f} MHz, {:.0f} °C\n",
               e.joules_per_launch, e.launches, e.window_s, 100 * e.spread, e.average_watts, e.sm_clock_mhz,
               e.temperature_c);
  }
  if (out.contains("repeats")) {
    for (const auto& one : out["repeats"]) fmt::print("  repeat: {}\n", one.dump());
    if (out.contains("energy_repeat_spread")) {
      fmt::print("energy per launch over {} repeats: spread {:.2f} % (max-min over mean)\n", args.repeat,
                 100 * out["energy_repeat_spread"].get<double>());
    }
  }
  return 0;
}

}  // namespace

Runner register_profile(CLI::App& app) {
  auto args = std::make_shared<ProfileArgs>();
  CLI::App* cmd = app.add_subcommand("profile", "Counters, bottlenecks and energy of one configuration (CUDA)");
  cmd->add_option("spec", args->spec, "Tuning spec (JSON)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--config", args->config, "The configuration: NAME=VALUE,NAME=VALUE,...")->required();
  cmd->add_option("--size", args->size, "Problem size name (default: the spec's)");
  cmd->add_option("--backend", args->backend, "cuda (the only backend with counters), or auto")
      ->check(CLI::IsMember({"cuda", "auto"}));
  cmd->add_option("--device", args->device, "Device index")->check(kNonNegative);
  cmd->add_option("--counters", args->counters, "default, all, none, or METRIC,METRIC,...");
  cmd->add_flag("--no-energy", args->no_energy, "Skip the energy measurement");
  cmd->add_option("--energy-window", args->energy_window_s, "Seconds of repeated launches for the energy figure")
      ->check(kPositive);
  cmd->add_option("--repetitions", args->repetitions, "Timed launches")->check(kPositive);
  cmd->add_option("--repeat", args->repeat, "Measure the configuration this many times (repeatability)")
      ->check(kPositive);
  cmd->add_flag("--json", args->json, "Print one JSON object");
  cmd->add_option("--data", args->data,
                  "Analyse the configuration's counters recorded in this store or recording instead of measuring "
                  "(no GPU needed)");
  cmd->add_option("--tuning", args->tuning, "With --data: the tuning of a store that holds several");
  return [args] { return run_profile(*args); };
}

}  // namespace steer::cli
