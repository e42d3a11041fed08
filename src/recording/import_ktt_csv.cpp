// KTT's CSV output (KTT 1.x `Tuner::printResult(..., PrintFormat::CSV)`, the format of the
// profile-based searcher's published tuning spaces, and KTT 2.x CSV) -> Results.
//
//   The header names the columns; values are unquoted and separated by commas.
//     Kernel name -> the recording's kernel (of the first row)
//     Computation duration (U), else Total duration (U), else Kernel duration (U), U one
//       of ns, us, ms, s -> the test's one timing sample (KTT keeps one duration a test;
//       "Total" includes KTT's kernel manipulator, which the tuner ranked by)
//     Global size, Local size (or "Global size i", "Local size i" per kernel of a
//       composition) -> counter "threads": the first kernel's global size, which KTT writes
//       as a number of threads
//     Maximum work-group size, Local memory size, Private memory size, Constant memory
//       size, Registers count (KTT 2.x) -> counters MaxWorkGroupSize, LocalMemorySize,
//       PrivateMemorySize, ConstantMemorySize, RegistersCount, as the JSON import names them
//     the other columns: KTT writes the tuning parameters, then the profiling counters.
//       The parameters are the columns before the first counter: a name that a counter
//       table knows (counters.hpp), that is named as Nsight Compute names metrics
//       ("unit__metric.rollup"), or as nvprof names them (lower case, "flop_sp_efficiency",
//       "inst_fp_16": is_nvprof_style). A composition's counters are written "<counter>
//       <kernel>" and become "<kernel>/<counter>", as in the JSON import. Parameter
//       values that are all numbers become numbers (read_numeric_strings).
//   A row may end before the counters: KTT writes them only for the tests it profiled.
//   KTT writes failed configurations (with setInvalidResultPrinting) as a second table after
//   an empty line whose second column is "Error message" (or "Status") instead of the
//   duration: CompilationFailed or a message that names compiling -> CompileError,
//   ValidationFailed -> InvalidOutput, anything else -> LaunchError; the message is kept.
//   KTT's CSV records no device, time stamp, compile or framework time.
#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "steer/counters.hpp"
#include "steer/error.hpp"
#include "steer/recording.hpp"
#include "recording/formats.hpp"

