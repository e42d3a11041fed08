// steer import: read recordings (KTT JSON or CSV, Kernel Tuner cache, T4, Steer JSON; gzip or
// not) into a results store, one tuning per recording, skipping tests already there.
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "steer/error.hpp"
#include "steer/recording.hpp"
#include "steer/store.hpp"

namespace steer::cli {
namespace {

struct ImportArgs {
  std::vector<std::string> files;
  std::string db;
  std::string spec_name;
  std::string device;
};

// A recording without a kernel name (T4 files from Kernel Tuner) is named after its
// file: "conv_a100.t4.json.gz" -> "conv_a100.t4".
std::string name_from_file(const std::filesystem::path& file) {
  std::filesystem::path name = file.filename();
  if (name.extension() == ".gz") name = name.stem();
  if (name.extension() == ".json") name = name.stem();
  return name.string();
}

int run_import(const ImportArgs& args) {
  Store store = Store::open(args.db);
  int failures = 0;
  for (const std::string& file : args.files) {
    try {
      ImportedRecording recording = import_recording(file);
      if (recording.device.empty() && !args.device.empty()) {
        recording.device = args.device;
        for (Result& result : recording.results) {
          if (result.device.empty()) result.device = args.device;
        }
      }
      std::string spec_name = !args.spec_name.empty()     ? args.spec_name
                              : !recording.kernel.empty() ? recording.kernel
                                                          : name_from_file(file);
      TuningKey key{spec_name, recording.spec_hash, recording.device, recording.backend, recording.problem_size};
      std::int64_t id = store.tuning(key);
      // A configuration tested several times in the file is stored once, with every run's
      // samples and counters; the store would otherwise keep only the first run.
      std::vector<Result> tests = merge_repeated_tests(recording.results);
      std::size_t imported = store.append(id, tests);  // one transaction: all or nothing
      fmt::print("{}: {} results ({}), {} configurations: {} imported, {} already stored -> tuning {} ({} on {})\n",
                 file, recording.results.size(), to_string(recording.format), tests.size(), imported,
                 tests.size() - imported, id, spec_name, key.device.empty() ? "unknown device" : key.device);
    } catch (const Error& e) {
      // Go on with the other files; the exit status says something failed.
      fmt::print(stderr, "steer: error: {}\n", e.what());
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

Runner register_import(CLI::App& app) {
  auto args = std::make_shared<ImportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "import", "Import recordings (KTT JSON or CSV, Kernel Tuner cache, T4, Steer JSON; .gz or not) into a results store");
  cmd->add_option("files", args->files, "Recording files")->required()->check(CLI::ExistingFile);
  cmd->add_option("--db", args->db, "Results store (SQLite); created if missing")->required();
  cmd->add_option("--spec-name", args->spec_name,
                  "Name of the tuning (default: the kernel name the file records, else the file name)");
  cmd->add_option("--device", args->device,
                  "The GPU the files were measured on, for files that do not name it (KTT CSV, Kernel Tuner's T4), "
                  "as the GPU calls itself (e.g. \"NVIDIA GeForce RTX 2080 Ti\"); a file that names its GPU keeps it");
  return [args] { return run_import(*args); };
}

}  // namespace steer::cli
