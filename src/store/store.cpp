// The results store: SQLite in WAL mode, one transaction per test.
//
// Durability. A test is committed when append() returns. In WAL mode a commit appends
// the transaction's pages to the -wal file with write() before COMMIT returns; with
// synchronous=NORMAL SQLite skips the fsync at commit (it syncs at checkpoints). Data
// that write() has handed to the kernel survives the death of the process, kill -9
// included, so a killed tuner loses no committed test and leaves no torn one: on the
// next open SQLite ignores WAL frames after the last commit record. What NORMAL gives
// up is durability of the last commits against power loss or a kernel crash (the
// database still stays consistent); that is the price of an append costing a fraction
// of a millisecond instead of an fsync each.
//
// Schema (version 4, see kMigrations; PRAGMA user_version holds the version, application_id marks the
// file as Steer's). Choices:
//  - A tuning is found by its key (TuningKey) and keeps the TuningContent it was created
//    with as a JSON object, so that a later run under another key can be told what differs.
//    Several tunings may share a key (steer tune --fresh): a run continues the newest.
//  - tests.configuration is a JSON object in parameter order, so SQL can still reach a
//    parameter (json_extract(configuration, '$.TILE')); config_key is the canonical
//    Result::key() and UNIQUE(tuning_id, config_key) makes a resumed or repeated run
//    unable to store a configuration twice.
//  - Counters get their own table (test_id, name, value) rather than a JSON column:
//    training a model on counters is a join on the (test_id, name) key returning REAL
//    values, with no JSON parsed per test, and any SQL tool can read it. WITHOUT ROWID
//    keeps the row in the key's B-tree: a test's counters are adjacent, appended at the
//    tree's right edge. There is deliberately no index on name alone: it would spread
//    each commit over one index page per counter (36 counters: ~150 KB of WAL and
//    ~0.9 ms per append, against ~0.1 ms without); queries by name go through the
//    tuning's tests, as in
//      SELECT t.config_key, c.value FROM tests t JOIN counters c
//        ON c.test_id = t.id AND c.name = 'dram__throughput.avg.pct_of_peak_sustained_elapsed'
//      WHERE t.tuning_id = 1;
//  - Timing samples are a BLOB of little-endian float64: exact, compact (32 samples are
//    256 bytes) and read back without parsing; the statistics have their own columns for
//    queries.
//  - SQLite cannot store NaN (it becomes NULL), so REAL columns are nullable and NULL
//    reads back as NaN; the energy columns are NULL when energy was not measured
//    (energy_launches is never NaN, so it tells which); likewise the device's conditions
//    (clocks, power, temperature), NULL unless read, with throttle NULL when none were.
//  - A read-only connection reads every older schema as it is: what a column added later
//    would hold is selected as a constant (kAddedColumns), so that old recordings open
//    without being upgraded. It never reads `running`, which only a writer uses.
//  - `running` holds, per tuning and process, the test that process is running: written
//    before the launch and removed with the test's result, so a row whose process has
//    ended names the configuration it died on (take_abandoned). A process is its host,
//    boot, pid and start time: a pid alone may be reused.
#include "steer/store.hpp"

#include <unistd.h>

#include <bit>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fmt/core.h>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "core/content_hash.hpp"
#include "store/result_json.hpp"
#include "store/sqlite.hpp"

