// Replay is the tuning loop over a recording: the same stop rules, store and resume as on a
// device, on a clock that advances by what each test cost when it was recorded.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
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

TEST(ReplayExecutor, TheClockAdvancesByWhatEachTestCost) {
  Recording recording = six_configurations();
  ReplayExecutor executor(recording, exact());
  Descending searcher;
  std::vector<double> elapsed;
  TuneOptions options;
  options.on_test = [&](const Result&, const TuneProgress& progress) { elapsed.push_back(progress.elapsed_s); };
  TuneSummary summary = tune(recording.space(), executor, searcher, nullptr, options);
  ASSERT_EQ(summary.tests, 6u);
  // X = 6, 5, then 4 (compile only), 3, 2, 1: compile 100 ms + X ms each.
  // Each also pays the typical 0.2 ms framework time (the recording holds none).
  const std::vector<double> expected{0.1062, 0.2114, 0.3116, 0.4148, 0.517, 0.6182};
  ASSERT_EQ(elapsed.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(elapsed[i], expected[i], 1e-12) << i;
  EXPECT_NEAR(summary.wall_s, 0.6182, 1e-12) << "a replay's wall time is its simulated time";
  EXPECT_EQ(summary.failed, 1u);
  EXPECT_EQ(summary.best->key(), "X=1");
  EXPECT_FALSE(summary.compiled_ahead) << "a replay compiles nothing, so it starts no compile pool";
}

// Compiles of 10, 20, 30, 50 and 60 ms for the valid X = 1, 2, 3, 5, 6, and 400 ms for X = 4,
// which failed to compile.
Recording uneven_compiles() {
  return six_configurations([](int x) { return x == 4 ? 400.0 : 10.0 * x; });
}

TEST(ReplayExecutor, EachCompileCostsItsOwnRecordedTimeOrTheMeanOfItsOutcome) {
  const Recording recording = uneven_compiles();
  CostModel cost = exact();
  const ConfigIndex one = recording.space().index_of_key("X=1");
  const ConfigIndex failed = recording.space().index_of_key("X=4");
  // The recorded compile, the typical 0.2 ms framework time and the run (X ms).
  EXPECT_NEAR(test_cost_ms(recording, one, {}, cost), 10 + 0.2 + 1, 1e-9);
  EXPECT_NEAR(test_cost_ms(recording, failed, {}, cost), 400 + 0.2, 1e-9);

  cost.compile_times = CompileTimes::Mean;
  // The valid ones' mean compile, (10 + 20 + 30 + 50 + 60) / 5 = 34 ms; the failed one's own
  // outcome has only itself.
  EXPECT_NEAR(test_cost_ms(recording, one, {}, cost), 34 + 0.2 + 1, 1e-9);
  EXPECT_NEAR(test_cost_ms(recording, failed, {}, cost), 400 + 0.2, 1e-9);

  // So the whole space costs what it cost as recorded: random search's time per test is the same.
  double recorded_total = 0, mean_total = 0;
  CostModel recorded = exact();
  for (ConfigIndex c = 0; c < recording.space().size(); ++c) {
    recorded_total += test_cost_ms(recording, c, {}, recorded);
    mean_total += test_cost_ms(recording, c, {}, cost);
  }
  EXPECT_NEAR(mean_total, recorded_total, 1e-9);

  // The replay's clock charges the same.
  ReplayExecutor executor(recording, cost);
  Descending searcher;
  std::vector<double> elapsed;
  TuneOptions options;
  options.on_test = [&](const Result& result, const TuneProgress& progress) {
    elapsed.push_back(progress.elapsed_s);
    // What the searcher sees is what was charged.
    EXPECT_DOUBLE_EQ(result.compile_ms, result.ok() ? 34 : 400) << result.key();
  };
  tune(recording.space(), executor, searcher, nullptr, options);
  ASSERT_EQ(elapsed.size(), 6u);
  EXPECT_NEAR(elapsed.front(), (34 + 0.2 + 6) / 1e3, 1e-12) << "X = 6 first, at the mean compile";
}

TEST(ReplayExecutor, EnablingTheProfilerIsChargedWhereTheWorkerEnablesIt) {
  // The worker keeps the profiler enabled from one profiled test to the next and releases it
  // for an energy window or a test without counters (docs/energy.md).
  Recording recording = six_configurations();
  CostModel cost = exact();
  cost.profiler_enable_ms = 140;
  ReplayExecutor executor(recording, cost);
  executor.start(RunOptions{});
  RunOptions plain, profiled, profiled_with_energy;
  profiled.measure.counters = true;
  profiled_with_energy.measure = profiled.measure;
  profiled_with_energy.measure.energy = true;
  const ConfigIndex config = recording.space().index_of_key("X=2");
  const ConfigIndex not_compiled = recording.space().index_of_key("X=4");
  std::vector<std::string> warnings;
  const auto charged_ms = [&](ConfigIndex c, const RunOptions& run) {
    const double before = executor.clock_s();
    executor.run(c, nullptr, run, warnings);
    return (executor.clock_s() - before) * 1e3;
  };
  const auto cost_ms = [&](const RunOptions& run) { return test_cost_ms(recording, config, run.measure, cost); };
  EXPECT_NEAR(charged_ms(config, profiled), cost_ms(profiled) + 140, 1e-9) << "the first profiled test enables it";
  EXPECT_NEAR(charged_ms(config, profiled), cost_ms(profiled), 1e-9) << "the next finds it enabled";
  EXPECT_NEAR(charged_ms(not_compiled, plain), test_cost_ms(recording, not_compiled, plain.measure, cost), 1e-9);
  EXPECT_NEAR(charged_ms(config, profiled), cost_ms(profiled), 1e-9) << "a test that never launched changes nothing";
  EXPECT_NEAR(charged_ms(config, plain), cost_ms(plain), 1e-9);
  EXPECT_NEAR(charged_ms(config, profiled), cost_ms(profiled) + 140, 1e-9) << "a test without counters released it";
  EXPECT_NEAR(charged_ms(config, profiled_with_energy), cost_ms(profiled_with_energy) + 140, 1e-9)
      << "energy is measured with the profiler released, so every profiled test with energy enables it";
  EXPECT_NEAR(charged_ms(config, profiled_with_energy), cost_ms(profiled_with_energy) + 140, 1e-9);
}

// Elapsed seconds after each test of a replay of six_configurations with `threads`
// modelled compiler threads and the loop asking for `window` proposals at a time.
std::vector<double> elapsed_with(int threads, std::size_t window) {
  Recording recording = six_configurations();
  CostModel cost = exact();
  cost.compile_threads = threads;
  ReplayExecutor executor(recording, cost);
  Descending searcher;
  std::vector<double> elapsed;
  TuneOptions options;
  options.window = window;
  options.on_test = [&](const Result&, const TuneProgress& progress) { elapsed.push_back(progress.elapsed_s); };
  tune(recording.space(), executor, searcher, nullptr, options);
  return elapsed;
}

void expect_elapsed(const std::vector<double>& elapsed, const std::vector<double>& expected) {
  ASSERT_EQ(elapsed.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(elapsed[i], expected[i], 1e-12) << i;
}

TEST(ReplayExecutor, CompilesRunAheadOnTheModelledThreadsAsTheLoopsPoolDoes) {
  // All six are taken in at 0 s. Three threads compile X = 6, 5, 4 until 100 ms and
  // X = 3, 2, 1 until 200 ms; each test runs once the device is free and its compile done.
  expect_elapsed(elapsed_with(3, 6), {0.1062, 0.1114, 0.1116, 0.2032, 0.2054, 0.2066});
}

TEST(ReplayExecutor, OneCompilerThreadHidesOnlyTheRunsBehindTheCompiles) {
  // Two pending at a time: each compile starts when the one before it ends, and each run
  // overlaps the next compile.
  expect_elapsed(elapsed_with(1, 2), {0.1062, 0.2052, 0.3002, 0.4032, 0.5022, 0.6012});
}

TEST(ReplayExecutor, ProposalsOneAtATimeOrNoCompilerThreadsChargeEachCompileInline) {
  const std::vector<double> inline_compiles{0.1062, 0.2114, 0.3116, 0.4148, 0.517, 0.6182};
  expect_elapsed(elapsed_with(7, 1), inline_compiles);
  expect_elapsed(elapsed_with(0, 6), inline_compiles);
}

// Elapsed seconds after each test of a replay of six_configurations by a searcher that
// proposes one at a time and guesses what it proposes next, with `threads` modelled
// compile streams and at most `guesses` guesses at a time.
std::vector<double> elapsed_guessing(int threads, std::size_t guesses, bool guess_wrong, TuneSummary* summary = nullptr,
                                     std::size_t* asked = nullptr) {
  Recording recording = six_configurations();
  CostModel cost = exact();
  cost.compile_threads = threads;
  ReplayExecutor executor(recording, cost);
  testing_support::DescendingOneAtATime searcher(guess_wrong);
  std::vector<double> elapsed;
  TuneOptions options;
  options.window = 6;
  options.guesses = guesses;
  options.on_test = [&](const Result&, const TuneProgress& progress) { elapsed.push_back(progress.elapsed_s); };
  TuneSummary result = tune(recording.space(), executor, searcher, nullptr, options);
  EXPECT_EQ(searcher.observed, (std::vector<ConfigIndex>{5, 4, 3, 2, 1, 0})) << "guesses change no test";
  if (summary) *summary = result;
  if (asked) *asked = searcher.guesses_asked;
  return elapsed;
}

TEST(ReplayExecutor, GuessesCompileOnIdleStreamsWhileOneTestAtATimeIsChosen) {
  // Three streams, one kept free for the next proposal. At 0 s X = 6 compiles on the first
  // and the guess X = 5 on the second, both until 100 ms, so X = 5 runs straight after X = 6.
  // Then X = 4 and 3 compile from 106.2 ms, while X = 5 runs; X = 4, which failed to compile,
  // ends at 206.4 ms; X = 2 and 1 compile from then until 306.4 ms.
  TuneSummary summary;
  expect_elapsed(elapsed_guessing(3, 7, false, &summary), {0.1062, 0.1114, 0.2064, 0.2096, 0.3086, 0.3098});
  EXPECT_EQ(summary.guessed, 5u);
  EXPECT_EQ(summary.guesses_tested, 5u);
}

TEST(ReplayExecutor, AWrongGuessDelaysNoTest) {
  // X = 1 is guessed at 0 s on an idle stream; the others compile one at a time as unguessed,
  // and X = 1, proposed last, has long been compiled.
  TuneSummary summary;
  expect_elapsed(elapsed_guessing(3, 7, true, &summary), {0.1062, 0.2114, 0.3116, 0.4148, 0.517, 0.5182});
  EXPECT_EQ(summary.guessed, 1u);
  EXPECT_EQ(summary.guesses_tested, 1u);
}

TEST(ReplayExecutor, NoGuessIsAskedForWithOneStreamOrWhenTurnedOff) {
  const std::vector<double> one_at_a_time{0.1062, 0.2114, 0.3116, 0.4148, 0.517, 0.6182};
  std::size_t asked = 1;
  expect_elapsed(elapsed_guessing(1, 7, false, nullptr, &asked), one_at_a_time);
  EXPECT_EQ(asked, 0u) << "one stream: the proposal's compile takes it";
  expect_elapsed(elapsed_guessing(3, 0, false, nullptr, &asked), one_at_a_time);
  EXPECT_EQ(asked, 0u);
}

TEST(ReplayExecutor, ATimeLimitIsOnTheSimulatedClock) {
  Recording recording = six_configurations();
  ReplayExecutor executor(recording, exact());
  Descending searcher;
  TuneOptions options;
  options.stop.wall_seconds = 0.3;
  TuneSummary summary = tune(recording.space(), executor, searcher, nullptr, options);
  EXPECT_EQ(summary.tests, 3u) << "0.311 s after the third test";
  EXPECT_EQ(summary.stop_reason, "time limit reached");
}

TEST(ReplayExecutor, CountersAskedForAreChargedNotInvented) {
  Recording recording = six_configurations();
  CostModel cost;  // 5 passes, 12.5 ms of overhead each
  cost.charge_searcher = false;
  ReplayExecutor executor(recording, cost);
  RunOptions run;
  run.measure.counters = true;
  std::vector<std::string> warnings;
  Result result = executor.run(0, executor.prepare(0).get(), run, warnings);
  EXPECT_TRUE(result.counters.empty()) << "none were recorded";
  // and the first profiled test enables the profiler
  EXPECT_DOUBLE_EQ(executor.clock_s() * 1e3, 100 + 0.2 + 1 + 5 * (1 + 12.5) + cost.profiler_enable_ms);
}

TEST(ReplayExecutor, AReplayIntoAStoreResumesLikeADeviceRun) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("steer_replay_store_" + std::to_string(getpid()) + ".db");
  std::filesystem::remove(file);
  Recording recording = six_configurations();
  {
    Store store = Store::open(file);
    ReplayExecutor executor(recording, exact());
    Descending searcher;
    TuneOptions options;
    options.stop.tests = 4;
    TuneSummary first = tune(recording.space(), executor, searcher, &store, options);
    EXPECT_EQ(first.tests, 4u);
    EXPECT_EQ(first.resumed, 0u);
  }
  Store store = Store::open(file);
  ReplayExecutor executor(recording, exact());
  Descending searcher;
  TuneSummary second = tune(recording.space(), executor, searcher, &store, TuneOptions{});
  EXPECT_EQ(second.tests, 6u);
  EXPECT_EQ(second.resumed, 4u) << "the stored tests are served, not replayed again";
  EXPECT_NEAR(executor.clock_s(), 0.1022 + 0.1012, 1e-12) << "only X=2 and X=1 cost time";
  ASSERT_EQ(store.tunings().size(), 1u);
  EXPECT_EQ(store.tunings()[0].second.backend, "replay");
  EXPECT_EQ(store.tunings()[0].second.device, "Recorded GPU");
  std::filesystem::remove(file);
  std::filesystem::remove(file.string() + "-wal");
  std::filesystem::remove(file.string() + "-shm");
}

}  // namespace
}  // namespace steer
