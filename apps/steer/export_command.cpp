// steer export: write one tuning of a results store as CSV, T4 JSON, Steer JSON or a Kernel
// Tuner cache file; or the best configuration of each tuning of a kernel as a C++ header or a
// wisdom file, for deployment.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "commands.hpp"
#include "steer/error.hpp"
#include "steer/recording.hpp"
#include "steer/spec.hpp"
#include "steer/store.hpp"

namespace steer::cli {
namespace {

struct ExportArgs {
  std::string db;
  std::optional<std::int64_t> tuning;
  std::string format;
  std::string out;  // empty: standard output
  std::string problem_size;  // kerneltuner: N[,N...] written as the problem size
  std::string spec;          // kerneltuner: resolves the stored size name to its values
  std::string kernel;        // header, wisdom: the kernel (spec name) whose tunings to export
};

void print_tunings(std::FILE* stream, const Store& store) {
  fmt::print(stream, "{:>4}  {:<24} {:<28} {:<8} {:<16} {:>7}\n", "id", "spec", "device", "backend", "size", "tests");
  for (const auto& [id, key] : store.tunings()) {
    fmt::print(stream, "{:>4}  {:<24} {:<28} {:<8} {:<16} {:>7}\n", id, key.spec_name, key.device, key.backend,
               key.problem_size, store.count(id));
  }
}

// Writes `bytes` to the descriptor; false (errno set) when the system would not take them.
bool write_all(int fd, const std::string& bytes) {
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// A regular file (or a new one) is written to a temporary file of its own (mkstemp: never a
// name planted beforehand) renamed into place at the end, so a failed export never leaves a
// truncated file behind that looks complete. Anything else that exists at the path (a device
// such as /dev/stdout, a FIFO, a symbolic link) is written in place, never replaced.
void write_file(const std::filesystem::path& file, const std::string& bytes) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::symlink_status(file, error);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    const int fd = ::open(file.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) throw Error(fmt::format("cannot write '{}': {}", file.string(), std::strerror(errno)));
    const bool written = write_all(fd, bytes);
    const int saved = errno;
    ::close(fd);
    if (!written) throw Error(fmt::format("cannot write '{}': {}", file.string(), std::strerror(saved)));
    return;
  }
  std::string temporary = file.string() + ".XXXXXX";
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) throw Error(fmt::format("cannot create a file beside '{}': {}", file.string(), std::strerror(errno)));
  const bool written = write_all(fd, bytes) && ::fsync(fd) == 0;
  const int saved = errno;
  const mode_t mask = ::umask(0);  // mkstemp makes it 0600; an export is an ordinary file
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  ::close(fd);
  if (!written) {
    ::unlink(temporary.c_str());
    throw Error(fmt::format("cannot write '{}': {}", file.string(), std::strerror(saved)));
  }
  std::filesystem::rename(temporary, file, error);
  if (error) {
    ::unlink(temporary.c_str());
    throw Error(fmt::format("cannot put the export in place as '{}': {}", file.string(), error.message()));
  }
}

// Kernel Tuner compares a cache's problem_size with the one given to tune_kernel, so a cache
// meant for its simulation mode needs the numbers, not a size name: "4096x4096" is written
// as [4096, 4096] (export_kernel_tuner).
std::string kernel_tuner_problem_size(const TuningKey& key, const ExportArgs& args) {
  if (!args.problem_size.empty()) {
    std::string extents = args.problem_size;
    for (char& c : extents) c = c == ',' ? 'x' : c;
    if (extents.find_first_not_of("0123456789x") != std::string::npos || extents.front() == 'x' ||
        extents.back() == 'x' || extents.find("xx") != std::string::npos) {
      throw Error(fmt::format("--problem-size '{}': expected integers separated by commas, e.g. 4096,4096",
                              args.problem_size));
    }
    return extents;
  }
  if (!args.spec.empty()) {
    const Spec spec = load_spec(args.spec);
    const ProblemSize& size = spec.size(key.problem_size);  // throws naming the sizes it has
    std::string extents;
    for (const auto& [name, value] : size.variables) {
      if (!value.is_int()) {
        throw Error(fmt::format("size '{}' of {}: variable {} is not an integer; give --problem-size", size.name,
                                args.spec, name));
      }
      extents += (extents.empty() ? "" : "x") + value.to_string();
    }
    return extents;
  }
  if (key.problem_size.find_first_not_of("0123456789x") != std::string::npos) {
    fmt::print(stderr,
               "steer: warning: the problem size '{}' is written as text; Kernel Tuner compares it with the "
               "problem_size given to tune_kernel: give --spec SPEC (its values) or --problem-size N[,N...]\n",
               key.problem_size);
  }
  return key.problem_size;
}

void write_output(const ExportArgs& args, const std::string& bytes) {
  if (args.out.empty()) {
    std::cout << bytes;
    std::cout.flush();
    if (!std::cout) throw Error("cannot write to standard output");
  } else {
    write_file(args.out, bytes);
  }
}