namespace steer {

namespace {

using sqlite::Statement;
using sqlite::Use;

// 'Steer' marker in the database header (PRAGMA application_id): "STER".
constexpr std::int64_t kApplicationId = 0x53544552;

// kMigrations[i] upgrades the schema from version i to i + 1. Append new steps; never
// edit a released one (files in the wild were created by it).
constexpr std::string_view kMigrations[] = {
    R"sql(
CREATE TABLE tunings (
  id           INTEGER PRIMARY KEY,
  spec_name    TEXT NOT NULL,
  spec_hash    TEXT NOT NULL,
  device       TEXT NOT NULL,
  backend      TEXT NOT NULL,
  problem_size TEXT NOT NULL,
  created      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  UNIQUE (spec_name, spec_hash, device, backend, problem_size)
);
CREATE TABLE tests (
  id            INTEGER PRIMARY KEY,
  tuning_id     INTEGER NOT NULL REFERENCES tunings (id) ON DELETE CASCADE,
  sequence      INTEGER NOT NULL,  -- 0, 1, 2, ... within the tuning: the order of appends
  config_key    TEXT NOT NULL,     -- Result::key(): "NAME=VALUE,..."
  config_index  INTEGER NOT NULL,  -- in the Space of the tuning
  configuration TEXT NOT NULL,     -- JSON object, parameter order
  status        TEXT NOT NULL,     -- to_string(Status): ok, compile_error, ...
  message       TEXT NOT NULL,
  repetitions   INTEGER NOT NULL,
  median_ms     REAL,
  min_ms        REAL,
  mean_ms       REAL,
  max_ms        REAL,
  stddev_ms     REAL,
  samples_ms    BLOB NOT NULL,     -- float64 little-endian, one per timed launch
  compile_ms    REAL,
  validation_ms REAL,
  overhead_ms   REAL,
  profiling_ms  REAL,
  max_abs_error REAL,
  energy_joules_per_launch REAL,   -- energy_*: NULL when not measured
  energy_spread            REAL,
  energy_average_watts     REAL,
  energy_window_s          REAL,
  energy_launches          INTEGER,
  energy_sm_clock_mhz      REAL,
  energy_temperature_c     REAL,
  device        TEXT NOT NULL,
  problem_size  TEXT NOT NULL,
  timestamp     TEXT NOT NULL,     -- ISO 8601 UTC
  UNIQUE (tuning_id, config_key),
  UNIQUE (tuning_id, sequence)
);
CREATE TABLE counters (
  test_id INTEGER NOT NULL REFERENCES tests (id) ON DELETE CASCADE,
  name    TEXT NOT NULL,
  value   REAL,
  PRIMARY KEY (test_id, name)
) WITHOUT ROWID;
)sql",
    // 1 -> 2: how many replay passes a profiled test took, and the time-energy Pareto
    // front as a view (always current; rows are valid tests with energy that no other
    // test of the same tuning beats in both time and energy).
    R"sql(
ALTER TABLE tests ADD COLUMN profiling_passes INTEGER NOT NULL DEFAULT 0;
CREATE VIEW pareto_front AS
SELECT t.* FROM tests t
WHERE t.status = 'ok' AND t.energy_joules_per_launch IS NOT NULL
  AND NOT EXISTS (
    SELECT 1 FROM tests u
    WHERE u.tuning_id = t.tuning_id AND u.id <> t.id AND u.status = 'ok'
      AND u.energy_joules_per_launch IS NOT NULL
      AND u.median_ms <= t.median_ms AND u.energy_joules_per_launch <= t.energy_joules_per_launch
      AND (u.median_ms < t.median_ms OR u.energy_joules_per_launch < t.energy_joules_per_launch));
)sql",
    // 2 -> 3: tunings keyed by content (content_key, and the content itself), no longer
    // unique by the columns before (--fresh makes several of one key); the device's
    // conditions per test. SQLite cannot drop a table constraint, so tunings is rebuilt
    // (foreign keys are off during migrations: dropping it must not cascade to the tests).
    R"sql(
CREATE TABLE tunings_v3 (
  id           INTEGER PRIMARY KEY,
  spec_name    TEXT NOT NULL,
  spec_hash    TEXT NOT NULL,
  device       TEXT NOT NULL,
  backend      TEXT NOT NULL,
  problem_size TEXT NOT NULL,
  created      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  content_key  TEXT NOT NULL DEFAULT '',   -- '' for tunings of schema 2 and imported recordings
  content      TEXT NOT NULL DEFAULT '{}'  -- TuningContent: {"part": "hash or version", ...}
);
INSERT INTO tunings_v3 (id, spec_name, spec_hash, device, backend, problem_size, created)
  SELECT id, spec_name, spec_hash, device, backend, problem_size, created FROM tunings;
DROP TABLE tunings;
ALTER TABLE tunings_v3 RENAME TO tunings;
CREATE INDEX tunings_by_spec ON tunings (spec_name, device, backend, problem_size);
ALTER TABLE tests ADD COLUMN sm_clock_mhz REAL;
ALTER TABLE tests ADD COLUMN memory_clock_mhz REAL;
ALTER TABLE tests ADD COLUMN power_watts REAL;
ALTER TABLE tests ADD COLUMN power_limit_watts REAL;
ALTER TABLE tests ADD COLUMN temperature_c REAL;
ALTER TABLE tests ADD COLUMN throttle TEXT;       -- NULL: no conditions were read
ALTER TABLE tests ADD COLUMN other_load REAL;
)sql",
    // 3 -> 4: the test each process is running, so that a process that dies during a test
    // leaves the configuration's name behind (Store::mark_running).
    R"sql(
CREATE TABLE running (
  tuning_id     INTEGER NOT NULL REFERENCES tunings (id) ON DELETE CASCADE,
  host          TEXT NOT NULL,
  boot_id       TEXT NOT NULL,     -- /proc/sys/kernel/random/boot_id
  pid           INTEGER NOT NULL,
  process_start INTEGER NOT NULL,  -- clock ticks after boot (/proc/PID/stat): tells a reused pid apart
  config_key    TEXT NOT NULL,
  config_index  INTEGER NOT NULL,
  configuration TEXT NOT NULL,
  started       TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  PRIMARY KEY (tuning_id, host, boot_id, pid, process_start)
);
)sql",
};
constexpr int kSchemaVersion = static_cast<int>(std::size(kMigrations));

// Columns added after the first schema, and what a read-only connection to an older store
// selects in their place.
struct AddedColumn {
  std::string_view table, name;
  int since;                  // the schema version that added it
  std::string_view missing;   // its value in an older store
};
constexpr AddedColumn kAddedColumns[] = {
    {"tests", "profiling_passes", 2, "0"},
    {"tunings", "content_key", 3, "''"},
    {"tunings", "content", 3, "'{}'"},
    {"tests", "sm_clock_mhz", 3, "NULL"},
    {"tests", "memory_clock_mhz", 3, "NULL"},
    {"tests", "power_watts", 3, "NULL"},
    {"tests", "power_limit_watts", 3, "NULL"},
    {"tests", "temperature_c", 3, "NULL"},
    {"tests", "throttle", 3, "NULL"},
    {"tests", "other_load", 3, "NULL"},
};

// `sql` with every {column} of a column added after `version` replaced by its stand-in:
// the same query runs on every schema.
std::string for_schema(std::string_view sql, std::int64_t version) {
  std::string text(sql);
  for (const AddedColumn& column : kAddedColumns) {
    const std::string placeholder = fmt::format("{{{}}}", column.name);
    const std::string replacement = version >= column.since ? std::string(column.name) : std::string(column.missing);
    for (auto at = text.find(placeholder); at != std::string::npos; at = text.find(placeholder, at)) {
      text.replace(at, placeholder.size(), replacement);
      at += replacement.size();
    }
  }
  return text;
}

