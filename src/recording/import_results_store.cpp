// Steer results stores (SQLite, plain or gzip-compressed) as recordings: what lets
// `steer simulate`, `steer report`, `steer model train` and Recording::load read the
// stores `steer tune --db` writes, e.g. data/h200/*.db.gz.
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <system_error>

#include "steer/error.hpp"
#include "steer/recording.hpp"
#include "steer/store.hpp"
#include "recording/formats.hpp"

namespace steer::store_detail {
namespace {

namespace fs = std::filesystem;

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

ImportedRecording read_store(const fs::path& file, const fs::path& database, std::optional<std::int64_t> tuning) {
  Store store = Store::open_read_only(database);
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
  recording.parameters = parameters_found(recording.results);
  return recording;
}

}  // namespace

ImportedRecording import_results_store(const fs::path& file, const std::string& contents,
                                       std::optional<std::int64_t> tuning) {
  std::ifstream plain(file, std::ios::binary);
  std::string head(kSqliteHeader.size(), '\0');
  plain.read(head.data(), static_cast<std::streamsize>(head.size()));
  if (plain && head == kSqliteHeader) return read_store(file, file, tuning);
  TemporaryStore copy;  // SQLite reads no gzip: the decompressed bytes go to a temporary file
  {
    std::ofstream out(copy.path(), std::ios::binary);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    if (!out.flush()) {
      throw Error(fmt::format("cannot write the temporary file '{}' (disk full?)", copy.path().string()));
    }
  }
  return read_store(file, copy.path(), tuning);
}

}  // namespace steer::store_detail
