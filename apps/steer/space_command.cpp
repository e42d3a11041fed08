// steer space: build a spec's tuning space; report its size, or list its configurations.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "number_checks.hpp"
#include "recording/csv.hpp"
#include "steer/error.hpp"
#include "steer/space.hpp"
#include "steer/spec.hpp"
#include "store/result_json.hpp"  // store_detail::to_json: a Value as JSON, as the store writes it

namespace steer::cli {
namespace {

struct SpaceArgs {
  std::string spec;
  bool count = false;  // the default; the flag only makes it explicit
  bool list = false;
  bool json = false;
  double max_time_s = 60;  // 0: no limit
};

// 205216 -> "205,216"
std::string grouped(std::uint64_t number) {
  const std::string digits = std::to_string(number);
  std::string text;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) text += ',';
    text += digits[i];
  }
  return text;
}

// "45 s", "12 min", "3.2 h", "41 days", "3e+04 years"
std::string human_duration(double seconds) {
  if (seconds < 10) return fmt::format("{:.1f} s", seconds);
  if (seconds < 90) return fmt::format("{:.0f} s", seconds);
  if (seconds < 5400) return fmt::format("{:.0f} min", seconds / 60);
  if (seconds < 2 * 86400) return fmt::format("{:.1f} h", seconds / 3600);
  if (seconds < 2 * 365 * 86400) return fmt::format("{:.0f} days", seconds / 86400);
  return fmt::format("{:.2g} years", seconds / (365.25 * 86400));
}

// The time the group being counted needs to finish at the rate so far.
double time_left(const BuildProgress& p) { return p.group_seconds * (1 - p.searched) / p.searched; }

// "0.0042 %" with the digits a small share needs.
std::string percent(double share) { return fmt::format("{:.2g} %", 100 * share); }

// The search's progress on one line of a terminal, redrawn (stderr).
class ProgressLine {
 public:
  explicit ProgressLine(bool terminal) : terminal_(terminal) {}
  ~ProgressLine() { clear(); }
  void draw(const BuildProgress& p) {
    if (!terminal_) return;
    const std::string left = p.searched > 0 ? fmt::format(" (this group: about {} to go)",
                                                          human_duration(time_left(p)))
                                            : "";
    fmt::print(stderr, "\rcounting: group {} of {}, {} of its {:.3g} combinations searched, {} valid so far, {}{}\033[K",
               p.group + 1, p.groups, percent(p.searched), p.group_combinations, grouped(p.rows),
               human_duration(p.seconds), left);
    std::fflush(stderr);
    drawn_ = true;
  }
  void clear() {
    if (drawn_) fmt::print(stderr, "\r\033[K");
    drawn_ = false;
  }

 private:
  bool terminal_;
  bool drawn_ = false;
};

// A quarter of this machine's memory: rows beyond it would not leave room to build them.
std::size_t memory_bound() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) / 4 : 0;
}

// Builds the space; errors gain the spec file, since the engine knows only constraint labels.
Space build_space(const Spec& spec, const std::string& file, const BuildLimits& limits = {}) {
  try {
    return Space::build(spec.space, limits);
  } catch (const SpaceBuildStopped&) {
    throw;
  } catch (const ExpressionError& error) {
    throw ExpressionError(fmt::format("{}: {}", file, error.what()), error.expression(), error.position());
  } catch (const SpaceError& error) {
    throw SpaceError(fmt::format("{}: {}", file, error.what()));
  }
}

