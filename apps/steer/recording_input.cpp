// Reading a recording or a (possibly gzipped) results store into an ImportedRecording.
#include "recording_input.hpp"

#include <fmt/format.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <system_error>

#include "steer/error.hpp"
#include "store/formats.hpp"

namespace steer::cli {
namespace {

namespace fs = std::filesystem;

constexpr char kSqliteHeader[] = "SQLite format 3";  // 16 bytes with its terminating NUL

// A temporary file removed (with SQLite's -wal and -shm companions) when it goes out of scope.
class TemporaryStore {
 public:
  TemporaryStore() {
    static std::atomic<unsigned> counter{0};
    path_ = fs::temp_directory_path() / fmt::format("steer-store-{}-{}.db", ::getpid(), counter++);
  }
  TemporaryStore(const TemporaryStore&) = delete;
  TemporaryStore& operator=(const TemporaryStore&) = delete;
  ~TemporaryStore() {
    std::error_code ignored;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(fs::path(path_.string() + suffix), ignored);
  }
  const fs::path& path() const noexcept { return path_; }

 private:
  fs::path path_;
};

gzFile open_gz(const fs::path& file) {
  gzFile in = gzopen(file.c_str(), "rb");
  if (in == nullptr) throw StoreError(fmt::format("cannot read '{}': {}", file.string(), std::strerror(errno)));
  return in;
}

// Decompresses (or copies) `file` to `target`.
void gunzip_to(const fs::path& file, const fs::path& target) {
  gzFile in = open_gz(file);
  std::ofstream out(target, std::ios::binary);
  if (!out) {
    gzclose(in);
    throw Error(fmt::format("cannot write the temporary file '{}'", target.string()));
  }
  std::string chunk(1 << 20, '\0');
  for (;;) {
    int n = gzread(in, chunk.data(), static_cast<unsigned>(chunk.size()));
    if (n < 0) {
      int code = 0;
      std::string message = gzerror(in, &code);
      gzclose(in);
      throw StoreError(fmt::format("cannot read '{}': {}", file.string(), message));
    }
    if (n == 0) break;
    out.write(chunk.data(), n);
  }
  gzclose(in);
  if (!out.flush()) throw Error(fmt::format("cannot write the temporary file '{}' (disk full?)", target.string()));
}

ImportedRecording read_store(const fs::path& file, const fs::path& database, std::optional<std::int64_t> tuning) {
  Store store = Store::open_existing(database);
  auto tunings = store.tunings();
  if (tunings.empty()) throw StoreError(fmt::format("results store '{}' holds no tunings", file.string()));
  std::int64_t id = tunings.front().first;
  if (tuning) {
    id = *tuning;
  } else if (tunings.size() > 1) {
    std::string listing;
    for (const auto& [each, key] : tunings) {
      listing += fmt::format("\n  {}: {} on {} ({}, size {}), {} tests", each, key.spec_name, key.device, key.backend,
                             key.problem_size, store.count(each));
    }
    throw StoreError(fmt::format("results store '{}' holds {} tunings; choose one with --tuning ID:{}", file.string(),
                                 tunings.size(), listing));
  }
  TuningKey key = store.tuning_key(id);  // throws for an unknown id
  ImportedRecording recording;
  recording.format = RecordingFormat::Steer;
  recording.device = key.device;
  recording.kernel = key.spec_name;
  recording.problem_size = key.problem_size;
  recording.backend = key.backend;
  recording.spec_hash = key.spec_hash;
  recording.results = store.results(id);
  if (recording.results.empty()) {
    throw StoreError(fmt::format("results store '{}': tuning {} holds no tests", file.string(), id));
  }
  recording.parameters = store_detail::parameters_found(recording.results);
  return recording;
}

}  // namespace

bool is_results_store(const fs::path& file) {
  gzFile in = open_gz(file);
  std::array<char, sizeof kSqliteHeader> head{};
  int n = gzread(in, head.data(), static_cast<unsigned>(head.size()));
  gzclose(in);
  return n == static_cast<int>(head.size()) && std::memcmp(head.data(), kSqliteHeader, head.size()) == 0;
}

ImportedRecording read_recording(const fs::path& file, std::optional<std::int64_t> tuning) {
  if (!fs::exists(file)) throw StoreError(fmt::format("cannot read '{}': no such file", file.string()));
  if (!is_results_store(file)) {
    if (tuning) {
      throw Error(fmt::format("--tuning applies to a results store; '{}' is a recording file", file.string()));
    }
    return import_recording(file);
  }
  std::ifstream plain(file, std::ios::binary);
  std::array<char, sizeof kSqliteHeader> head{};
  plain.read(head.data(), static_cast<std::streamsize>(head.size()));
  if (plain && std::memcmp(head.data(), kSqliteHeader, head.size()) == 0) return read_store(file, file, tuning);
  TemporaryStore copy;  // SQLite reads no gzip: decompress to a temporary file first
  gunzip_to(file, copy.path());
  return read_store(file, copy.path(), tuning);
}

Recording load_recording(const fs::path& file, const SpaceDefinition* definition, std::optional<std::int64_t> tuning) {
  ImportedRecording imported = read_recording(file, tuning);
  try {
    return definition ? Recording::from_import(imported, *definition) : Recording::from_import(imported);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", file.string(), e.what()));
  }
}

}  // namespace steer::cli
