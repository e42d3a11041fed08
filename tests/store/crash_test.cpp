// Crash safety: a writer killed with SIGKILL at an arbitrary moment loses no test it had
// committed, duplicates none, and leaves a database that passes integrity_check.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>

#include "steer/store.hpp"
#include "store_test_support.hpp"

namespace steer {
namespace {

using testing::full_result;
using testing::ScratchDir;

const TuningKey kKey{"crash", "1", "device", "replay", "N=1"};

// The child: resumes the tuning, then appends tests forever, writing each test's number
// to `report` only after append() returned, i.e. after the commit. A test reported twice
// would mean resuming failed (append keeps the first and returns false).
[[noreturn]] void append_until_killed(const std::filesystem::path& db, int report) {
  try {
    Store store = Store::open(db);
    std::int64_t tuning = store.tuning(kKey);
    auto done = store.measured_keys(tuning);
    for (int tile = 0;; ++tile) {
      Result result = full_result(tile);
      if (done.contains(result.key())) continue;
      store.append(tuning, result);
      if (write(report, &tile, sizeof tile) != sizeof tile) _exit(3);
    }
  } catch (...) {
    _exit(2);
  }
}

std::string integrity(const std::filesystem::path& file) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* statement = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &statement, nullptr);
  std::string text = sqlite3_step(statement) == SQLITE_ROW
                         ? reinterpret_cast<const char*>(sqlite3_column_text(statement, 0))
                         : sqlite3_errmsg(db);
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return text;
}

TEST(StoreCrash, KilledWriterLosesNoCommittedTest) {
  ScratchDir dir;
  const std::filesystem::path db = dir / "results.db";
  std::set<int> committed;  // every test a child reported, over all rounds
  for (int round = 0; round < 4; ++round) {
    int pipe_fds[2];
    ASSERT_EQ(pipe(pipe_fds), 0);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      close(pipe_fds[0]);
      append_until_killed(db, pipe_fds[1]);
    }
    close(pipe_fds[1]);

    // Kill it after a different number of commits each round, while it keeps appending.
    const std::size_t kill_after = 150 + 97 * static_cast<std::size_t>(round);
    std::size_t reported = 0;
    int tile = 0;
    while (reported < kill_after && read(pipe_fds[0], &tile, sizeof tile) == sizeof tile) {
      EXPECT_TRUE(committed.insert(tile).second) << "test " << tile << " appended twice";
      ++reported;
    }
    kill(child, SIGKILL);
    while (read(pipe_fds[0], &tile, sizeof tile) == sizeof tile) {  // what it reported before dying
      EXPECT_TRUE(committed.insert(tile).second) << "test " << tile << " appended twice";
    }
    close(pipe_fds[0]);
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the child ended on its own: " << status;
    ASSERT_EQ(reported, kill_after);

    EXPECT_EQ(integrity(db), "ok");
    Store store = Store::open(db);
    std::int64_t tuning = store.tuning(kKey);
    std::vector<Result> results = store.results(tuning);
    std::set<std::string> keys;
    for (const Result& result : results) EXPECT_TRUE(keys.insert(result.key()).second) << "duplicate " << result.key();
    for (int reported_tile : committed) {
      EXPECT_TRUE(keys.contains(full_result(reported_tile).key())) << "lost committed test " << reported_tile;
    }
    // Beyond the reported tests, each killed child can have committed at most one more
    // (killed between its commit and its report); resumed children skip those.
    EXPECT_LE(results.size(), committed.size() + static_cast<std::size_t>(round) + 1);
  }
}

}  // namespace
}  // namespace steer