namespace steer::store_detail {

namespace {

constexpr std::string_view kKernelName = "Kernel name";

const std::pair<std::string_view, std::string_view> kCompilationColumns[] = {
    {"Maximum work-group size", "MaxWorkGroupSize"}, {"Local memory size", "LocalMemorySize"},
    {"Private memory size", "PrivateMemorySize"},    {"Constant memory size", "ConstantMemorySize"},
    {"Registers count", "RegistersCount"},
};

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

std::vector<std::string> split_line(std::string_view line) {
  std::vector<std::string> cells;
  for (;;) {
    std::size_t comma = line.find(',');
    cells.emplace_back(trim(line.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    line.remove_prefix(comma + 1);
  }
  return cells;
}

// nvprof's metric names (before Volta) are lower case and read like these; tuning
// parameters seldom are (KTT's examples write them in capitals).
bool is_nvprof_style(std::string_view name) {
  if (!std::ranges::all_of(name, [](unsigned char c) { return std::islower(c) || std::isdigit(c) || c == '_'; })) {
    return false;
  }
  static constexpr std::string_view kPrefixes[] = {"inst_",   "flop_",  "dram_",    "l2_",      "tex_",    "shared_",
                                                   "local_",  "global_", "warp_",   "sm_",      "achieved_", "issue_",
                                                   "eligible_", "stall_", "gld_",   "gst_",     "atomic_", "sysmem_",
                                                   "cf_",     "ldst_",  "special_", "single_",  "double_", "half_"};
  static constexpr std::string_view kSuffixes[] = {"_utilization", "_efficiency", "_transactions", "_throughput",
                                                   "_overhead",    "_hit_rate"};
  return std::ranges::any_of(kPrefixes, [&](std::string_view prefix) { return name.starts_with(prefix); }) ||
         std::ranges::any_of(kSuffixes, [&](std::string_view suffix) { return name.ends_with(suffix); });
}

bool is_counter_name(std::string_view name) {
  if (name == "threads") return false;
  std::string_view metric = name.substr(0, name.find(' '));  // "<counter> <kernel>" in a composition
  if (metric.find("__") != std::string_view::npos) return true;
  for (CounterFamily family : {CounterFamily::PreVolta, CounterFamily::VoltaPlus, CounterFamily::Ktt}) {
    for (const CounterMapping& row : counter_table(family)) {
      if (row.hardware_name == metric) return true;
    }
  }
  return is_nvprof_style(metric);
}

// "Computation duration (us)" -> ("Computation duration", us).
std::optional<std::pair<std::string_view, TimeUnit>> duration_column(std::string_view name) {
  for (std::string_view kind : {"Computation duration", "Total duration", "Kernel duration"}) {
    if (!name.starts_with(kind)) continue;
    std::string_view rest = trim(name.substr(kind.size()));
    if (rest.size() < 3 || rest.front() != '(' || rest.back() != ')') return std::nullopt;
    if (auto unit = time_unit_named(rest.substr(1, rest.size() - 2))) return std::pair{kind, *unit};
  }
  return std::nullopt;
}

enum class Role { Kernel, Duration, Message, GlobalSize, LocalSize, Compilation, Parameter, Counter };

struct Column {
  Role role = Role::Parameter;
  std::string name;  // the parameter's or counter's name
  TimeUnit unit;     // of a duration
  bool runtime = false;  // the duration that is the test's runtime
};

struct Table {
  std::vector<Column> columns;
  bool failures = false;  // the table of invalid results
};

[[noreturn]] void fail_at(std::size_t line, const std::string& what) {
  throw StoreError(fmt::format("KTT CSV, line {}: {}", line, what));
}

Table read_header(const std::vector<std::string>& cells, std::size_t line) {
  if (cells.empty() || cells[0] != kKernelName) fail_at(line, fmt::format("expected a header beginning '{}'", kKernelName));
  Table table;
  bool counters_began = false;
  std::optional<std::size_t> runtime_column;
  std::size_t runtime_rank = 3;  // Computation 0, Total 1, Kernel 2: the lowest is the runtime
  for (const std::string& cell : cells) {
    Column column;
    column.name = cell;
    if (cell == kKernelName) {
      column.role = Role::Kernel;
    } else if (cell == "Error message" || cell == "Status") {
      column.role = Role::Message;
      table.failures = true;
    } else if (auto duration = duration_column(cell)) {
      column.role = Role::Duration;
      column.unit = duration->second;
      std::size_t rank = duration->first == "Computation duration" ? 0 : duration->first == "Total duration" ? 1 : 2;
      if (rank < runtime_rank) runtime_rank = rank, runtime_column = table.columns.size();
    } else if (cell == "Global size" || cell.starts_with("Global size ")) {
      column.role = Role::GlobalSize;
    } else if (cell == "Local size" || cell.starts_with("Local size ")) {
      column.role = Role::LocalSize;
    } else if (auto found = std::find_if(std::begin(kCompilationColumns), std::end(kCompilationColumns),
                                         [&](const auto& entry) { return entry.first == cell; });
               found != std::end(kCompilationColumns)) {
      column.role = Role::Compilation;
      column.name = found->second;
    } else if (counters_began || is_counter_name(cell)) {
      counters_began = true;
      column.role = Role::Counter;
      if (std::size_t space = cell.find(' '); space != std::string::npos) {
        column.name = fmt::format("{}/{}", trim(std::string_view(cell).substr(space + 1)), cell.substr(0, space));
      }
    } else if (cell.empty()) {
      fail_at(line, "a column has no name");
    }
    if (column.role == Role::Parameter || column.role == Role::Counter) {
      for (const Column& before : table.columns) {
        if (before.role == column.role && before.name == column.name) fail_at(line, fmt::format("column '{}' twice", cell));
      }
    }
    table.columns.push_back(std::move(column));
  }
  if (runtime_column) table.columns[*runtime_column].runtime = true;
  if (!table.failures && !runtime_column) {
    fail_at(line, "no duration column ('Computation duration (us)', 'Total duration (us)' or 'Kernel duration (us)')");
  }
  return table;
}

Status status_of(std::string_view message) {
  std::string lower(message);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower.find("compil") != std::string::npos) return Status::CompileError;
  if (lower.find("validation") != std::string::npos) return Status::InvalidOutput;
  return Status::LaunchError;
}

double number_at(const std::string& cell, std::size_t line, const Column& column) {
  char* end = nullptr;
  double value = std::strtod(cell.c_str(), &end);
  if (cell.empty() || end != cell.c_str() + cell.size()) {
    fail_at(line, fmt::format("column '{}' holds '{}', not a number", column.name, cell));
  }
  return value;
}

Result read_row(const Table& table, const std::vector<std::string>& cells, std::size_t line, std::string& kernel) {
  // KTT writes a test's counters only where it profiled it: a row may end before them.
  const bool counters_left_out =
      cells.size() < table.columns.size() &&
      std::all_of(table.columns.begin() + static_cast<std::ptrdiff_t>(cells.size()), table.columns.end(),
                  [](const Column& column) { return column.role == Role::Counter; });
  if (cells.size() != table.columns.size() && !counters_left_out) {
    fail_at(line, fmt::format("{} values for {} columns", cells.size(), table.columns.size()));
  }
  Result result;
  result.status = table.failures ? Status::LaunchError : Status::Ok;
  bool have_threads = false;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const Column& column = table.columns[i];  // cells.size() <= columns: checked above
    const std::string& cell = cells[i];
    switch (column.role) {
      case Role::Kernel:
        if (kernel.empty()) kernel = cell;
        break;
      case Role::Message:
        result.message = cell;
        result.status = status_of(cell);
        break;
      case Role::Duration:
        if (column.runtime) result.time = TimingStats::from_samples({column.unit.to_ms(number_at(cell, line, column))});
        break;
      case Role::GlobalSize:
        if (!have_threads) result.counters["threads"] = number_at(cell, line, column), have_threads = true;
        break;
      case Role::LocalSize: break;
      case Role::Compilation: result.counters[column.name] = number_at(cell, line, column); break;
      case Role::Counter: result.counters[recorded_counter_name(column.name)] = number_at(cell, line, column); break;
      case Role::Parameter: result.configuration.emplace_back(column.name, Value(cell)); break;
    }
  }
  return result;
}

}  // namespace

bool is_ktt_csv(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a byte-order mark
  return text.starts_with(kKernelName) && text.size() > kKernelName.size() && text[kKernelName.size()] == ',';
}

ImportedRecording import_ktt_csv(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  ImportedRecording recording;
  recording.format = RecordingFormat::KttCsv;
  std::optional<Table> table;
  std::size_t line_number = 0;
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    std::string_view line = trim(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++line_number;
    if (line.empty()) {
      table.reset();  // the next line is a header: the table of invalid results
      continue;
    }
    std::vector<std::string> cells = split_line(line);
    if (!table) {
      table = read_header(cells, line_number);
      continue;
    }
    recording.results.push_back(read_row(*table, cells, line_number, recording.kernel));
  }
  if (recording.results.empty()) throw StoreError("KTT CSV: no results below the header");
  read_numeric_strings(recording.results);
  recording.parameters = parameters_found(recording.results);
  return recording;
}

}  // namespace steer::store_detail