constexpr const char* kInsertTest = R"sql(
INSERT INTO tests (tuning_id, sequence, config_key, config_index, configuration, status, message,
                   repetitions, median_ms, min_ms, mean_ms, max_ms, stddev_ms, samples_ms,
                   compile_ms, validation_ms, overhead_ms, profiling_ms, max_abs_error,
                   energy_joules_per_launch, energy_spread, energy_average_watts, energy_window_s,
                   energy_launches, energy_sm_clock_mhz, energy_temperature_c,
                   device, problem_size, timestamp, profiling_passes,
                   sm_clock_mhz, memory_clock_mhz, power_watts, power_limit_watts, temperature_c, throttle,
                   other_load)
VALUES (?1, (SELECT COALESCE(MAX(sequence) + 1, 0) FROM tests WHERE tuning_id = ?1),
        ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
        ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36)
ON CONFLICT (tuning_id, config_key) DO NOTHING
)sql";

constexpr const char* kSelectTests = R"sql(
SELECT id, config_index, configuration, status, message,
       repetitions, median_ms, min_ms, mean_ms, max_ms, stddev_ms, samples_ms,
       compile_ms, validation_ms, overhead_ms, profiling_ms, max_abs_error,
       energy_joules_per_launch, energy_spread, energy_average_watts, energy_window_s,
       energy_launches, energy_sm_clock_mhz, energy_temperature_c,
       device, problem_size, timestamp, {profiling_passes},
       {sm_clock_mhz}, {memory_clock_mhz}, {power_watts}, {power_limit_watts}, {temperature_c}, {throttle},
       {other_load}
FROM tests WHERE tuning_id = ?1 ORDER BY sequence
)sql";

constexpr const char* kTuningColumns = "spec_name, spec_hash, device, backend, problem_size, {content_key}";
constexpr const char* kKeyMatches =
    "spec_name = ?1 AND spec_hash = ?2 AND device = ?3 AND backend = ?4 AND problem_size = ?5 AND {content_key} = ?6";

static_assert(std::endian::native == std::endian::little, "samples_ms blobs are stored as the host's float64");

std::span<const std::byte> sample_bytes(const std::vector<double>& samples) { return std::as_bytes(std::span(samples)); }

std::vector<double> samples_from(std::span<const std::byte> blob) {
  std::vector<double> samples(blob.size() / sizeof(double));
  if (!samples.empty()) std::memcpy(samples.data(), blob.data(), samples.size() * sizeof(double));
  return samples;
}

// Connection settings, then the schema: creates it in a new file, upgrades an older one (not
// when read-only: that writes nothing, and reads an older schema as it is). Either way a
// damaged file is refused here, not found half-way through a run. Returns the schema version
// the connection reads.
std::int64_t set_up(sqlite::Connection& db, bool read_only) {
  sqlite3_busy_timeout(db.get(), 10'000);  // wait for another process's write, not fail
  if (!read_only) {
    // WAL: readers never block the writer, and a commit is one append to the -wal file.
    std::string mode = db.query_text("PRAGMA journal_mode = WAL");
    if (mode != "wal") throw sqlite::Failure(fmt::format("cannot switch to WAL mode (journal mode is '{}')", mode));
    db.execute("PRAGMA synchronous = NORMAL");
  }
  if (std::string check = db.query_text("PRAGMA quick_check"); check != "ok") {
    throw sqlite::Failure(fmt::format("the file is damaged (SQLite's quick_check: {})", check));
  }
  const auto newer = [](std::int64_t version) {
    return sqlite::Failure(fmt::format("written by a newer Steer (schema version {}; this build knows up to {})",
                                       version, kSchemaVersion));
  };
  if (read_only) {
    const std::int64_t version = db.query_int("PRAGMA user_version");
    if (version == 0 || db.query_int("PRAGMA application_id") != kApplicationId) {
      throw sqlite::Failure("not a Steer results store");
    }
    if (version > kSchemaVersion) throw newer(version);
    db.execute("PRAGMA foreign_keys = ON");
    return version;
  }

  {
    // Foreign keys stay off while the schema changes (PRAGMA foreign_keys is a no-op inside
    // a transaction): rebuilding a table must not cascade to the rows that refer to it.
    db.execute("PRAGMA foreign_keys = OFF");
    Statement begin(db.get(), "BEGIN IMMEDIATE");
    Statement commit(db.get(), "COMMIT");
    Statement rollback(db.get(), "ROLLBACK");
    sqlite::Transaction transaction(begin, commit, rollback);
    std::int64_t version = db.query_int("PRAGMA user_version");
    if (version == 0) {
      if (db.query_int("SELECT COUNT(*) FROM sqlite_schema") != 0)
        throw sqlite::Failure("an SQLite database, but not a Steer results store (it has other tables)");
    } else if (db.query_int("PRAGMA application_id") != kApplicationId) {
      throw sqlite::Failure("an SQLite database, but not a Steer results store (application_id differs)");
    }
    if (version > kSchemaVersion) throw newer(version);
    if (version < kSchemaVersion) {
      for (auto step = version; step < kSchemaVersion; ++step) db.execute(kMigrations[step]);
      db.execute(fmt::format("PRAGMA user_version = {}; PRAGMA application_id = {}", kSchemaVersion, kApplicationId));
      if (db.query_int("SELECT COUNT(*) FROM pragma_foreign_key_check") != 0) {
        throw sqlite::Failure("upgrading the schema left tests without their tuning; the file was not changed");
      }
      transaction.commit();
    }
  }
  db.execute("PRAGMA foreign_keys = ON");
  return kSchemaVersion;
}

// A connection whose settings and schema are in place, so statements can be prepared.
struct ReadyConnection : sqlite::Connection {
  ReadyConnection(const std::string& file, int flags)
      : sqlite::Connection(file, flags),
        read_only((flags & SQLITE_OPEN_READONLY) != 0),
        version(set_up(*this, read_only)) {}
  bool read_only;
  std::int64_t version;
};

TuningKey tuning_key_from(const Statement& s, int first_column) {
  return TuningKey{std::string(s.column_text(first_column)),     std::string(s.column_text(first_column + 1)),
                   std::string(s.column_text(first_column + 2)), std::string(s.column_text(first_column + 3)),
                   std::string(s.column_text(first_column + 4)), std::string(s.column_text(first_column + 5))};
}

void bind_key(Statement& s, const TuningKey& key) {
  s.bind(1, std::string_view(key.spec_name));
  s.bind(2, std::string_view(key.spec_hash));
  s.bind(3, std::string_view(key.device));
  s.bind(4, std::string_view(key.backend));
  s.bind(5, std::string_view(key.problem_size));
  s.bind(6, std::string_view(key.content_key));
}

bool looks_like_a_hash(const std::string& text) {
  return text.size() == 32 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// A process as the running table names it.
struct ProcessIdentity {
  std::string host, boot_id;
  std::int64_t pid = 0, start = 0;
};

std::string first_line(const char* file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

// The start time of process `pid` in clock ticks after boot, or nullopt when there is no
// such process (field 22 of /proc/PID/stat, counted after the command name's parenthesis,
// which may itself hold spaces).
std::optional<std::int64_t> process_start(std::int64_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  const std::size_t name_end = stat.rfind(')');
  if (name_end == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(name_end + 1));
  std::string field;
  for (int number = 3; fields >> field; ++number) {
    if (number == 22) return std::stoll(field);
  }
  return std::nullopt;
}

// Read again in a child that a fork made after it was first read: the child is another
// process, and its running-table rows must name it, not its parent.
const ProcessIdentity& this_process() {
  thread_local ProcessIdentity identity;
  if (identity.pid != ::getpid()) {
    ProcessIdentity process;
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) == 0) process.host = host;
    process.boot_id = first_line("/proc/sys/kernel/random/boot_id");
    process.pid = ::getpid();
    process.start = process_start(process.pid).value_or(0);
    identity = std::move(process);
  }
  return identity;
}

// Whether the process of a running-table row has ended. A process on another machine
// cannot be asked: it counts as running.
bool has_ended(const ProcessIdentity& process) {
  const ProcessIdentity& self = this_process();
  if (process.host != self.host) return false;
  if (process.boot_id != self.boot_id) return true;
  return process_start(process.pid) != process.start;
}

}  // namespace

