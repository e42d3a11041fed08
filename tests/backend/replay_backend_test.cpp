// The replay backend serves exactly what was recorded, reports what was not, and lets the
// real tuning loop run against a recording with the same outcome as the fast simulation.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "steer/eval.hpp"
#include "steer/model.hpp"
#include "steer/replay.hpp"
#include "steer/store.hpp"
#include "steer/tuner.hpp"

namespace steer {
namespace {

const std::filesystem::path kData = STEER_DATA_DIR "/recordings";

// Compiles and runs every recorded configuration through the backend and compares.
void expect_replays_exactly(const ImportedRecording& imported) {
  Recording recording = Recording::from_import(imported);
  ReplayBackend backend(recording);
  std::vector<Result> merged = merge_repeated_tests(imported.results);
  EXPECT_EQ(recording.space().size(), merged.size()) << "the space is the recorded configurations";
  EXPECT_EQ(recording.present_count(), merged.size());
  for (const Result& expected : merged) {
    std::optional<ConfigIndex> config = recording.space().index_of(expected.configuration);
    ASSERT_TRUE(config) << expected.key();
    EXPECT_EQ(recording.space().key(*config), expected.key());
    KernelInstance instance;
    instance.config_index = *config;
    if (expected.status == Status::CompileError) {
      EXPECT_THROW(backend.compile(instance), CompileError) << expected.key();
      continue;
    }
    std::unique_ptr<CompiledKernel> kernel = backend.compile(instance);
    EXPECT_EQ(kernel->compile_ms, expected.compile_ms);
    RunResult run = backend.run(*kernel, instance, RunOptions{});
    EXPECT_EQ(run.status, expected.status) << expected.key();
    EXPECT_EQ(run.time.median_ms, expected.time.median_ms);
    EXPECT_EQ(run.time.samples_ms, expected.time.samples_ms);
    EXPECT_EQ(run.counters, expected.counters);
    EXPECT_EQ(recording.status(*config), expected.status);
    if (expected.ok()) {
      EXPECT_EQ(recording.runtime_ms(*config), recorded_runtime_ms(expected));
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

TEST(ReplayBackend, ServesTheRecordedKttValues) {
  ImportedRecording imported = import_recording(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  expect_replays_exactly(imported);
  Recording recording = Recording::from_import(imported);
  EXPECT_EQ(recording.space().size(), 210u);
  EXPECT_FALSE(recording.counter_names().empty()) << "KTT's profiling counters are replayed";
}

TEST(ReplayBackend, ServesTheRecordedKernelTunerValues) {
  ImportedRecording imported = import_recording(kData / "kerneltuner/convolution_milo_a100.kt.json.gz");
  expect_replays_exactly(imported);
  EXPECT_EQ(Recording::from_import(imported).space().size(), 4362u);
}

TEST(ReplayBackend, MergesRepeatedTestsOfAConfiguration) {
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

TEST(ReplayBackend, ReportsAMissingConfigurationInsteadOfInventingOne) {
  SpaceDefinition definition;
  definition.add_parameter("X", std::vector<Value>{1, 2, 3});
  Recording recording = Recording::from_import(gappy_recording(), definition);
  ASSERT_EQ(recording.space().size(), 3u);
  EXPECT_EQ(recording.present_count(), 2u);
  EXPECT_FALSE(recording.present(1));
  EXPECT_TRUE(std::isnan(recording.runtime_ms(1)));
  EXPECT_EQ(recording.recorded(1), nullptr);

  ReplayBackend backend(recording);
  KernelInstance missing;
  missing.config_index = 1;
  std::unique_ptr<CompiledKernel> kernel = backend.compile(missing);
  RunResult run = backend.run(*kernel, missing, RunOptions{});
  EXPECT_EQ(run.status, Status::Skipped);
  EXPECT_EQ(run.message, "not in the recording");
  EXPECT_EQ(run.time.repetitions, 0);
  Result replayed = recording.replay(1);
  EXPECT_EQ(replayed.status, Status::Skipped);
  EXPECT_EQ(replayed.key(), "X=2");

  KernelInstance broken;
  broken.config_index = 2;
  try {
    backend.compile(broken);
    ADD_FAILURE() << "a recorded compile failure must fail to compile";
  } catch (const CompileError& e) {
    EXPECT_STREQ(e.what(), "error: too many registers");
  }
  EXPECT_EQ(backend.device().backend, "replay");
  EXPECT_EQ(backend.device().name, "Replayed GPU");
}

TEST(ReplayBackend, WithoutASpecOnlyRecordedConfigurationsAreInTheSpace) {
  Recording recording = Recording::from_import(gappy_recording());
  ASSERT_EQ(recording.space().size(), 2u);
  EXPECT_EQ(recording.space().key(0), "X=1");
  EXPECT_EQ(recording.space().key(1), "X=3");
  EXPECT_EQ(recording.best_runtime_ms(), 2.0);
}

TEST(ReplayBackend, RejectsASpaceWhoseParametersWereNotRecorded) {
  SpaceDefinition definition;
  definition.add_parameter("Y", std::vector<Value>{1, 2});
  EXPECT_THROW(Recording::from_import(gappy_recording(), definition), Error);
}

// A spec the loop accepts for replay: one problem size, a kernel section whose source is an
// empty file (the replay backend compiles nothing), no arguments, no validation.
class ReplaySpec {
 public:
  explicit ReplaySpec(const Space& space)
      : source_(std::filesystem::temp_directory_path() / ("steer_replay_" + std::to_string(getpid()) + ".cu")) {
    std::ofstream(source_) << "";
    spec_.name = "replay";
    for (const Parameter& parameter : space.parameters()) spec_.space.add_parameter(parameter.name, parameter.values);
    KernelSpec kernel;
    kernel.name = "replayed";
    kernel.sources[Language::Cuda] = source_;
    spec_.kernel = kernel;
    spec_.sizes.push_back(ProblemSize{.name = "recorded", .variables = {}, .flops = {}, .bytes = {}});
    spec_.default_size = "recorded";
  }
  ~ReplaySpec() { std::filesystem::remove(source_); }
  const Spec& spec() const { return spec_; }

 private:
  std::filesystem::path source_;
  Spec spec_;
};

// A counter model trained on the recording, for the searchers that need one (profile-based);
// the file is removed when the test program ends.
struct CounterModelFile {
  std::filesystem::path file;
  explicit CounterModelFile(const Recording& recording)
      : file(std::filesystem::temp_directory_path() / ("steer_replay_test_model_" + std::to_string(getpid()) + ".json")) {
    CounterModel::train(training_set(recording, "replay test"), {}).save(file);
  }
  ~CounterModelFile() { std::filesystem::remove(file); }
};

// The same searcher and seed give the same tests through steer::tune + ReplayBackend as
// through simulate_run, with the same proposal window.
void expect_loop_matches_simulation(const Recording& recording, const std::string& searcher_name, bool compile_ahead) {
  static const CounterModelFile model_file(recording);
  const std::string model = model_file.file.string();
  ReplaySpec spec(recording.space());
  ReplayBackend backend(recording);
  SimulationOptions simulation;
  simulation.budget = 300;
  simulation.ahead = compile_ahead ? 2 : 1;  // the loop's window: 2 x compile threads

  TuneOptions tune_options;
  tune_options.stop.tests = simulation.budget;
  tune_options.stop.target_ms = simulation.target * *recording.best_runtime_ms();
  tune_options.compile_ahead = compile_ahead;
  tune_options.compile_threads = 1;
  for (std::uint64_t seed : {3u, 11u, 12u}) {
    auto for_loop = make_searcher(searcher_name, SearcherOptions{.seed = seed, .model_path = model, .settings = {}});
    TuneSummary summary = tune(spec.spec(), recording.space(), backend, *for_loop, nullptr, tune_options);
    std::vector<ConfigIndex> loop_order;
    for (const Result& result : summary.results) loop_order.push_back(result.config_index);

    auto for_simulation =
        make_searcher(searcher_name, SearcherOptions{.seed = seed, .model_path = model, .settings = {}});
    SimulatedRun run = simulate_run(recording, *for_simulation, simulation);
    EXPECT_EQ(loop_order, run.tested) << searcher_name << " seed " << seed;
    EXPECT_EQ(summary.stop_reason == "target runtime reached", run.tests_to_target.has_value());
    ASSERT_TRUE(summary.best.has_value());
    EXPECT_EQ(summary.best->time.median_ms, run.improvements.back().best_ms);
  }
}

TEST(ReplayBackend, TheRealLoopAndTheSimulationTestTheSameConfigurations) {
  Recording recording = Recording::load(kData / "ktt/pnpoly_rtx2080ti.ktt.json.gz");
  for (const SearcherInfo& searcher : searchers()) {  // adaptive ones make the window matter
    if (searcher.name == "list") continue;               // needs a file; not a search
    expect_loop_matches_simulation(recording, searcher.name, false);
    expect_loop_matches_simulation(recording, searcher.name, true);
  }
}

}  // namespace
}  // namespace steer
