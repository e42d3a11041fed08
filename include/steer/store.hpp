#pragma once
// The results store: every finished test, committed as it is produced, in one SQLite file
// that survives the tuner being killed. Recording formats: steer/recording.hpp.
//
//   steer::Store store = steer::Store::open("results.db");
//   std::int64_t tuning = store.tuning(key, content);  // key: steer/tuner.hpp tuning_key()
//   auto done = store.measured_keys(tuning);   // resume: skip these
//   store.append(tuning, result);              // durable once it returns
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "steer/error.hpp"
#include "steer/result.hpp"
#include "steer/value.hpp"

namespace steer {

// What a tuning's results depend on besides the spec's name, the device, the backend and
// the problem size, part by part: part name -> a hash of its content, or a version. The
// tuning loop fills it (steer/tuner.hpp, TuningContent there says which parts); the store
// keeps it so that it can say what differs when a spec comes back under another key.
using TuningContent = std::map<std::string, std::string>;

// A hash of every part (names and values): TuningKey::content_key.
std::string content_key(const TuningContent& content);

// What changed from `stored` to `now`, one phrase per part that differs ("the kernel source
// changed", "compiler: NVRTC 12.4 -> NVRTC 12.6", "include 'util.h' is new"), in part order.
std::vector<std::string> content_differences(const TuningContent& stored, const TuningContent& now);

// What identifies one tuning: results of one tuning are interchangeable, and a run with
// the same key continues (resumes) it.
struct TuningKey {
  std::string spec_name;
  // The hash of the spec's content that decides results (steer/tuner.hpp); for tunings of
  // Steer before schema 3, the hash of the spec file's text; empty for recordings imported
  // from other tools.
  std::string spec_hash;
  std::string device;
  std::string backend;       // "cuda", "opencl", "replay"; empty when not recorded
  std::string problem_size;  // text, e.g. "N=4096" or "4096x4096"
  // content_key(TuningContent): sources, includes, inputs, compiler, driver, ... Empty for
  // imported recordings and for tunings of Steer before schema 3, which no new run matches.
  std::string content_key;

  friend bool operator==(const TuningKey&, const TuningKey&) = default;
};

// A test that was running when the process running it ended without a result: it crashed,
// or was killed (Store::take_abandoned).
struct AbandonedTest {
  std::vector<std::pair<std::string, Value>> configuration;
  std::uint64_t config_index = 0;
  std::string process;  // "process 1234 on HOST"
  std::string started;  // ISO 8601 UTC
};

// A results store in one SQLite file (WAL mode). One Store object is used by one thread;
// several processes may share the file (writers wait for each other, up to a timeout).
class Store {
 public:
  // Opens the store, creating the file if it does not exist and upgrading an older schema.
  // Throws StoreError naming the file (not a database, not a Steer store, newer schema, ...).
  static Store open(const std::filesystem::path& file);
  // Like open(), but a missing file is an error instead of a new, empty store.
  static Store open_existing(const std::filesystem::path& file);
  // For reading only (export, simulate, report, import from a store): writes nothing, so a
  // file or folder without write permission opens too (in such a folder, unless FILE-wal
  // holds tests not yet folded into the file: then StoreError says so); appending throws
  // StoreError. An
  // older schema is read as it is (open() upgrades it).
  static Store open_read_only(const std::filesystem::path& file);
  // Every open checks the file (SQLite's quick_check) and names a damaged one. A read-only
  // open reads stores of every older schema as they are (the recordings in data/ among them).
  // While a store is open, FILE.db-wal beside it holds its latest commits: it belongs to
  // FILE.db (copy or move both, or neither). Closing a store opened for writing folds the
  // WAL back into FILE.db (a checkpoint), also while other processes still have it open; the
  // last to close removes FILE.db-wal.

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  const std::filesystem::path& path() const noexcept;

  // The id of the tuning with this key, created (with `content`) if there is none; of
  // several with the key (new_tuning), the newest.
  std::int64_t tuning(const TuningKey& key, const TuningContent& content = {});
  // A new tuning with this key even when the store holds one already (steer tune --fresh);
  // later runs with the key continue this one.
  std::int64_t new_tuning(const TuningKey& key, const TuningContent& content = {});
  // The newest tuning with this key, if any; creates nothing.
  std::optional<std::int64_t> find_tuning(const TuningKey& key) const;
  // The key of tuning `id`; throws StoreError if there is none.
  TuningKey tuning_key(std::int64_t id) const;
  // The content tuning `id` was created with (empty for imported recordings and tunings of
  // Steer before schema 3).
  TuningContent tuning_content(std::int64_t id) const;
  // Every tuning, by id.
  std::vector<std::pair<std::int64_t, TuningKey>> tunings() const;
  // The tunings of the same spec name, device, backend and problem size as `key` whose
  // content key differs: the same spec under another key. Newest first.
  std::vector<std::pair<std::int64_t, TuningKey>> other_keys(const TuningKey& key) const;

  // Commits one test in its own transaction; once this returns, the test survives the
  // process being killed. A configuration the tuning already holds is not written again:
  // the first measurement is kept and append returns false.
  bool append(std::int64_t tuning, const Result& result);
  // Commits `result` in place of the tuning's earlier test of the same configuration (a
  // re-measurement that adds counters or energy, say), as the newest test; true when
  // there was one to replace.
  bool replace(std::int64_t tuning, const Result& result);
  // Commits many tests in one transaction (all or none); returns how many were new.
  std::size_t append(std::int64_t tuning, std::span<const Result> results);

  // Records, durably, that this process is about to run `test` (its configuration and
  // index) in `tuning`, replacing the test it recorded before. If the whole process dies
  // during the test, the record is left behind for take_abandoned. append() and replace()
  // of a result of the tuning remove the record; so does clear_running().
  void mark_running(std::int64_t tuning, const Result& test);
  void clear_running(std::int64_t tuning);
  // The tests of `tuning` whose processes ended while running them, oldest first; their
  // records are removed. A record of a process still running, or of one on another host
  // (which cannot be asked), stays.
  std::vector<AbandonedTest> take_abandoned(std::int64_t tuning);

  // The tests of a tuning in the order they were appended.
  std::vector<Result> results(std::int64_t tuning) const;
  // The configuration keys (Result::key) a tuning holds: what a resumed run skips.
  std::unordered_set<std::string> measured_keys(std::int64_t tuning) const;
  std::size_t count(std::int64_t tuning) const;

  // The schema version this build writes (PRAGMA user_version).
  static int schema_version() noexcept;

 private:
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  static Store open_file(const std::filesystem::path& file, int flags);
  std::unique_ptr<Impl> impl_;
};

}  // namespace steer