struct Store::Impl {
  std::filesystem::path file;
  ReadyConnection db;
  // Prepared once: an append binds and steps, nothing is parsed. Statements that write are
  // prepared only for a connection that may write (an older schema, read as it is, lacks
  // the columns they name).
  Statement begin_immediate, begin_read, commit, rollback;
  Statement find_tuning, select_tuning, select_tunings, select_other_keys, select_content;
  Statement select_tests, select_counters, select_keys, count_tests;
  std::optional<Statement> insert_tuning, insert_test, insert_counter, delete_test;
  // The running table's statements; a read-only store, which may predate the table, has none.
  struct RunningStatements {
    Statement insert, remove, select;
  };
  std::optional<RunningStatements> running;

  // `opened_as`: what SQLite opens, when not the path itself (a URI).
  Impl(std::filesystem::path path, int flags, const std::string& opened_as = {})
      : file(std::move(path)),
        db(opened_as.empty() ? file.string() : opened_as, flags),
        begin_immediate(db.get(), "BEGIN IMMEDIATE"),
        begin_read(db.get(), "BEGIN"),
        commit(db.get(), "COMMIT"),
        rollback(db.get(), "ROLLBACK"),
        find_tuning(db.get(), sql(fmt::format("SELECT id FROM tunings WHERE {} ORDER BY id DESC LIMIT 1", kKeyMatches))),
        select_tuning(db.get(), sql(fmt::format("SELECT {} FROM tunings WHERE id = ?1", kTuningColumns))),
        select_tunings(db.get(), sql(fmt::format("SELECT id, {} FROM tunings ORDER BY id", kTuningColumns))),
        select_other_keys(db.get(), sql(fmt::format("SELECT id, {} FROM tunings WHERE spec_name = ?1 AND device = ?2 "
                                                    "AND backend = ?3 AND problem_size = ?4 AND {{content_key}} <> ?5 "
                                                    "ORDER BY id DESC",
                                                    kTuningColumns))),
        select_content(db.get(), sql("SELECT {content} FROM tunings WHERE id = ?1")),
        select_tests(db.get(), sql(kSelectTests)),
        select_counters(db.get(),
                        "SELECT c.test_id, c.name, c.value FROM counters c JOIN tests t ON t.id = c.test_id "
                        "WHERE t.tuning_id = ?1"),
        select_keys(db.get(), "SELECT config_key FROM tests WHERE tuning_id = ?1"),
        count_tests(db.get(), "SELECT COUNT(*) FROM tests WHERE tuning_id = ?1") {
    if (db.read_only) return;
    insert_tuning.emplace(db.get(),
                          "INSERT INTO tunings (spec_name, spec_hash, device, backend, problem_size, content_key, "
                          "content) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    insert_test.emplace(db.get(), kInsertTest);
    insert_counter.emplace(db.get(), "INSERT INTO counters (test_id, name, value) VALUES (?1, ?2, ?3)");
    delete_test.emplace(db.get(), "DELETE FROM tests WHERE tuning_id = ?1 AND config_key = ?2");
    running.emplace(RunningStatements{
        Statement(db.get(),
                  "INSERT OR REPLACE INTO running (tuning_id, host, boot_id, pid, process_start, config_key, "
                  "config_index, configuration) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"),
        Statement(db.get(),
                  "DELETE FROM running WHERE tuning_id = ?1 AND host = ?2 AND boot_id = ?3 AND pid = ?4 "
                  "AND process_start = ?5"),
        Statement(db.get(),
                  "SELECT host, boot_id, pid, process_start, configuration, config_index, started FROM running "
                  "WHERE tuning_id = ?1 ORDER BY started")});
  }

  // Closing a connection that may write folds the WAL back into the file, so that FILE.db
  // alone holds every commit once the command ends, even while other processes (a reader,
  // another tuner) keep the store open; SQLite itself does it only when the last connection
  // closes, and a read-only one cannot. If a reader holds an old snapshot for longer than the
  // wait, the WAL stays, for the next checkpoint: it still belongs to the file.
  ~Impl() {
    if (db.read_only) return;
    sqlite3_busy_timeout(db.get(), 2'000);
    (void)sqlite3_wal_checkpoint_v2(db.get(), nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr);
  }

  std::string sql(std::string_view text) const { return for_schema(text, db.version); }

  // A statement that writes; throws where the store was opened read-only.
  Statement& writer(std::optional<Statement>& statement) const {
    if (!statement) throw sqlite::Failure("the store was opened read-only");
    return *statement;
  }

  // Binds the tuning and a process as ?1 to ?5.
  static void bind_process(Statement& s, std::int64_t tuning, const ProcessIdentity& process) {
    s.bind(1, tuning);
    s.bind(2, std::string_view(process.host));
    s.bind(3, std::string_view(process.boot_id));
    s.bind(4, process.pid);
    s.bind(5, process.start);
  }

  // Inside the caller's transaction: this process no longer runs a test of `tuning`.
  void clear_running(std::int64_t tuning, const ProcessIdentity& process) {
    if (!running) return;
    Use d(running->remove);
    bind_process(*d, tuning, process);
    d->step();
  }

  // SQLite failures become StoreErrors that say which file and what was being done.
  [[noreturn]] void fail(std::string_view action, const std::exception& e) const {
    throw StoreError(fmt::format("results store '{}': {}: {}", file.string(), action, e.what()));
  }

  // Writes one test inside the caller's transaction; false if its key is already there.
  bool insert(std::int64_t tuning, const Result& result) {
    std::string key = result.key();
    std::string configuration = store_detail::configuration_to_json(result.configuration).dump();
    bool inserted = false;
    {
      Use s(writer(insert_test));
      s->bind(1, tuning);
      s->bind(2, std::string_view(key));
      s->bind(3, static_cast<std::int64_t>(result.config_index));
      s->bind(4, std::string_view(configuration));
      s->bind(5, std::string_view(to_string(result.status)));
      s->bind(6, std::string_view(result.message));
      const TimingStats& t = result.time;
      s->bind(7, static_cast<std::int64_t>(t.repetitions));
      s->bind(8, t.median_ms);
      s->bind(9, t.min_ms);
      s->bind(10, t.mean_ms);
      s->bind(11, t.max_ms);
      s->bind(12, t.stddev_ms);
      s->bind_blob(13, sample_bytes(t.samples_ms));
      s->bind(14, result.compile_ms);
      s->bind(15, result.validation_ms);
      s->bind(16, result.overhead_ms);
      s->bind(17, result.profiling_ms);
      s->bind(18, result.max_abs_error);
      if (result.energy) {
        const EnergyStats& e = *result.energy;
        s->bind(19, e.joules_per_launch);
        s->bind(20, e.spread);
        s->bind(21, e.average_watts);
        s->bind(22, e.window_s);
        s->bind(23, static_cast<std::int64_t>(e.launches));
        s->bind(24, e.sm_clock_mhz);
        s->bind(25, e.temperature_c);
      }  // else: unbound parameters are NULL
      s->bind(26, std::string_view(result.device));
      s->bind(27, std::string_view(result.problem_size));
      s->bind(28, std::string_view(result.timestamp));
      s->bind(29, static_cast<std::int64_t>(result.profiling_passes));
      if (result.conditions) {
        const DeviceConditions& c = *result.conditions;
        s->bind(30, c.sm_clock_mhz);
        s->bind(31, c.memory_clock_mhz);
        s->bind(32, c.power_watts);
        s->bind(33, c.power_limit_watts);
        s->bind(34, c.temperature_c);
        s->bind(35, std::string_view(c.throttle));
        s->bind(36, c.other_load);
      }  // else NULL, throttle included: no conditions were read
      s->step();
      inserted = sqlite3_changes(db.get()) > 0;
    }
    if (!inserted) return false;
    std::int64_t test_id = sqlite3_last_insert_rowid(db.get());
    for (const auto& [name, value] : result.counters) {
      Use c(writer(insert_counter));
      c->bind(1, test_id);
      c->bind(2, std::string_view(name));
      c->bind(3, value);
      c->step();
    }
    return true;
  }

  // Inside the caller's write transaction.
  std::int64_t insert_tuning_row(const TuningKey& key, const TuningContent& content) {
    store_detail::Json json = store_detail::Json::object();
    for (const auto& [part, value] : content) json[part] = value;
    const std::string text = json.dump();
    Use insert(writer(insert_tuning));
    bind_key(*insert, key);
    insert->bind(7, std::string_view(text));
    insert->step();
    return sqlite3_last_insert_rowid(db.get());
  }

  void require_tuning(std::int64_t id) {
    Use s(select_tuning);
    s->bind(1, id);
    if (!s->step()) throw sqlite::Failure(fmt::format("no tuning with id {}", id));
  }
};

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

Store Store::open(const std::filesystem::path& file) {
  try {
    return Store(std::make_unique<Impl>(file, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX));
  } catch (const sqlite::Failure& e) {
    throw StoreError(fmt::format("cannot open results store '{}': {}", file.string(), e.what()));
  }
}

// A store that must exist already, opened with `flags`.
Store Store::open_file(const std::filesystem::path& file, int flags) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error))
    throw StoreError(fmt::format("cannot open results store '{}': no such file", file.string()));
  try {
    return Store(std::make_unique<Impl>(file, flags | SQLITE_OPEN_NOMUTEX));
  } catch (const sqlite::Failure& e) {
    throw StoreError(fmt::format("cannot open results store '{}': {}", file.string(), e.what()));
  }
}

