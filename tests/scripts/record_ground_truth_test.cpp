// scripts/record-ground-truth without a GPU: a fake steer stands in for the real one, and
// "measures" a configuration by copying its test from a real recording (data/h200/coulomb_h200,
// 210 configurations, all with counters). Checked: arguments refused before anything runs,
// the steer commands of one and of several GPUs, and that splitting a space across GPUs and
// merging the parts keeps every measurement the store had.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "script_test.hpp"

namespace {

namespace fs = std::filesystem;
using steer::test_support::read_file;
using ::testing::HasSubstr;
using ::testing::Not;

// `steer space SPEC --list|--count` lists $FAKE_TRUTH's configurations; `steer tune ... --db DB`
// copies the tests it is asked for from $FAKE_TRUTH into DB (creating DB as steer would): those of
// `--set file=LIST`, else the first --budget (all without one). With --counters the counters
// come along; with --objective the tests get 1.5 J. Each call is logged to $FAKE_STEER_LOG with
// its GPU (CUDA_VISIBLE_DEVICES) and, for a list, how many configurations it names.
constexpr const char* kFakeSteer = R"py(#!/usr/bin/env python3
import json, os, sqlite3, sys
args = sys.argv[1:]
truth = os.environ["FAKE_TRUTH"]
source = sqlite3.connect(truth)
keys = [k for (k,) in source.execute("select config_key from tests order by config_index")]
listing = next((a[5:] for a in args if a.startswith("file=")), None)
wanted = [l.strip() for l in open(listing) if l.strip() and not l.startswith("#")] if listing else None
with open(os.environ["FAKE_STEER_LOG"], "a") as log:
    log.write("gpu=%s listed=%s %s\n" % (os.environ.get("CUDA_VISIBLE_DEVICES", "-"),
                                          len(wanted) if wanted is not None else "-", " ".join(args)))
if args[0] == "space":
    if "--list" in args:
        print(",".join(item.split("=")[0] for item in keys[0].split(",")))
        for k in keys: print(",".join(item.split("=")[1] for item in k.split(",")))
    else:
        print(json.dumps({"count": len(keys)}))
    sys.exit(0)
con = sqlite3.connect(args[args.index("--db") + 1])
con.execute("attach ? as truth", (truth,))
if not con.execute("select 1 from main.sqlite_master where name = 'tests'").fetchone():
    for (sql,) in source.execute("select sql from sqlite_master where type in ('table', 'view') "
                                 "and name not like 'sqlite_%' and name != 'steer_recording'"):
        con.execute(sql)
    con.execute("insert into main.tunings select * from truth.tunings")
if wanted is None:
    wanted = keys[:int(args[args.index("--budget") + 1])] if "--budget" in args else keys
energy = "--objective" in args
columns = [r[1] for r in con.execute("pragma main.table_info(tests)") if r[1] not in ("id", "sequence")]
for key in wanted:
    have = con.execute("select id, energy_joules_per_launch from main.tests where config_key = ?", (key,)).fetchone()
    if have and (have[1] is not None or not energy):
        continue
    if not have:
        sequence = con.execute("select coalesce(max(sequence), -1) + 1 from main.tests").fetchone()[0]
        old = con.execute("select id from truth.tests where config_key = ?", (key,)).fetchone()[0]
        new = con.execute(f"insert into main.tests (sequence, {', '.join(columns)}) select ?, {', '.join(columns)} "
                          "from truth.tests where id = ?", (sequence, old)).lastrowid
        con.execute("update main.tests set energy_joules_per_launch = null where id = ?", (new,))
        if "--counters" in args:
            con.execute("insert into main.counters select ?, name, value from truth.counters where test_id = ?", (new, old))
        have = (new, None)
    if energy:
        con.execute("update main.tests set energy_joules_per_launch = 1.5, energy_window_s = 0.5 where id = ?", (have[0],))
con.commit()
print(json.dumps({"tests": len(wanted)}))
)py";

// `pattern` with its one %s replaced by `value`.
std::string fmt(const std::string& pattern, const std::string& value) {
  std::string text = pattern;
  text.replace(text.find("%s"), 2, value);
  return text;
}

