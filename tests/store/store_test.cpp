// The SQLite results store: round trips, WAL, uniqueness, resume, reopening, schema.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>

#include "steer/store.hpp"
#include "store_test_support.hpp"

namespace steer {
namespace {

using testing::expect_same_result;
using testing::full_result;
using testing::ScratchDir;

const TuningKey kKey{"gemm", "abc123", "NVIDIA H200", "cuda", "N=4096"};

// Runs a one-value query on the file with a separate connection, as an outside tool would.
std::string sql_text(const std::filesystem::path& file, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* statement = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::string text;
  if (sqlite3_step(statement) == SQLITE_ROW) {
    const unsigned char* value = sqlite3_column_text(statement, 0);
    text = value != nullptr ? reinterpret_cast<const char*>(value) : "NULL";
  }
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return text;
}

TEST(Store, RoundTripsEveryField) {
  ScratchDir dir;
  Store store = Store::open(dir / "results.db");
  std::int64_t tuning = store.tuning(kKey);
  Result full = full_result(16);
  Result bare;  // defaults: no samples, no counters, no energy, empty strings
  bare.configuration = {{"TILE", Value(8)}};
  bare.status = Status::CompileError;
  EXPECT_TRUE(store.append(tuning, full));
  EXPECT_TRUE(store.append(tuning, bare));

  std::vector<Result> back = store.results(tuning);
  ASSERT_EQ(back.size(), 2u);
  expect_same_result(full, back[0]);
  expect_same_result(bare, back[1]);
}

TEST(Store, KeepsNaNs) {
  ScratchDir dir;
  Store store = Store::open(dir / "results.db");
  std::int64_t tuning = store.tuning(kKey);
  Result r = full_result(1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  r.max_abs_error = nan;  // an output with NaNs in it
  r.counters["ratio"] = nan;
  r.configuration.emplace_back("ALPHA", Value(nan));
  store.append(tuning, r);
  expect_same_result(r, store.results(tuning).at(0));
}

TEST(Store, UsesWalAndTheCurrentSchema) {
  ScratchDir dir;
  { Store store = Store::open(dir / "results.db"); }
  EXPECT_EQ(sql_text(dir / "results.db", "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(sql_text(dir / "results.db", "PRAGMA user_version"), std::to_string(Store::schema_version()));
  EXPECT_EQ(sql_text(dir / "results.db", "PRAGMA application_id"), std::to_string(0x53544552));
}

TEST(Store, FindsOrCreatesTunings) {
  ScratchDir dir;
  Store store = Store::open(dir / "results.db");
  std::int64_t a = store.tuning(kKey);
  TuningKey other = kKey;
  other.problem_size = "N=8192";
  std::int64_t b = store.tuning(other);
  EXPECT_NE(a, b);
  EXPECT_EQ(store.tuning(kKey), a);
  auto tunings = store.tunings();
  ASSERT_EQ(tunings.size(), 2u);
  EXPECT_EQ(tunings[0].first, a);
  EXPECT_EQ(tunings[0].second, kKey);
  EXPECT_EQ(tunings[1].second, other);
  EXPECT_EQ(store.tuning_key(b), other);
  EXPECT_THROW(store.tuning_key(b + 100), StoreError);
}

TEST(Store, KeepsTheContentATuningWasCreatedWith) {
  ScratchDir dir;
  Store store = Store::open(dir / "results.db");
  const TuningContent content{{"kernel source", std::string(32, 'a')}, {"compiler", "NVRTC 12.6"}};
  TuningKey key = kKey;
  key.content_key = content_key(content);
  const std::int64_t id = store.tuning(key, content);
  EXPECT_EQ(store.tuning_content(id), content);
  EXPECT_EQ(store.tuning_key(id), key);
  EXPECT_EQ(store.tuning(key), id) << "the content is not part of the lookup: the key is";
  EXPECT_EQ(store.tuning_content(store.tuning(kKey)), TuningContent{}) << "no content key: another tuning";
}

TEST(Store, AFreshTuningSharesItsKeyAndLaterRunsContinueTheNewest) {
  ScratchDir dir;
  Store store = Store::open(dir / "results.db");
  const std::int64_t first = store.tuning(kKey);
  store.append(first, full_result(1));
  EXPECT_EQ(store.find_tuning(kKey), first);
  const std::int64_t fresh = store.new_tuning(kKey);
  EXPECT_NE(fresh, first);
  EXPECT_EQ(store.tuning(kKey), fresh);
  EXPECT_EQ(store.find_tuning(kKey), fresh);
  EXPECT_EQ(store.count(fresh), 0u);
  EXPECT_EQ(store.count(first), 1u) << "the older tuning keeps its tests";
  EXPECT_EQ(store.tunings().size(), 2u);
  TuningKey absent = kKey;
  absent.device = "NVIDIA A100";
  EXPECT_EQ(store.find_tuning(absent), std::nullopt);
  EXPECT_EQ(store.tunings().size(), 2u) << "find_tuning creates nothing";
}

TEST(Store, NamesTheSameSpecUnderOtherKeysNewestFirst) {
  ScratchDir dir;
  Store store = Store::open(dir / "results.db");
  TuningKey before = kKey, after = kKey, elsewhere = kKey;
  before.content_key = std::string(32, '1');
  after.content_key = std::string(32, '2');
  elsewhere.content_key = std::string(32, '3');
  elsewhere.problem_size = "N=8192";
  const std::int64_t legacy = store.tuning(kKey);  // no content key: an older Steer's
  const std::int64_t old_key = store.tuning(before);
  store.tuning(elsewhere);
  const std::int64_t current = store.tuning(after);
  std::vector<std::int64_t> ids;
  for (const auto& [id, key] : store.other_keys(after)) ids.push_back(id);
  EXPECT_EQ(ids, (std::vector<std::int64_t>{old_key, legacy})) << "not itself, not another size";
  EXPECT_EQ(store.other_keys(after).front().second, before);
  EXPECT_NE(current, old_key);
}

TEST(Store, SaysWhichPartsOfTheContentDiffer) {
  const std::string a(32, 'a'), b(32, 'b');
  const TuningContent stored{{"compiler", "NVRTC 12.4"}, {"include util.h", a}, {"kernel source", a},
                             {"parameters", a}};
  const TuningContent now{{"compiler", "NVRTC 12.6"}, {"include common.h", b}, {"kernel source", b},
                          {"parameters", a}};
  EXPECT_EQ(content_differences(stored, now),
            (std::vector<std::string>{"compiler: NVRTC 12.4 -> NVRTC 12.6", "include common.h is new",
                                      "include util.h is no longer part of it", "kernel source changed"}));
  EXPECT_TRUE(content_differences(now, now).empty());
  EXPECT_NE(content_key(stored), content_key(now));
  EXPECT_EQ(content_key(now), content_key(TuningContent(now)));
  EXPECT_NE(content_key({{"ab", "c"}}), content_key({{"a", "bc"}})) << "parts are delimited";
}

TEST(Store, KeepsTheFirstMeasurementOfAConfiguration) {
  ScratchDir dir;
  Store store = Store::open(dir / "results.db");
  std::int64_t tuning = store.tuning(kKey);
  Result first = full_result(4);
  Result again = full_result(4);
  again.time = TimingStats::from_samples({99.0});
  EXPECT_TRUE(store.append(tuning, first));
  EXPECT_FALSE(store.append(tuning, again));
  std::vector<Result> batch{full_result(4), full_result(5), full_result(5)};
  EXPECT_EQ(store.append(tuning, batch), 1u);  // only TILE=5, once
  std::vector<Result> back = store.results(tuning);
  ASSERT_EQ(back.size(), 2u);
  expect_same_result(first, back[0]);
  EXPECT_EQ(store.count(tuning), 2u);
  EXPECT_EQ(sql_text(dir / "results.db", "SELECT COUNT(*) FROM counters"), "6");  // no orphans from duplicates
}

TEST(Store, SameConfigurationInAnotherTuningIsNotADuplicate) {
  ScratchDir dir;
  Store store = Store::open(dir / "results.db");
  TuningKey other = kKey;
  other.device = "NVIDIA A100";
  EXPECT_TRUE(store.append(store.tuning(kKey), full_result(4)));
  EXPECT_TRUE(store.append(store.tuning(other), full_result(4)));
}

TEST(Store, ResumesAfterReopening) {
  ScratchDir dir;
  std::vector<Result> appended;
  {
    Store store = Store::open(dir / "results.db");
    std::int64_t tuning = store.tuning(kKey);
    for (int tile : {32, 8, 16}) {
      appended.push_back(full_result(tile));
      store.append(tuning, appended.back());
    }
  }
  Store store = Store::open_existing(dir / "results.db");
  std::int64_t tuning = store.tuning(kKey);
  auto keys = store.measured_keys(tuning);
  EXPECT_EQ(keys.size(), 3u);
  for (const Result& r : appended) EXPECT_TRUE(keys.contains(r.key())) << r.key();
  EXPECT_FALSE(keys.contains(full_result(64).key()));

  store.append(tuning, full_result(64));
  std::vector<Result> back = store.results(tuning);  // in append order, across sessions
  ASSERT_EQ(back.size(), 4u);
  EXPECT_EQ(back[0].configuration[0].second, Value(32));
  EXPECT_EQ(back[1].configuration[0].second, Value(8));
  EXPECT_EQ(back[2].configuration[0].second, Value(16));
  EXPECT_EQ(back[3].configuration[0].second, Value(64));
}

TEST(Store, TwoConnectionsSeeEachOthersCommits) {
  ScratchDir dir;
  Store writer = Store::open(dir / "results.db");
  Store reader = Store::open(dir / "results.db");
  std::int64_t tuning = writer.tuning(kKey);
  EXPECT_EQ(reader.tuning(kKey), tuning);
  writer.append(tuning, full_result(1));
  EXPECT_EQ(reader.count(tuning), 1u);
  reader.append(tuning, full_result(2));
  EXPECT_EQ(writer.results(tuning).size(), 2u);
}

TEST(Store, ErrorsNameTheFile) {
  ScratchDir dir;
  auto message_of = [](auto&& action) -> std::string {
    try {
      action();
    } catch (const StoreError& e) {
      return e.what();
    }
    return "no error";
  };
  std::filesystem::path missing = dir / "missing.db";
  EXPECT_NE(message_of([&] { Store::open_existing(missing); }).find("missing.db"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(missing));

  std::filesystem::path text = dir / "notes.db";
  std::ofstream(text) << "these are not the tables you are looking for\n";
  std::string message = message_of([&] { Store::open(text); });
  EXPECT_NE(message.find("notes.db"), std::string::npos) << message;

  std::filesystem::path foreign = dir / "foreign.db";
  sqlite3* db = nullptr;
  sqlite3_open(foreign.c_str(), &db);
  sqlite3_exec(db, "CREATE TABLE people (name TEXT)", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  message = message_of([&] { Store::open(foreign); });
  EXPECT_NE(message.find("not a Steer results store"), std::string::npos) << message;

  Store store = Store::open(dir / "results.db");
  message = message_of([&] { store.append(999, full_result(1)); });
  EXPECT_NE(message.find("results.db"), std::string::npos) << message;
  EXPECT_NE(message.find("TILE=1"), std::string::npos) << message;
}

TEST(Store, OpensReadOnlyForReadingAndRefusesToWriteThere) {
  ScratchDir dir;
  {
    Store store = Store::open(dir / "results.db");
    store.append(store.tuning(kKey), full_result(1));
  }
  const auto wal = std::filesystem::path((dir / "results.db").string() + "-wal");
  EXPECT_FALSE(std::filesystem::exists(wal)) << "the last close folds the WAL back into the store";
  Store reader = Store::open_read_only(dir / "results.db");
  ASSERT_EQ(reader.tunings().size(), 1u);
  EXPECT_EQ(reader.results(reader.tunings()[0].first).size(), 1u);
  EXPECT_THROW(reader.append(reader.tunings()[0].first, full_result(2)), StoreError);
  EXPECT_THROW(Store::open_read_only(dir / "missing.db"), StoreError);
  EXPECT_FALSE(std::filesystem::exists(dir / "missing.db"));
}

// Runs `read` in a child process that may not write to `folder` (as root: the child becomes
// nobody; else the folder is made read-only meanwhile); the child's exit code is read's.
int in_a_process_that_cannot_write_to(const std::filesystem::path& folder, const std::function<int()>& read) {
  const bool root = ::geteuid() == 0;
  if (!root) std::filesystem::permissions(folder, std::filesystem::perms::owner_write, std::filesystem::perm_options::remove);
  const pid_t child = ::fork();
  if (child == 0) {
    if (root && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(90);
    if (::access(folder.c_str(), W_OK) == 0) ::_exit(91);
    ::_exit(read());
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  if (!root) std::filesystem::permissions(folder, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

// SQLite cannot create FILE.db-shm in a folder it may not write to; a store whose WAL holds
// nothing is then read as an immutable file, and one whose WAL holds tests says why not.
TEST(Store, OpensReadOnlyInAFolderItMayNotWriteTo) {
  ScratchDir dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms::others_read | std::filesystem::perms::others_exec,
                               std::filesystem::perm_options::add);
  const std::filesystem::path file = dir / "results.db";
  {
    Store store = Store::open(file);
    store.append(store.tuning(kKey), full_result(1));
  }
  // Readable by the child whatever the umask (SQLite gives FILE-wal and FILE-shm the same).
  std::filesystem::permissions(file, std::filesystem::perms::others_read | std::filesystem::perms::group_read,
                               std::filesystem::perm_options::add);
  EXPECT_EQ(in_a_process_that_cannot_write_to(dir.path(), [&] {
              try {
                Store reader = Store::open_read_only(file);
                return reader.results(reader.tunings().at(0).first).size() == 1 ? 0 : 2;
              } catch (const StoreError&) {
                return 3;
              }
            }),
            0);
  // A WAL that holds tests not folded into the file (a writer has it open): the reader sees
  // every test through the WAL, or says why it cannot; it never misses them silently.
  Store writer = Store::open(file);
  writer.append(writer.tuning(kKey), full_result(2));
  ASSERT_GT(std::filesystem::file_size(file.string() + "-wal"), 0u);
  EXPECT_EQ(in_a_process_that_cannot_write_to(dir.path(), [&] {
              try {
                Store reader = Store::open_read_only(file);
                return reader.results(reader.tunings().at(0).first).size() == 2 ? 0 : 2;
              } catch (const StoreError& e) {
                return std::string(e.what()).find("not yet folded") != std::string::npos ? 0 : 4;
              }
            }),
            0);
}

TEST(Store, ADamagedFileIsNamedWhenOpened) {
  ScratchDir dir;
  const std::filesystem::path file = dir / "results.db";
  {
    Store store = Store::open(file);
    const std::int64_t tuning = store.tuning(kKey);
    for (int i = 0; i < 200; ++i) store.append(tuning, full_result(i));
  }
  // Overwrite the middle of the file (its pages of tests), as a failing disk might.
  const auto size = std::filesystem::file_size(file);
  ASSERT_GT(size, 16'384u);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    const std::string garbage(4096, '\x5a');
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  for (auto open : {&Store::open, &Store::open_read_only}) {
    try {
      open(file);
      ADD_FAILURE() << "opened a damaged store";
    } catch (const StoreError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("results.db"), std::string::npos) << message;
      EXPECT_TRUE(message.find("damaged") != std::string::npos || message.find("malformed") != std::string::npos)
          << message;
    }
  }
}

TEST(Store, RefusesANewerSchema) {
  ScratchDir dir;
  { Store store = Store::open(dir / "results.db"); }
  sqlite3* db = nullptr;
  sqlite3_open((dir / "results.db").c_str(), &db);
  sqlite3_exec(db, ("PRAGMA user_version = " + std::to_string(Store::schema_version() + 1)).c_str(), nullptr, nullptr,
               nullptr);
  sqlite3_close(db);
  try {
    Store::open(dir / "results.db");
    FAIL() << "opened a store with a newer schema";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("newer Steer"), std::string::npos) << e.what();
  }
}

TEST(Store, ReplaceSwapsAConfigurationsTestAndItsCountersForANewMeasurement) {
  ScratchDir dir;
  Store store = Store::open(dir / "results.db");
  std::int64_t tuning = store.tuning(kKey);
  Result first = full_result(4);
  first.counters = {{"old.sum", 1.0}};
  ASSERT_TRUE(store.append(tuning, first));
  ASSERT_TRUE(store.append(tuning, full_result(8)));
  Result again = full_result(4);
  again.time.median_ms = 0.5;
  again.counters = {{"new.sum", 2.0}, {"threads", 64.0}};
  EXPECT_TRUE(store.replace(tuning, again));
  std::vector<Result> back = store.results(tuning);
  ASSERT_EQ(back.size(), 2u);
  expect_same_result(full_result(8), back[0]);
  expect_same_result(again, back[1]);  // the replacement is the newest test
  EXPECT_EQ(sql_text(dir / "results.db", "SELECT COUNT(*) FROM counters WHERE name = 'old.sum'"), "0");
  EXPECT_FALSE(store.replace(tuning, full_result(16))) << "nothing to replace: it is simply added";
  EXPECT_EQ(store.count(tuning), 3u);
}

TEST(Store, ThePareto_frontViewHoldsTheNonDominatedValidTestsWithEnergy) {
  ScratchDir dir;
  Store store = Store::open(dir / "results.db");
  std::int64_t tuning = store.tuning(kKey);
  auto with = [](int tile, double ms, std::optional<double> joules, Status status = Status::Ok) {
    Result r = full_result(tile);
    r.status = status;
    r.time.median_ms = ms;
    r.energy.reset();
    if (joules) r.energy = EnergyStats{.joules_per_launch = *joules};
    return r;
  };
  store.append(tuning, with(1, 1.0, 5.0));   // fastest
  store.append(tuning, with(2, 2.0, 3.0));   // on the front
  store.append(tuning, with(3, 2.5, 4.0));   // dominated by tile 2
  store.append(tuning, with(4, 4.0, 1.0));   // most frugal
  store.append(tuning, with(5, 0.5, std::nullopt));  // no energy: not on it
  store.append(tuning, with(6, 0.1, 0.1, Status::InvalidOutput));  // invalid: not on it
  EXPECT_EQ(sql_text(dir / "results.db",
                     "SELECT group_concat(json_extract(configuration, '$.TILE')) FROM "
                     "(SELECT configuration FROM pareto_front ORDER BY median_ms)"),
            "1,2,4");
}

TEST(Store, OpensAVersion1StoreAndUpgradesIt) {
  // The first H200 check run was recorded with schema version 1 (before profiling_passes).
  const std::filesystem::path gz =
      std::filesystem::path(STEER_SOURCE_DIR) / "data/h200/runs/transpose_ahead.db.gz";
  ScratchDir dir;
  const std::filesystem::path db = dir / "transpose.db";
  ASSERT_EQ(std::system(("gunzip -c '" + gz.string() + "' > '" + db.string() + "'").c_str()), 0);
  ASSERT_EQ(sql_text(db, "PRAGMA user_version"), "1");
  Store store = Store::open_existing(db);
  EXPECT_EQ(sql_text(db, "PRAGMA user_version"), std::to_string(Store::schema_version()));
  auto tunings = store.tunings();
  ASSERT_EQ(tunings.size(), 1u);
  std::vector<Result> results = store.results(tunings[0].first);
  EXPECT_EQ(results.size(), 150u);
  for (const Result& r : results) EXPECT_EQ(r.profiling_passes, 0);
}

// A copy of one of the H200 recordings of data/ (schema version 2).
std::filesystem::path unpacked_recording(const ScratchDir& dir, const std::string& name) {
  const std::filesystem::path gz = std::filesystem::path(STEER_SOURCE_DIR) / "data/h200" / (name + ".gz");
  const std::filesystem::path db = dir / name;
  EXPECT_EQ(std::system(("gunzip -c '" + gz.string() + "' > '" + db.string() + "'").c_str()), 0);
  return db;
}

TEST(Store, ReadsOlderSchemasReadOnlyWithoutUpgradingThem) {
  ScratchDir dir;
  const std::filesystem::path version2 = unpacked_recording(dir, "transpose_h200.db");
  const std::filesystem::path version1 = dir / "transpose_ahead.db";
  ASSERT_EQ(std::system(("gunzip -c '" STEER_SOURCE_DIR "/data/h200/runs/transpose_ahead.db.gz' > '" +
                         version1.string() + "'")
                            .c_str()),
            0);
  for (const auto& [file, version] : {std::pair{version1, "1"}, std::pair{version2, "2"}}) {
    ASSERT_EQ(sql_text(file, "PRAGMA user_version"), version);
    {
      Store store = Store::open_read_only(file);
      auto tunings = store.tunings();
      ASSERT_EQ(tunings.size(), 1u) << file;
      EXPECT_EQ(tunings[0].second.content_key, "");
      EXPECT_TRUE(store.tuning_content(tunings[0].first).empty());
      std::vector<Result> results = store.results(tunings[0].first);
      EXPECT_GT(results.size(), 100u);
      for (const Result& r : results) EXPECT_FALSE(r.conditions) << "not recorded before schema 3";
      EXPECT_TRUE(store.other_keys(tunings[0].second).empty());
      EXPECT_THROW(store.append(tunings[0].first, full_result(1)), StoreError);
    }
    EXPECT_EQ(sql_text(file, "PRAGMA user_version"), version) << "reading changes nothing";
  }
}

TEST(Store, UpgradesAVersion2StoreKeepingEveryTuningAndTest) {
  ScratchDir dir;
  const std::filesystem::path file = unpacked_recording(dir, "coulomb_h200.db");
  const std::string tests = sql_text(file, "SELECT COUNT(*) FROM tests");
  const std::string counters = sql_text(file, "SELECT COUNT(*) FROM counters");
  TuningKey key;
  {
    Store old = Store::open_read_only(file);
    key = old.tunings().at(0).second;
  }
  Store store = Store::open_existing(file);
  EXPECT_EQ(sql_text(file, "PRAGMA user_version"), std::to_string(Store::schema_version()));
  EXPECT_EQ(sql_text(file, "SELECT COUNT(*) FROM tests"), tests);
  EXPECT_EQ(sql_text(file, "SELECT COUNT(*) FROM counters"), counters) << "nothing cascaded";
  EXPECT_EQ(sql_text(file, "PRAGMA foreign_key_check"), "");
  ASSERT_EQ(store.tunings().size(), 1u);
  EXPECT_EQ(store.tunings()[0].second, key);
  EXPECT_EQ(store.find_tuning(key), store.tunings()[0].first) << "an import with the old key still finds it";
  TuningKey keyed = key;
  keyed.content_key = std::string(32, 'c');
  EXPECT_EQ(store.find_tuning(keyed), std::nullopt) << "a keyed run does not";
  EXPECT_EQ(store.other_keys(keyed).size(), 1u);
  store.append(store.tuning(keyed), full_result(1));  // the upgraded schema takes new tests
}

TEST(Store, ClosingAWriterFoldsTheWalIntoTheFileWhileOthersKeepItOpen) {
  ScratchDir dir;
  const std::filesystem::path file = dir / "results.db";
  Store reader = [&] {
    Store created = Store::open(file);
    created.tuning(kKey);
    return Store::open_read_only(file);
  }();
  {
    Store writer = Store::open(file);
    const std::int64_t tuning = writer.tuning(kKey);
    for (int tile = 1; tile <= 20; ++tile) writer.append(tuning, full_result(tile));
  }
  // FILE.db alone, copied without its -wal while the reader still has the store open.
  const std::filesystem::path copy = dir / "copy.db";
  std::filesystem::copy_file(file, copy);
  EXPECT_EQ(sql_text(copy, "SELECT COUNT(*) FROM tests"), "20");
  EXPECT_EQ(reader.count(reader.tunings().at(0).first), 20u);
}

// The running test of a process is named in the store until its result is: once that
// process has ended without one, the next taker learns which configuration it died on.
TEST(Store, NamesTheTestAProcessWasRunningWhenItEnded) {
  ScratchDir dir;
  const std::filesystem::path db = dir / "results.db";
  std::int64_t tuning = 0;
  {
    Store store = Store::open(db);
    tuning = store.tuning(kKey);
  }
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Store store = Store::open(db);
    store.append(tuning, full_result(1));
    store.mark_running(tuning, full_result(2));
    store.append(tuning, full_result(2));  // finished: no longer running
    store.mark_running(tuning, full_result(4));
    ::_exit(0);  // dies during TILE=4
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  Store store = Store::open(db);
  store.mark_running(tuning, full_result(8));  // this process is alive: its test is not abandoned
  const std::vector<AbandonedTest> abandoned = store.take_abandoned(tuning);
  ASSERT_EQ(abandoned.size(), 1u);
  EXPECT_EQ(abandoned[0].configuration, full_result(4).configuration);
  EXPECT_EQ(abandoned[0].config_index, full_result(4).config_index);
  EXPECT_NE(abandoned[0].process.find(std::to_string(child)), std::string::npos) << abandoned[0].process;
  EXPECT_FALSE(abandoned[0].started.empty());
  EXPECT_TRUE(store.take_abandoned(tuning).empty()) << "taken once";
  EXPECT_EQ(sql_text(db, "SELECT config_key FROM running"), full_result(8).key());
  store.append(tuning, full_result(8));
  EXPECT_EQ(sql_text(db, "SELECT COUNT(*) FROM running"), "0") << "a stored result ends its running record";
  store.mark_running(tuning, full_result(16));
  store.clear_running(tuning);
  EXPECT_EQ(sql_text(db, "SELECT COUNT(*) FROM running"), "0");
}

// A store of version 3 (content keys, before the running tests) opens read-only as it is,
// and a writer upgrades it to the running table, keeping its tests.
TEST(Store, OpensAVersion3StoreReadOnlyAndUpgradesIt) {
  ScratchDir dir;
  const std::filesystem::path db = dir / "results.db";
  {
    Store store = Store::open(db);
    store.append(store.tuning(kKey), full_result(4));
  }
  sqlite3* connection = nullptr;
  sqlite3_open(db.c_str(), &connection);
  ASSERT_EQ(sqlite3_exec(connection, "DROP TABLE running; PRAGMA user_version = 3", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(connection);
  {
    Store reader = Store::open_read_only(db);
    ASSERT_EQ(reader.tunings().size(), 1u);
    EXPECT_EQ(reader.results(reader.tunings()[0].first).size(), 1u);
  }
  EXPECT_EQ(sql_text(db, "PRAGMA user_version"), "3") << "reading changes nothing";
  Store store = Store::open(db);
  EXPECT_EQ(sql_text(db, "PRAGMA user_version"), std::to_string(Store::schema_version()));
  const std::int64_t tuning = store.tunings().at(0).first;
  EXPECT_EQ(store.results(tuning).size(), 1u);
  store.mark_running(tuning, full_result(8));
  EXPECT_EQ(sql_text(db, "SELECT config_key FROM running"), full_result(8).key());
}

TEST(Store, CountersAreQueryableByName) {
  ScratchDir dir;
  Store store = Store::open(dir / "results.db");
  std::int64_t tuning = store.tuning(kKey);
  for (int tile = 1; tile <= 10; ++tile) store.append(tuning, full_result(tile));
  EXPECT_EQ(sql_text(dir / "results.db",
                     "SELECT COUNT(*) FROM tests t JOIN counters c ON c.test_id = t.id AND c.name = 'threads' "
                     "WHERE t.tuning_id = 1"),
            "10");
  EXPECT_EQ(sql_text(dir / "results.db",
                     "SELECT json_extract(configuration, '$.TILE') FROM tests ORDER BY sequence DESC LIMIT 1"),
            "10");
}

// How fast an append is, is measured by bench/store_append.cpp.
TEST(Store, KeepsEveryAppendOfALongTuning) {
  ScratchDir dir;
  Store store = Store::open(dir / "results.db");
  std::int64_t tuning = store.tuning(kKey);
  Result r = full_result(0);
  for (int i = 0; i < 33; ++i) r.counters["counter_" + std::to_string(i)] = i * 1.5;  // like a KTT profile
  r.time = TimingStats::from_samples(std::vector<double>(32, 1.0));
  constexpr int kTests = 500;
  for (int i = 0; i < kTests; ++i) {
    r.configuration[0].second = Value(i + 1);
    ASSERT_TRUE(store.append(tuning, r));
  }
  EXPECT_EQ(store.count(tuning), static_cast<std::size_t>(kTests));
}

}  // namespace
}  // namespace steer