Store Store::open_existing(const std::filesystem::path& file) { return open_file(file, SQLITE_OPEN_READWRITE); }

namespace {

// `file` as an SQLite URI with immutable=1: the bytes of a path that a URI would read
// otherwise ('?', '#', '%', and all but the unreserved) are percent-encoded.
std::string immutable_uri(const std::filesystem::path& file) {
  std::string uri = "file:";
  for (unsigned char c : std::filesystem::absolute(file).string()) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      uri += static_cast<char>(c);
    } else {
      uri += fmt::format("%{:02X}", c);
    }
  }
  return uri + "?immutable=1";
}

}  // namespace

Store Store::open_read_only(const std::filesystem::path& file) {
  try {
    return open_file(file, SQLITE_OPEN_READONLY);
  } catch (const StoreError&) {
    // Reading a store in WAL mode needs FILE.db-shm, which SQLite cannot create in a folder
    // this process may not write to. Such a store is read as an immutable file instead, but
    // only when no FILE.db-wal holds tests not yet folded into it (immutable reads skip it).
    std::filesystem::path folder = std::filesystem::absolute(file).parent_path();
    if (::access(folder.c_str(), W_OK) == 0) throw;
    std::error_code error;
    const std::filesystem::path wal = file.string() + "-wal";
    if (std::filesystem::exists(wal, error) && std::filesystem::file_size(wal, error) > 0) {
      throw StoreError(fmt::format("cannot open results store '{}' for reading: its folder is not writable, so SQLite "
                                   "cannot create '{}-shm', and '{}' holds tests not yet folded into the store (a "
                                   "tuning is running, or one ended without closing it); read it where it is "
                                   "writable, or after a writing command (steer tune, import) closed it",
                                   file.string(), file.string(), wal.string()));
    }
    try {
      return Store(std::make_unique<Impl>(file, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                                          immutable_uri(file)));
    } catch (const sqlite::Failure& e) {
      throw StoreError(fmt::format("cannot open results store '{}': {}", file.string(), e.what()));
    }
  }
}