class RecordGroundTruth : public steer::test_support::ScriptTest {
 protected:
  void SetUp() override {
    ScriptTest::SetUp();
    write_fake_steer(kFakeSteer);
    shell("gunzip -c '" STEER_SOURCE_DIR "/data/h200/coulomb_h200.db.gz' > truth.db");
  }

  void shell(const std::string& command) {
    const std::string line = "cd '" + dir_.string() + "' && " + command;
    ASSERT_EQ(std::system(line.c_str()), 0) << line;
  }

  // Runs the tool in the scratch folder with the fake steer; returns what it printed.
  std::string run(const std::string& arguments, int expected_exit = 0) {
    return run_in_scratch("env FAKE_TRUTH=truth.db FAKE_STEER_LOG=steer.log '" STEER_SOURCE_DIR
                          "/scripts/record-ground-truth' " + arguments,
                          arguments, expected_exit);
  }
  std::string record(const std::string& options, int expected_exit = 0) {
    return run("record '" STEER_SOURCE_DIR "/kernels/coulomb/spec.json' --steer ./steer " + options, expected_exit);
  }

  // A store of the truth's tuning: the truth with `sql` run on it, gzipped unless `db` ends in .db.
  void make_store(const std::string& db, const std::string& sql) {
    const std::string plain = db.size() > 3 && db.substr(db.size() - 3) == ".gz" ? db.substr(0, db.size() - 3) : db;
    shell("cp truth.db '" + plain + "'");
    execute(plain, sql);
    if (plain != db) shell("gzip '" + plain + "'");
  }
  void execute(const std::string& db, const std::string& sql) {
    sqlite3* handle = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ / db).c_str(), &handle), SQLITE_OK);
    char* error = nullptr;
    const int status = sqlite3_exec(handle, sql.c_str(), nullptr, nullptr, &error);
    const std::string message = error ? error : "";
    sqlite3_free(error);
    sqlite3_close(handle);
    ASSERT_EQ(status, SQLITE_OK) << sql << ": " << message;
  }
  // The first column of the first row of `sql` on a store (gunzipped first when it ends in .gz).
  std::string query(const std::string& store, const std::string& sql) {
    std::string db = store;
    if (store.size() > 3 && store.substr(store.size() - 3) == ".gz") {
      db = "query.db";
      shell("gunzip -c '" + store + "' > query.db");
    }
    sqlite3* handle = nullptr;
    std::string value;
    if (sqlite3_open_v2((dir_ / db).c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
      sqlite3_stmt* statement = nullptr;
      if (sqlite3_prepare_v2(handle, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK &&
          sqlite3_step(statement) == SQLITE_ROW && sqlite3_column_text(statement, 0)) {
        value = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
      }
      sqlite3_finalize(statement);
    }
    sqlite3_close(handle);
    return value;
  }
  std::string steer_log() { return read_file(dir_ / "steer.log"); }
};

// Half of coulomb's configurations (even config_index dropped), without energy.
constexpr const char* kHalf =
    "delete from counters where test_id in (select id from tests where config_index % 2 = 0);"
    "delete from tests where config_index % 2 = 0;"
    "update tests set energy_joules_per_launch = null, energy_window_s = null;";

TEST_F(RecordGroundTruth, RefusesBadArgumentsBeforeMeasuring) {
  EXPECT_THAT(run("record no/such/spec.json --steer ./steer --db x.db", 1), HasSubstr("no spec no/such/spec.json"));
  EXPECT_THAT(record("--db x.db --gpus 0,,1", 1), HasSubstr("--gpus 0,,1"));
  EXPECT_THAT(record("--db x.db --gpus 1,1", 1), HasSubstr("distinct GPU indices"));
  EXPECT_THAT(record("--db x.sqlite", 1), HasSubstr("a store is NAME.db or NAME.db.gz"));
  EXPECT_THAT(record("--db x.db --energy-band 0.9", 2), HasSubstr("at least 1"));
  EXPECT_THAT(record("--db x.db --sample 0", 2), HasSubstr("positive"));
  EXPECT_THAT(run("record '" STEER_SOURCE_DIR "/kernels/coulomb/spec.json' --db x.db --steer ./no-steer", 1),
              HasSubstr("no steer at './no-steer'"));
  EXPECT_FALSE(fs::exists(dir_ / "steer.log")) << steer_log();
  EXPECT_FALSE(fs::exists(dir_ / "x.db"));
}

TEST_F(RecordGroundTruth, OneGpuRecordsInTheSeededOrderThenTheNearBestBand) {
  make_store("store.db.gz", kHalf);
  const std::string output = record("--db store.db.gz --sample 150 --counters default --energy-band 1.2");
  const std::string log = steer_log();
  EXPECT_THAT(log, HasSubstr("gpu=- listed=- tune"));
  EXPECT_THAT(log, HasSubstr("--searcher random --seed 1 --budget 150 --counters default"));
  EXPECT_THAT(log, HasSubstr("--tuning 1")) << "a store of schema 2 is continued by naming its tuning";
  EXPECT_THAT(log, HasSubstr("--max-test-relative 0")) << "every configuration timed alike, whatever ran before it";
  EXPECT_THAT(log, HasSubstr("--searcher list --set file=store.db.list --objective energy --energy-window 0.5"));
  // Every configuration within 1.2x of the best stored time got energy.
  EXPECT_EQ(query("store.db.gz",
                  "select count(*) from tests where status = 'ok' and energy_joules_per_launch is null and median_ms "
                  "<= 1.2 * (select min(median_ms) from tests where status = 'ok')"),
            "0");
  EXPECT_EQ(query("store.db.gz", "select value from steer_recording where key = 'profiler_range'"), "kernel");
  EXPECT_FALSE(fs::exists(dir_ / "store.db")) << "the work copy is compressed back into the store";
  const std::string summary = read_file(dir_ / "store.json");
  EXPECT_THAT(summary, HasSubstr("\"space\": 210"));
  EXPECT_THAT(summary, HasSubstr("\"tool\": \"record-ground-truth\""));
  EXPECT_THAT(output, HasSubstr("summary store.json"));
}

TEST_F(RecordGroundTruth, SplitsWhatTheStoreLacksAcrossGpusAndKeepsWhatItHad) {
  make_store("store.db.gz", kHalf);
  const std::string kept = "select id || ':' || sequence || ':' || median_ms from tests where config_index = 1";
  const std::string before = query("store.db.gz", kept);
  record("--db store.db.gz --gpus 0,1 --counters default");
  const std::string log = steer_log();
  EXPECT_THAT(log, HasSubstr("gpu=0 listed=53 tune"));
  EXPECT_THAT(log, HasSubstr("gpu=1 listed=52 tune"));
  EXPECT_THAT(log, HasSubstr("--compile-threads"));
  EXPECT_EQ(query("store.db.gz", "select count(*) || '/' || count(distinct config_key) from tests"), "210/210");
  EXPECT_EQ(query("store.db.gz", "select count(distinct test_id) from counters"), "210");
  EXPECT_EQ(query("store.db.gz", kept), before) << "a stored test is never measured again";
  for (const char* left : {"store.db", "store.db.part1.db", "store.db.part2.db", "store.db.part1.list"}) {
    EXPECT_FALSE(fs::exists(dir_ / left)) << left;
  }
  EXPECT_THAT(read_file(dir_ / "store.json"), HasSubstr("\"recorded\": 210"));
}

TEST_F(RecordGroundTruth, AnInterruptedRunIsTakenOver) {
  // What an interrupted run leaves: the uncompressed work copy and a part with 10 more tests.
  make_store("store.db.gz", kHalf);
  make_store("store.db", kHalf);
  make_store("store.db.part1.db",
             "delete from counters where test_id in (select id from tests where config_index % 2 = 1 or config_index >= 20);"
             "delete from tests where config_index % 2 = 1 or config_index >= 20;");
  const std::string output = record("--db store.db.gz --gpus 0,1");
  EXPECT_THAT(output, HasSubstr("merged store.db.part1.db: 10 tests appended"));
  EXPECT_THAT(steer_log(), HasSubstr("gpu=0 listed=48 tune"));
  EXPECT_THAT(steer_log(), HasSubstr("gpu=1 listed=47 tune"));
  EXPECT_EQ(query("store.db.gz", "select count(distinct config_key) from tests"), "210");
}

TEST_F(RecordGroundTruth, MergeAddsEnergyAndCountersButNeverReplacesAMeasurement) {
  // The store: configuration 0 without energy, 1 without counters, 2 as recorded.
  make_store("target.db",
             "update tests set energy_joules_per_launch = null where config_index = 0;"
             "delete from counters where test_id = (select id from tests where config_index = 1);");
  // The part: 0 with energy, 1 timed again with counters, 2 failed, 3 timed again without anything new.
  make_store("part.db",
             "delete from counters where test_id in (select id from tests where config_index > 3);"
             "delete from tests where config_index > 3;"
             "update tests set energy_joules_per_launch = 9.5, median_ms = median_ms + 1 where config_index = 0;"
             "update tests set median_ms = median_ms + 1 where config_index in (1, 3);"
             "update tests set status = 'launch_error' where config_index = 2;");
  const std::string counters_of_0 =
      "select count(*) from counters where test_id = (select id from tests where config_index = 0)";
  const std::string counted = query("target.db", counters_of_0);
  const std::string times = "select group_concat(median_ms) from (select median_ms from tests where config_index in (2, 3) order by config_index)";
  const std::string untouched = query("target.db", times);
  EXPECT_THAT(run("merge target.db part.db"), HasSubstr("0 appended, 2 replaced"));
  EXPECT_EQ(query("target.db", "select energy_joules_per_launch from tests where config_index = 0"), "9.5");
  EXPECT_EQ(query("target.db", counters_of_0), counted) << "energy added to a test keeps its counters";
  EXPECT_NE(query("target.db", "select count(*) from counters where test_id = (select id from tests where config_index = 1)"),
            "0");
  EXPECT_EQ(query("target.db", times), untouched);
  EXPECT_EQ(query("target.db", "select count(*) from tests"), "210");
}

TEST_F(RecordGroundTruth, MergeRefusesAnotherTuningOrProfilerRange) {
  make_store("target.db", "");
  shell("gunzip -c '" STEER_SOURCE_DIR "/data/h200/gemm_cube128.db.gz' > other.db");
  EXPECT_THAT(run("merge target.db other.db", 1), HasSubstr("holds another tuning"));
  make_store("user.db", "delete from steer_recording; insert into steer_recording values ('profiler_range', 'user');");
  EXPECT_THAT(run("merge target.db user.db", 1), HasSubstr("one store must not mix them"));
  EXPECT_THAT(record("--db user.db --counters default", 1), HasSubstr("measured with the user profiler range"));
  EXPECT_EQ(query("target.db", "select count(*) from tests"), "210");
}

TEST_F(RecordGroundTruth, MergeJoinsAStoreOfSchema2AndAPartOfTheSameTuningWrittenSince) {
  // A part as steer tune writes it since schema 3: the spec's content hash and a content key.
  constexpr const char* kKeyed =
      "delete from counters where test_id in (select id from tests where config_index % 2 = 1);"
      "delete from tests where config_index % 2 = 1;"
      "alter table tunings add column content_key text not null default '';"
      "update tunings set spec_hash = '%s', content_key = 'k1';";
  make_store("target.db", kHalf);
  make_store("part.db", fmt(kKeyed, "0123456789abcdef0123456789abcdef"));
  EXPECT_THAT(run("merge target.db part.db"), Not(HasSubstr("error")));
  EXPECT_EQ(query("target.db", "select count(*) from tests"), "210");
  // Two parts that both have content keys must agree on the spec's content.
  make_store("keyed.db", fmt(kKeyed, "ffffffffffffffffffffffffffffffff"));
  make_store("other.db", fmt(kKeyed, "0123456789abcdef0123456789abcdef"));
  EXPECT_THAT(run("merge keyed.db other.db", 1), HasSubstr("holds another tuning"));
}

TEST_F(RecordGroundTruth, SummaryPrintsOneRowPerStore) {
  const std::string output = run("summary '" STEER_SOURCE_DIR "/data/h200/coulomb_h200.db.gz' --steer ./steer");
  EXPECT_THAT(output, HasSubstr("| coulomb_h200 | h200 | 210 | 210 | 210 | 210 | 45 (45) | kernel | 4.478 ms |"));
  EXPECT_THAT(output, Not(HasSubstr("error")));
}

}  // namespace
