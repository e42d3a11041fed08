// The loop on several devices at once, through a replay of N simulated devices: tests go to
// free devices as the searcher proposes them and finish, on the simulated clock, in the
// order their costs say; every one is measured once and reaches the store; one device is
// the sequential loop, unchanged.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

#include "steer/recording.hpp"
#include "steer/store.hpp"
#include "steer/tuner.hpp"
#include "tuner/six_configurations.hpp"

namespace steer {
namespace {

using testing_support::Descending;
using testing_support::exact;
using testing_support::six_configurations;

struct Replayed {
  TuneSummary summary;
  std::vector<std::string> keys;
  std::vector<double> elapsed;
};

Replayed replay(const Recording& recording, std::size_t devices, TuneOptions options = {}, Store* store = nullptr) {
  ReplayExecutor executor(recording, exact(), devices);
  Descending searcher;
  Replayed run;
  options.on_test = [&](const Result& result, const TuneProgress& progress) {
    run.keys.push_back(result.key());
    run.elapsed.push_back(progress.elapsed_s);
  };
  run.summary = tune(recording.space(), executor, searcher, store, options);
  return run;
}

TEST(SeveralDevices, OneDeviceIsTheSequentialLoop) {
  Recording recording = six_configurations();
  Replayed one = replay(recording, 1);
  ReplayExecutor plain(recording, exact());
  Descending searcher;
  std::vector<double> elapsed;
  TuneOptions options;
  options.on_test = [&](const Result&, const TuneProgress& progress) { elapsed.push_back(progress.elapsed_s); };
  tune(recording.space(), plain, searcher, nullptr, options);
  EXPECT_EQ(one.elapsed, elapsed);
  EXPECT_EQ(searcher.devices, 1u) << "a searcher is told of parallelism only when there is some";
  EXPECT_EQ(one.keys, (std::vector<std::string>{"X=6", "X=5", "X=4", "X=3", "X=2", "X=1"}));
}

TEST(SeveralDevices, TestsFinishInTheOrderOfTheSimulatedClock) {
  Recording recording = six_configurations();
  // Three devices: X=6, 5, 4 start at 0 and end at 106.2, 105.2 and 100.2 ms (4 only
  // compiles); each frees its device for the next proposal: 3 ends at 100.2 + 103.2, 2 at
  // 105.2 + 102.2 and 1 at 106.2 + 101.2 (a tie with 2, which was handed out first).
  Replayed three = replay(recording, 3);
  EXPECT_EQ(three.keys, (std::vector<std::string>{"X=4", "X=5", "X=6", "X=3", "X=2", "X=1"}));
  const std::vector<double> expected{0.1002, 0.1052, 0.1062, 0.2034, 0.2074, 0.2074};
  ASSERT_EQ(three.elapsed.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(three.elapsed[i], expected[i], 1e-12) << i;
  EXPECT_NEAR(three.summary.wall_s, 0.2074, 1e-12) << "against 0.6182 s on one device";
  EXPECT_EQ(three.summary.tests, 6u);
  EXPECT_EQ(three.summary.failed, 1u);
  EXPECT_EQ(three.summary.best->key(), "X=1");
}

TEST(SeveralDevices, TheSearcherIsToldHowManyAndObservesInCompletionOrder) {
  Recording recording = six_configurations();
  ReplayExecutor executor(recording, exact(), 3);
  Descending searcher;
  tune(recording.space(), executor, searcher, nullptr, TuneOptions{});
  EXPECT_EQ(searcher.devices, 3u);
  EXPECT_EQ(searcher.observed, (std::vector<ConfigIndex>{3, 4, 5, 2, 1, 0}));
}

TEST(SeveralDevices, ATestBudgetIsExactAndRunningTestsFinishAfterATimeLimit) {
  Recording recording = six_configurations();
  TuneOptions budget;
  budget.stop.tests = 4;
  EXPECT_EQ(replay(recording, 3, budget).summary.tests, 4u) << "no proposal beyond the budget is handed out";
  TuneOptions limit;
  limit.stop.wall_seconds = 0.104;
  Replayed limited = replay(recording, 3, limit);
  // X=4 ends at 100.2 ms, and X=3 starts on its device; at 105.2 ms (X=5) the limit has
  // passed: nothing new starts, and X=6 and X=3, already running, finish.
  EXPECT_EQ(limited.keys, (std::vector<std::string>{"X=4", "X=5", "X=6", "X=3"}));
  EXPECT_EQ(limited.summary.stop_reason, "time limit reached");
}

TEST(SeveralDevices, EveryTestReachesTheStoreOnceAndAResumeServesThem) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("steer_several_devices_" + std::to_string(getpid()) + ".db");
  std::filesystem::remove(file);
  Recording recording = six_configurations();
  {
    Store store = Store::open(file);
    TuneOptions options;
    options.stop.tests = 4;
    Replayed first = replay(recording, 3, options, &store);
    EXPECT_EQ(first.summary.tests, 4u);
    EXPECT_EQ(store.count(first.summary.tuning), 4u);
  }
  Store store = Store::open(file);
  Replayed second = replay(recording, 2, TuneOptions{}, &store);
  EXPECT_EQ(second.summary.tests, 6u);
  EXPECT_EQ(second.summary.resumed, 4u) << "stored tests are served, not measured again";
  std::set<std::string> keys;
  for (const Result& result : store.results(second.summary.tuning)) keys.insert(result.key());
  EXPECT_EQ(keys.size(), 6u);
  EXPECT_EQ(store.count(second.summary.tuning), 6u) << "each configuration once";
  std::filesystem::remove(file);
  std::filesystem::remove(file.string() + "-wal");
  std::filesystem::remove(file.string() + "-shm");
}

}  // namespace
}  // namespace steer