std::string human_bytes(std::size_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB"};
  double amount = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (amount >= 1024 && unit + 1 < std::size(kUnits)) {
    amount /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", amount, kUnits[unit]);
}

std::string human_seconds(double seconds) {
  return seconds < 1 ? fmt::format("{:.3f} ms", seconds * 1e3) : fmt::format("{:.3f} s", seconds);
}

void print_summary(const Spec& spec, const std::string& file, const Space& space) {
  const BuildStats& stats = space.stats();
  fmt::print("{} ({})\n", spec.name, file);
  fmt::print("  valid configurations  {}\n", grouped(space.size()));
  fmt::print("  cross product         {}\n", grouped(stats.cross_product));
  fmt::print("  parameters            {}\n", space.parameters().size());
  fmt::print("  constraints           {}\n", spec.space.constraints().size());
  fmt::print("  groups                {}\n", stats.groups);
  fmt::print("  memory                {}\n", human_bytes(stats.memory_bytes));
  fmt::print("  construction time     {}\n", human_seconds(stats.seconds));
  if (!stats.constraints.empty()) {
    fmt::print("  rejected (partial) configurations per constraint:\n");
    for (const ConstraintStats& constraint : stats.constraints) {
      fmt::print("  {:>12}  {}\n", grouped(constraint.rejected), constraint.text);
    }
  }
}

void print_summary_json(const Spec& spec, const std::string& file, const Space& space) {
  const BuildStats& stats = space.stats();
  nlohmann::ordered_json parameters = nlohmann::ordered_json::array();
  for (const Parameter& parameter : space.parameters()) {
    nlohmann::ordered_json values = nlohmann::ordered_json::array();
    for (const Value& value : parameter.values) values.push_back(store_detail::to_json(value));
    parameters.push_back({{"name", parameter.name}, {"type", to_string(parameter.type)}, {"values", values}});
  }
  nlohmann::ordered_json constraints = nlohmann::ordered_json::array();
  for (const ConstraintStats& constraint : stats.constraints) {
    constraints.push_back({{"text", constraint.text}, {"rejected", constraint.rejected}});
  }
  nlohmann::ordered_json report = {{"spec", file},
                           {"name", spec.name},
                           {"count", space.size()},
                           {"exact", true},
                           {"seconds", stats.seconds},
                           {"groups", stats.groups},
                           {"memory_bytes", stats.memory_bytes},
                           {"cross_product", stats.cross_product},
                           {"parameters", parameters},
                           {"constraints", constraints}};
  fmt::print("{}\n", report.dump(2));
}

// What a stopped count says on standard output: the estimate, how far the search got.
void print_stopped(const Spec& spec, const std::string& file, const SpaceBuildStopped& stopped) {
  const SizeEstimate& e = stopped.estimate;
  const BuildProgress& p = stopped.progress;
  fmt::print("{} ({})\n", spec.name, file);
  if (e.reliable) {
    fmt::print("  valid configurations  about {:.3g} (95 % interval {:.3g} to {:.3g}), estimated by sampling\n",
               e.count, e.low, e.high);
  } else {
    fmt::print("  valid configurations  not known: of {} random descents through group {}, {} reached a valid "
               "configuration, too few to estimate it\n",
               grouped(e.weakest_probes), e.weakest_group + 1, grouped(e.weakest_valid));
  }
  fmt::print("  found so far          {} in group {} of {}, {} of its {:.3g} combinations searched\n", grouped(p.rows),
             p.group + 1, p.groups, percent(p.searched), p.group_combinations);
  fmt::print("  cross product         {}\n", grouped(stopped.stats.cross_product));
  fmt::print("  parameters            {}\n", spec.space.parameters().size());
  fmt::print("  constraints           {}\n", spec.space.constraints().size());
  fmt::print("  groups                {}\n", p.groups);
  fmt::print("  stopped after         {}\n", human_seconds(p.seconds));
  if (!stopped.stats.constraints.empty()) {
    fmt::print("  rejected (partial) configurations per constraint, so far:\n");
    for (const ConstraintStats& constraint : stopped.stats.constraints) {
      fmt::print("  {:>12}  {}\n", grouped(constraint.rejected), constraint.text);
    }
  }
}

void print_stopped_json(const Spec& spec, const std::string& file, const SpaceBuildStopped& stopped) {
  const SizeEstimate& e = stopped.estimate;
  const BuildProgress& p = stopped.progress;
  nlohmann::ordered_json constraints = nlohmann::ordered_json::array();
  for (const ConstraintStats& constraint : stopped.stats.constraints) {
    constraints.push_back({{"text", constraint.text}, {"rejected", constraint.rejected}});
  }
  const auto number = [](double value, bool known) { return known ? nlohmann::ordered_json(value) : nullptr; };
  nlohmann::ordered_json report = {
      {"spec", file},
      {"name", spec.name},
      {"count", nullptr},
      {"exact", false},
      {"estimate",
       {{"count", number(e.count, e.reliable)},
        {"low", number(e.low, e.reliable)},
        {"high", number(e.high, e.reliable)},
        {"probes", e.probes},
        {"weakest_group",
         {{"group", e.weakest_group + 1}, {"probes", e.weakest_probes}, {"probes_valid", e.weakest_valid}}}}},
      {"stopped",
       {{"reason", stopped.reason == SpaceBuildStopped::Reason::Time ? "time" : "memory"},
        {"seconds", p.seconds},
        {"group", p.group + 1},
        {"groups", p.groups},
        {"group_parameters", p.group_parameters},
        {"group_combinations", p.group_combinations},
        {"searched", p.searched},
        {"rows_found", p.rows}}},
      {"seconds", p.seconds},
      {"groups", p.groups},
      {"cross_product", stopped.stats.cross_product},
      {"constraints", constraints}};
  fmt::print("{}\n", report.dump(2));
}

// Why the count stopped and how to go on, for standard error.
std::string stopped_message(const SpaceBuildStopped& stopped, const SpaceArgs& args, bool estimate_shown) {
  const BuildProgress& p = stopped.progress;
  std::string why;
  if (stopped.reason == SpaceBuildStopped::Reason::Time) {
    why = fmt::format("counting stopped at the time limit (--max-time {}) with {} of group {} of {} ({} "
                      "parameters) searched",
                      args.max_time_s, percent(p.searched), p.group + 1, p.groups, p.group_parameters);
  } else {
    why = fmt::format("counting stopped once the valid configurations found filled a quarter of this machine's "
                      "memory, with {} of group {} of {} searched: a space this large cannot be built here",
                      percent(p.searched), p.group + 1, p.groups);
  }
  std::string how;
  if (estimate_shown && stopped.estimate.reliable) {
    how = fmt::format("; the count shown is estimated from {} random descents through the part not searched",
                      grouped(stopped.estimate.probes));
  }
  std::string more;
  if (stopped.reason == SpaceBuildStopped::Reason::Time) {
    more = p.searched > 0
               ? fmt::format(". At this rate that group alone needs about {} more; --max-time 0 counts without a limit",
                             human_duration(time_left(p)))
               : ". --max-time 0 counts without a limit";
  }
  return why + how + more;
}

// Collects output in memory and writes it in big blocks; call flush() at the end.
class BufferedOutput {
 public:
  void append(std::string_view text) {
    buffer_.append(text.data(), text.data() + text.size());
    if (buffer_.size() >= kBlock) flush();
  }
  void flush() {
    if (std::fwrite(buffer_.data(), 1, buffer_.size(), stdout) != buffer_.size()) {
      throw Error("cannot write the configurations to standard output");
    }
    buffer_.clear();
  }

 private:
  static constexpr std::size_t kBlock = 1 << 16;
  fmt::memory_buffer buffer_;
};

// One configuration per line: CSV with a header of parameter names, or a JSON object
// {"parameters": [...], "configurations": [[...], ...]}.
void list_configurations(const Space& space, bool as_json) {
  const std::vector<Parameter>& parameters = space.parameters();
  // Each value's text is made once; a row is then only concatenation.
  std::vector<std::vector<std::string>> cells(parameters.size());
  std::string header;
  for (std::size_t p = 0; p < parameters.size(); ++p) {
    for (const Value& value : parameters[p].values) {
      cells[p].push_back(as_json ? store_detail::to_json(value).dump() : csv::field(value.to_string()));
    }
    if (p != 0) header += ',';
    header += as_json ? nlohmann::ordered_json(parameters[p].name).dump() : csv::field(parameters[p].name);
  }
  BufferedOutput out;
  out.append(as_json ? fmt::format("{{\"parameters\": [{}],\n\"configurations\": [", header) : header + "\n");
  std::vector<std::uint32_t> indices(parameters.size());
  for (ConfigIndex index = 0; index < space.size(); ++index) {
    space.value_indices(index, indices);
    if (as_json) out.append(index == 0 ? "\n[" : ",\n[");
    for (std::size_t p = 0; p < parameters.size(); ++p) {
      if (p != 0) out.append(",");
      out.append(cells[p][indices[p]]);
    }
    out.append(as_json ? "]" : "\n");
  }
  if (as_json) out.append("\n]}\n");
  out.flush();
}

int run_space(const SpaceArgs& args) {
  // A benchmark folder stands for its spec.json ("steer space kernels/gemm").
  std::error_code error;
  const std::string file = std::filesystem::is_directory(args.spec, error)
                               ? (std::filesystem::path(args.spec) / "spec.json").string()
                               : args.spec;
  Spec spec = load_spec(file);
  ProgressLine line(isatty(STDERR_FILENO) != 0);
  BuildLimits limits;
  limits.seconds = args.max_time_s;
  limits.memory_bytes = memory_bound();
  limits.on_progress = [&](const BuildProgress& p) { line.draw(p); };
  std::optional<Space> built;
  try {
    built.emplace(build_space(spec, file, limits));
  } catch (const SpaceBuildStopped& stopped) {
    line.clear();
    if (args.list) {
      throw Error(fmt::format("{}: cannot list the configurations: {}", file, stopped_message(stopped, args, false)));
    }
    if (args.json) {
      print_stopped_json(spec, file, stopped);
    } else {
      print_stopped(spec, file, stopped);
    }
    std::fflush(stdout);
    fmt::print(stderr, "steer: {}\n", stopped_message(stopped, args, true));
    return 0;
  }
  line.clear();
  const Space& space = *built;
  if (args.list) {
    list_configurations(space, args.json);
  } else if (args.json) {
    print_summary_json(spec, file, space);
  } else {
    print_summary(spec, file, space);
  }
  return 0;
}

}  // namespace

Runner register_space(CLI::App& app) {
  auto args = std::make_shared<SpaceArgs>();
  CLI::App* command = app.add_subcommand("space", "Build a spec's tuning space: count or list its configurations");
  command->add_option("spec", args->spec, "Tuning spec (Steer JSON or KTT tuning file), or a kernel folder")
      ->required();
  CLI::Option* count = command->add_flag(
      "--count", args->count, "Print the number of valid configurations and build statistics (the default)");
  CLI::Option* list = command->add_flag("--list", args->list, "Write every valid configuration (CSV with a header)");
  count->excludes(list);
  command->add_flag("--json", args->json, "JSON output (with --list: {\"parameters\", \"configurations\"})");
  command->add_option("--max-time", args->max_time_s,
                      "Stop counting after this many seconds and estimate the count by sampling instead (0: no limit)")
      ->capture_default_str()
      ->check(kNonNegative);
  return [args] { return run_space(*args); };
}

}  // namespace steer::cli