// header, wisdom: the best configuration of every tuning of one kernel.
int run_deployment_export(const ExportArgs& args, const Store& store) {
  std::string kernel = args.kernel;
  if (args.tuning) {
    const std::string of_tuning = store.tuning_key(*args.tuning).spec_name;  // throws for an unknown id
    if (!kernel.empty() && kernel != of_tuning) {
      throw Error(fmt::format("--tuning {} is a tuning of '{}', not of --kernel '{}'", *args.tuning, of_tuning, kernel));
    }
    kernel = of_tuning;
  }
  if (kernel.empty()) {
    std::vector<std::string> kernels;
    for (const auto& [id, key] : store.tunings()) {
      if (std::find(kernels.begin(), kernels.end(), key.spec_name) == kernels.end()) kernels.push_back(key.spec_name);
    }
    if (kernels.empty()) throw StoreError(fmt::format("results store '{}' holds no tunings", args.db));
    if (kernels.size() > 1) {
      fmt::print(stderr, "steer: error: results store '{}' holds tunings of {} kernels; choose one with --kernel:\n",
                 args.db, kernels.size());
      print_tunings(stderr, store);
      return 1;
    }
    kernel = kernels.front();
  }
  std::vector<std::string> notes;
  const std::vector<TunedConfiguration> best = best_configurations(store, kernel, &notes);
  for (const std::string& note : notes) fmt::print(stderr, "steer: {}\n", note);
  std::ostringstream text;
  if (args.format == "header") {
    export_header(text, kernel, best);
  } else {
    export_wisdom(text, kernel, best);
  }
  write_output(args, text.str());
  if (!args.out.empty()) {
    fmt::print(stderr, "exported the best of {} tunings of {} to {}\n", best.size(), kernel, args.out);
  }
  return 0;
}

int run_export(const ExportArgs& args) {
  Store store = Store::open_read_only(args.db);
  const bool deployment = args.format == "header" || args.format == "wisdom";
  if (!args.kernel.empty() && !deployment) throw Error("--kernel applies to --format header and wisdom");
  if (deployment) {
    if (!args.problem_size.empty() || !args.spec.empty()) throw Error("--problem-size and --spec apply to --format kerneltuner");
    return run_deployment_export(args, store);
  }
  std::int64_t id = 0;
  if (args.tuning) {
    id = *args.tuning;
  } else {
    auto tunings = store.tunings();
    if (tunings.empty()) throw StoreError(fmt::format("results store '{}' holds no tunings", args.db));
    if (tunings.size() > 1) {
      fmt::print(stderr, "steer: error: results store '{}' holds {} tunings; choose one with --tuning ID:\n", args.db,
                 tunings.size());
      print_tunings(stderr, store);
      return 1;
    }
    id = tunings.front().first;
  }
  TuningKey key = store.tuning_key(id);  // throws for an unknown id
  std::vector<Result> results = store.results(id);
  ExportFormat format = *export_format_from_string(args.format);  // CLI11 checked the name and left out header, wisdom
  if ((!args.problem_size.empty() || !args.spec.empty()) && format != ExportFormat::KernelTuner) {
    throw Error("--problem-size and --spec apply to --format kerneltuner");
  }
  if (format == ExportFormat::KernelTuner) key.problem_size = kernel_tuner_problem_size(key, args);
  std::ostringstream text;
  export_results(text, format, key, results);
  write_output(args, text.str());
  if (!args.out.empty()) {
    fmt::print(stderr, "exported {} tests of tuning {} ({} on {}) to {}\n", results.size(), id, key.spec_name,
               key.device, args.out);
  }
  return 0;
}

}  // namespace

Runner register_export(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "export", "Write the tests of one tuning as CSV, T4 JSON, Steer JSON or a Kernel Tuner cache; or the best "
                "configurations of a kernel as a C++ header or a wisdom file");
  cmd->add_option("--db", args->db, "Results store (SQLite)")->required();
  cmd->add_option("--tuning", args->tuning, "Tuning id; needed when the store holds several (they are listed)");
  cmd->add_option("--kernel", args->kernel,
                  "header, wisdom: the kernel (spec name) whose tunings to export; needed when the store holds several");
  cmd->add_option("--format", args->format,
                  "csv (one row per test), t4 (T4 JSON, for other autotuners), json (Steer JSON, every field), "
                  "kerneltuner (a Kernel Tuner cache file, e.g. for its simulation mode); header (a C++ header of the "
                  "best configuration per device and problem size) or wisdom (the same as JSON, for Wisdom::load)")
      ->required()
      ->check(CLI::IsMember({"csv", "t4", "json", "kerneltuner", "header", "wisdom"}));
  cmd->add_option("--out", args->out, "Output file (default: standard output)");
  cmd->add_option("--problem-size", args->problem_size,
                  "kerneltuner: the problem size Kernel Tuner is given, N[,N...] (default: the stored size)");
  cmd->add_option("--spec", args->spec,
                  "kerneltuner: the spec whose size of the stored name gives the problem size's values, in order");
  return [args] { return run_export(*args); };
}

}  // namespace steer::cli
