// A recording laid out over a space holds exactly what was recorded, and reports what was
// not; the replay executor serves it to the tuning loop.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "steer/recording.hpp"
#include "steer/tuner.hpp"

namespace steer {
namespace {

const std::filesystem::path kData = STEER_DATA_DIR "/recordings";

// Replays every recorded configuration through the executor and compares.
void expect_replays_exactly(const ImportedRecording& imported) {
  Recording recording = Recording::from_import(imported);
  ReplayExecutor executor(recording);
  std::vector<Result> merged = merge_repeated_tests(imported.results);
  EXPECT_EQ(recording.space().size(), merged.size()) << "the space is the recorded configurations";
  EXPECT_EQ(recording.present_count(), merged.size());
  for (const Result& expected : merged) {
    std::optional<ConfigIndex> config = recording.space().index_of(expected.configuration);
    ASSERT_TRUE(config) << expected.key();
    EXPECT_EQ(recording.space().key(*config), expected.key());
    std::vector<std::string> warnings;
    Result run = executor.run(*config, executor.prepare(*config).get(), RunOptions{}, warnings);
    EXPECT_EQ(run.compile_ms, expected.compile_ms);
    EXPECT_EQ(run.message, expected.message);
    EXPECT_EQ(run.status, expected.status) << expected.key();
    EXPECT_EQ(run.time.median_ms, recorded_runtime_ms(expected));
    EXPECT_EQ(run.time.samples_ms, expected.time.samples_ms);
    EXPECT_EQ(run.counters, expected.counters);
    EXPECT_EQ(recording.status(*config), expected.status);
    if (expected.ok()) {
      // The median of the timed launches, or the mean where that was the tuner's objective
      // (Kernel Tuner's "time").
      EXPECT_EQ(recording.runtime_ms(*config), recorded_runtime_ms(expected, imported.runtime));
    }
    for (std::size_t c = 0; c < recording.counter_names().size(); ++c) {
      auto value = expected.counters.find(recording.counter_names()[c]);
      if (value == expected.counters.end()) {
        EXPECT_TRUE(std::isnan(recording.counter(*config, c)));
      } else {
        EXPECT_EQ(recording.counter(*config, c), value->second);
      }
    }
  }
}

TEST(Recording, ServesTheRecordedKttValues) {
  ImportedRecording imported = import_recording(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  expect_replays_exactly(imported);
  Recording recording = Recording::from_import(imported);
  EXPECT_EQ(recording.space().size(), 210u);
  EXPECT_FALSE(recording.counter_names().empty()) << "KTT's profiling counters are replayed";
}

TEST(Recording, ServesTheRecordedKernelTunerValues) {
  ImportedRecording imported = import_recording(kData / "kerneltuner/convolution_milo_a100.kt.json.gz");
  EXPECT_EQ(imported.runtime, RuntimeStatistic::Mean) << "Kernel Tuner's objective";
  expect_replays_exactly(imported);
  EXPECT_EQ(Recording::from_import(imported).space().size(), 4362u);
}

TEST(Recording, MergesRepeatedTestsOfAConfiguration) {
  // KTT's profile-based searcher runs configurations again to profile them: 475 results.
  ImportedRecording imported = import_recording(kData / "ktt/coulomb_gtx1070.ktt.json.gz");
  expect_replays_exactly(imported);
  EXPECT_LT(Recording::from_import(imported).space().size(), imported.results.size());
}

// X in {1, 2, 3}, recorded: X=1 (ok, 2 ms), X=3 (compile error). X=2 was never recorded.
ImportedRecording gappy_recording() {
  ImportedRecording imported;
  imported.device = "Replayed GPU";
  imported.parameters = {{"X", {1, 2, 3}}};
  Result ok;
  ok.configuration = {{"X", 1}};
  ok.status = Status::Ok;
  ok.time = TimingStats::from_samples({2.0});
  ok.compile_ms = 40;
  Result broken;
  broken.configuration = {{"X", 3}};
  broken.status = Status::CompileError;
  broken.message = "error: too many registers";
  imported.results = {ok, broken};
  return imported;
}

TEST(Recording, ReportsAMissingConfigurationInsteadOfInventingOne) {
  SpaceDefinition definition;
  definition.add_parameter("X", std::vector<Value>{1, 2, 3});
  Recording recording = Recording::from_import(gappy_recording(), definition);
  ASSERT_EQ(recording.space().size(), 3u);
  EXPECT_EQ(recording.present_count(), 2u);
  EXPECT_FALSE(recording.present(1));
  EXPECT_TRUE(std::isnan(recording.runtime_ms(1)));
  EXPECT_EQ(recording.recorded(1), nullptr);

  ReplayExecutor executor(recording);
  std::vector<std::string> warnings;
  Result missing = executor.run(1, executor.prepare(1).get(), RunOptions{}, warnings);
  EXPECT_EQ(missing.status, Status::Skipped);
  EXPECT_EQ(missing.message, "not in the recording");
  EXPECT_EQ(missing.time.repetitions, 0);
  EXPECT_EQ(missing.key(), "X=2");
  EXPECT_EQ(executor.clock_s(), 0) << "a configuration that was never recorded costs nothing";

  Result broken = executor.run(2, executor.prepare(2).get(), RunOptions{}, warnings);
  EXPECT_EQ(broken.status, Status::CompileError);
  EXPECT_EQ(broken.message, "error: too many registers");
  EXPECT_EQ(executor.info().device.backend, "replay");
  EXPECT_EQ(executor.info().device.name, "Replayed GPU");
}

TEST(Recording, WithoutASpecOnlyRecordedConfigurationsAreInTheSpace) {
  Recording recording = Recording::from_import(gappy_recording());
  ASSERT_EQ(recording.space().size(), 2u);
  EXPECT_EQ(recording.space().key(0), "X=1");
  EXPECT_EQ(recording.space().key(1), "X=3");
  EXPECT_EQ(recording.best_runtime_ms(), 2.0);
}

TEST(Recording, RejectsASpaceWhoseParametersWereNotRecorded) {
  SpaceDefinition definition;
  definition.add_parameter("Y", std::vector<Value>{1, 2});
  EXPECT_THROW(Recording::from_import(gappy_recording(), definition), Error);
}

}  // namespace
}  // namespace steer