const std::filesystem::path& Store::path() const noexcept { return impl_->file; }

int Store::schema_version() noexcept { return kSchemaVersion; }

std::string content_key(const TuningContent& content) {
  ContentHash hash;
  hash.add(std::string_view("steer tuning content 1"));
  for (const auto& [part, value] : content) {
    hash.add(part);
    hash.add(value);
  }
  return hash.hex();
}

std::vector<std::string> content_differences(const TuningContent& stored, const TuningContent& now) {
  std::vector<std::string> differences;
  auto was = stored.begin();
  auto is = now.begin();
  while (was != stored.end() || is != now.end()) {
    if (is == now.end() || (was != stored.end() && was->first < is->first)) {
      differences.push_back(fmt::format("{} is no longer part of it", was->first));
      ++was;
    } else if (was == stored.end() || is->first < was->first) {
      differences.push_back(fmt::format("{} is new", is->first));
      ++is;
    } else {
      if (was->second != is->second) {
        differences.push_back(looks_like_a_hash(was->second) && looks_like_a_hash(is->second)
                                  ? fmt::format("{} changed", is->first)
                                  : fmt::format("{}: {} -> {}", is->first, was->second, is->second));
      }
      ++was;
      ++is;
    }
  }
  return differences;
}

std::optional<std::int64_t> Store::find_tuning(const TuningKey& key) const {
  try {
    Use find(impl_->find_tuning);
    bind_key(*find, key);
    if (!find->step()) return std::nullopt;
    return find->column_int(0);
  } catch (const sqlite::Failure& e) {
    impl_->fail(fmt::format("cannot look up tuning '{}' on '{}'", key.spec_name, key.device), e);
  }
}

std::int64_t Store::tuning(const TuningKey& key, const TuningContent& content) {
  try {
    // Look up, else insert, in one write transaction: two processes starting the same
    // tuning at once get the same id.
    sqlite::Transaction transaction(impl_->begin_immediate, impl_->commit, impl_->rollback);
    std::optional<std::int64_t> id = find_tuning(key);
    if (!id) id = impl_->insert_tuning_row(key, content);
    transaction.commit();
    return *id;
  } catch (const sqlite::Failure& e) {
    impl_->fail(fmt::format("cannot create tuning '{}' on '{}'", key.spec_name, key.device), e);
  }
}

