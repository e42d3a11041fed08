// steer space: build a spec's tuning space; report its size, or list its configurations.
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "commands.hpp"
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
};

// Builds the space; errors gain the spec file, since the engine knows only constraint labels.
Space build_space(const Spec& spec, const std::string& file) {
  try {
    return Space::build(spec.space);
  } catch (const ExpressionError& error) {
    throw ExpressionError(fmt::format("{}: {}", file, error.what()), error.expression(), error.position());
  } catch (const SpaceError& error) {
    throw SpaceError(fmt::format("{}: {}", file, error.what()));
  }
}

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
                           {"seconds", stats.seconds},
                           {"groups", stats.groups},
                           {"memory_bytes", stats.memory_bytes},
                           {"cross_product", stats.cross_product},
                           {"parameters", parameters},
                           {"constraints", constraints}};
  fmt::print("{}\n", report.dump(2));
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
  Space space = build_space(spec, file);
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
  return [args] { return run_space(*args); };
}

}  // namespace steer::cli