std::int64_t Store::new_tuning(const TuningKey& key, const TuningContent& content) {
  try {
    sqlite::Transaction transaction(impl_->begin_immediate, impl_->commit, impl_->rollback);
    const std::int64_t id = impl_->insert_tuning_row(key, content);
    transaction.commit();
    return id;
  } catch (const sqlite::Failure& e) {
    impl_->fail(fmt::format("cannot create tuning '{}' on '{}'", key.spec_name, key.device), e);
  }
}

TuningKey Store::tuning_key(std::int64_t id) const {
  try {
    Use s(impl_->select_tuning);
    s->bind(1, id);
    if (!s->step()) throw StoreError(fmt::format("results store '{}' has no tuning with id {}", impl_->file.string(), id));
    return tuning_key_from(*s, 0);
  } catch (const sqlite::Failure& e) {
    impl_->fail(fmt::format("cannot read tuning {}", id), e);
  }
}

TuningContent Store::tuning_content(std::int64_t id) const {
  try {
    Use s(impl_->select_content);
    s->bind(1, id);
    if (!s->step()) throw StoreError(fmt::format("results store '{}' has no tuning with id {}", impl_->file.string(), id));
    const store_detail::Json json = store_detail::Json::parse(s->column_text(0));
    TuningContent content;
    for (const auto& [part, value] : json.items()) content.emplace(part, value.get<std::string>());
    return content;
  } catch (const sqlite::Failure& e) {
    impl_->fail(fmt::format("cannot read the content of tuning {}", id), e);
  } catch (const store_detail::Json::exception& e) {
    impl_->fail(fmt::format("the content of tuning {} is damaged", id), e);
  }
}

std::vector<std::pair<std::int64_t, TuningKey>> Store::tunings() const {
  try {
    std::vector<std::pair<std::int64_t, TuningKey>> tunings;
    Use s(impl_->select_tunings);
    while (s->step()) tunings.emplace_back(s->column_int(0), tuning_key_from(*s, 1));
    return tunings;
  } catch (const sqlite::Failure& e) {
    impl_->fail("cannot list tunings", e);
  }
}

std::vector<std::pair<std::int64_t, TuningKey>> Store::other_keys(const TuningKey& key) const {
  try {
    std::vector<std::pair<std::int64_t, TuningKey>> tunings;
    Use s(impl_->select_other_keys);
    s->bind(1, std::string_view(key.spec_name));
    s->bind(2, std::string_view(key.device));
    s->bind(3, std::string_view(key.backend));
    s->bind(4, std::string_view(key.problem_size));
    s->bind(5, std::string_view(key.content_key));
    while (s->step()) tunings.emplace_back(s->column_int(0), tuning_key_from(*s, 1));
    return tunings;
  } catch (const sqlite::Failure& e) {
    impl_->fail(fmt::format("cannot list the tunings of '{}'", key.spec_name), e);
  }
}

bool Store::append(std::int64_t tuning, const Result& result) {
  try {
    sqlite::Transaction transaction(impl_->begin_immediate, impl_->commit, impl_->rollback);
    bool inserted = impl_->insert(tuning, result);
    impl_->clear_running(tuning, this_process());  // the test has its result: it no longer runs
    transaction.commit();
    return inserted;
  } catch (const sqlite::Failure& e) {
    impl_->fail(fmt::format("cannot append test '{}' to tuning {}", result.key(), tuning), e);
  }
}

bool Store::replace(std::int64_t tuning, const Result& result) {
  try {
    sqlite::Transaction transaction(impl_->begin_immediate, impl_->commit, impl_->rollback);
    impl_->require_tuning(tuning);
    const std::string key = result.key();
    bool replaced = false;
    {
      Use d(impl_->writer(impl_->delete_test));  // its counters go with it (ON DELETE CASCADE)
      d->bind(1, tuning);
      d->bind(2, std::string_view(key));
      d->step();
      replaced = sqlite3_changes(impl_->db.get()) > 0;
    }
    impl_->insert(tuning, result);
    impl_->clear_running(tuning, this_process());
    transaction.commit();
    return replaced;
  } catch (const sqlite::Failure& e) {
    impl_->fail(fmt::format("cannot replace test '{}' in tuning {}", result.key(), tuning), e);
  }
}

std::size_t Store::append(std::int64_t tuning, std::span<const Result> results) {
  std::size_t inserted = 0;
  const Result* current = nullptr;
  try {
    sqlite::Transaction transaction(impl_->begin_immediate, impl_->commit, impl_->rollback);
    impl_->require_tuning(tuning);
    for (const Result& result : results) {
      current = &result;
      if (impl_->insert(tuning, result)) ++inserted;
    }
    transaction.commit();
    return inserted;
  } catch (const sqlite::Failure& e) {
    std::string which = current != nullptr ? fmt::format(" (at test '{}')", current->key()) : std::string();
    impl_->fail(fmt::format("cannot append {} tests to tuning {}{}", results.size(), tuning, which), e);
  }
}

void Store::mark_running(std::int64_t tuning, const Result& test) {
  try {
    if (!impl_->running) throw sqlite::Failure("the store is open for reading only");
    const std::string key = test.key();
    const std::string configuration = store_detail::configuration_to_json(test.configuration).dump();
    Use s(impl_->running->insert);
    Impl::bind_process(*s, tuning, this_process());
    s->bind(6, std::string_view(key));
    s->bind(7, static_cast<std::int64_t>(test.config_index));
    s->bind(8, std::string_view(configuration));
    s->step();  // its own transaction: committed when it returns
  } catch (const sqlite::Failure& e) {
    impl_->fail(fmt::format("cannot record that test '{}' of tuning {} is running", test.key(), tuning), e);
  }
}

void Store::clear_running(std::int64_t tuning) {
  try {
    impl_->clear_running(tuning, this_process());
  } catch (const sqlite::Failure& e) {
    impl_->fail(fmt::format("cannot clear the running test of tuning {}", tuning), e);
  }
}

std::vector<AbandonedTest> Store::take_abandoned(std::int64_t tuning) {
  try {
    if (!impl_->running) throw sqlite::Failure("the store is open for reading only");
    sqlite::Transaction transaction(impl_->begin_immediate, impl_->commit, impl_->rollback);
    std::vector<std::pair<ProcessIdentity, AbandonedTest>> ended;
    {
      Use s(impl_->running->select);
      s->bind(1, tuning);
      while (s->step()) {
        ProcessIdentity process{std::string(s->column_text(0)), std::string(s->column_text(1)), s->column_int(2),
                                s->column_int(3)};
        if (!has_ended(process)) continue;
        AbandonedTest test;
        store_detail::Json configuration = store_detail::Json::parse(s->column_text(4));
        test.configuration = store_detail::configuration_from_json(store_detail::Node(configuration));
        test.config_index = static_cast<std::uint64_t>(s->column_int(5));
        test.process = fmt::format("process {} on {}", process.pid, process.host);
        test.started = s->column_text(6);
        ended.emplace_back(std::move(process), std::move(test));
      }
    }
    std::vector<AbandonedTest> tests;
    for (auto& [process, test] : ended) {
      impl_->clear_running(tuning, process);
      tests.push_back(std::move(test));
    }
    transaction.commit();
    return tests;
  } catch (const sqlite::Failure& e) {
    impl_->fail(fmt::format("cannot read the running tests of tuning {}", tuning), e);
  } catch (const std::exception& e) {  // a configuration that is not valid JSON
    impl_->fail(fmt::format("corrupt running test in tuning {}", tuning), e);
  }
}

std::vector<Result> Store::results(std::int64_t tuning) const {
  try {
    // One read transaction: tests and their counters come from the same snapshot even
    // while another process appends.
    sqlite::Transaction snapshot(impl_->begin_read, impl_->commit, impl_->rollback);
    std::vector<Result> results;
    std::unordered_map<std::int64_t, std::size_t> position;  // test id -> index in results
    {
      Use s(impl_->select_tests);
      s->bind(1, tuning);
      while (s->step()) {
        Result r;
        std::int64_t id = s->column_int(0);
        r.config_index = static_cast<std::uint64_t>(s->column_int(1));
        store_detail::Json configuration = store_detail::Json::parse(s->column_text(2));
        r.configuration = store_detail::configuration_from_json(store_detail::Node(configuration));
        std::string_view status = s->column_text(3);
        auto parsed = status_from_string(status);
        if (!parsed) throw StoreError(fmt::format("test {} has unknown status '{}'", id, status));
        r.status = *parsed;
        r.message = s->column_text(4);
        r.time.repetitions = static_cast<int>(s->column_int(5));
        r.time.median_ms = s->column_double(6);
        r.time.min_ms = s->column_double(7);
        r.time.mean_ms = s->column_double(8);
        r.time.max_ms = s->column_double(9);
        r.time.stddev_ms = s->column_double(10);
        r.time.samples_ms = samples_from(s->column_blob(11));
        r.compile_ms = s->column_double(12);
        r.validation_ms = s->column_double(13);
        r.overhead_ms = s->column_double(14);
        r.profiling_ms = s->column_double(15);
        r.max_abs_error = s->column_double(16);
        if (!s->is_null(21)) {
          r.energy = EnergyStats{s->column_double(17), s->column_double(18), s->column_double(19),
                                 s->column_double(20), static_cast<int>(s->column_int(21)),
                                 s->column_double(22), s->column_double(23)};
        }
        r.device = s->column_text(24);
        r.problem_size = s->column_text(25);
        r.timestamp = s->column_text(26);
        r.profiling_passes = static_cast<int>(s->column_int(27));
        if (!s->is_null(33)) {
          r.conditions = DeviceConditions{s->column_double(28), s->column_double(29), s->column_double(30),
                                          s->column_double(31), s->column_double(32), std::string(s->column_text(33)),
                                          s->column_double(34)};
        }
        position.emplace(id, results.size());
        results.push_back(std::move(r));
      }
    }
    {
      Use c(impl_->select_counters);
      c->bind(1, tuning);
      while (c->step()) {
        results[position.at(c->column_int(0))].counters.emplace(std::string(c->column_text(1)), c->column_double(2));
      }
    }
    snapshot.commit();
    return results;
  } catch (const sqlite::Failure& e) {
    impl_->fail(fmt::format("cannot read the tests of tuning {}", tuning), e);
  } catch (const std::exception& e) {  // a configuration that is not valid JSON, an unknown status
    impl_->fail(fmt::format("corrupt test in tuning {}", tuning), e);
  }
}

std::unordered_set<std::string> Store::measured_keys(std::int64_t tuning) const {
  try {
    std::unordered_set<std::string> keys;
    Use s(impl_->select_keys);
    s->bind(1, tuning);
    while (s->step()) keys.emplace(s->column_text(0));
    return keys;
  } catch (const sqlite::Failure& e) {
    impl_->fail(fmt::format("cannot read the keys of tuning {}", tuning), e);
  }
}

std::size_t Store::count(std::int64_t tuning) const {
  try {
    Use s(impl_->count_tests);
    s->bind(1, tuning);
    s->step();
    return static_cast<std::size_t>(s->column_int(0));
  } catch (const sqlite::Failure& e) {
    impl_->fail(fmt::format("cannot count the tests of tuning {}", tuning), e);
  }
}

}  // namespace steer
