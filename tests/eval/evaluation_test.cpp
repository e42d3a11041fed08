// Simulated tuning: statistics checked by hand on a six-configuration recording, the costs
// of tests, determinism under any thread count, and the errors.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <functional>

#include "steer/error.hpp"
#include "steer/eval.hpp"
#include "steer/model.hpp"

namespace steer {
namespace {

// X = 1..6, each compiled in 100 ms. Runtimes (ms): 5, compile error, 8, 1.05, 1, 2.
// Best 1 ms (X=5); with target 1.1 the well-performing ones are X=4 (1.05) and X=5 (1).
Recording six_configurations() {
  ImportedRecording imported;
  imported.device = "Hand-made GPU";
  imported.kernel = "six";
  imported.parameters = {{"X", {1, 2, 3, 4, 5, 6}}};
  const double runtimes[] = {5, NAN, 8, 1.05, 1, 2};
  for (int x = 1; x <= 6; ++x) {
    Result result;
    result.configuration = {{"X", x}};
    result.compile_ms = 100;
    double runtime = runtimes[x - 1];
    if (std::isnan(runtime)) {
      result.status = Status::CompileError;
      result.message = "error";
    } else {
      result.status = Status::Ok;
      result.time = TimingStats::from_samples({runtime});
    }
    imported.results.push_back(result);
  }
  return Recording::from_import(imported);
}

// The searchers' own computation is measured and charged to the simulated clock; these
// tests check the arithmetic of the recorded costs, so they leave it out, and charge each
// compile before its test (no compiles ahead) unless they say otherwise.
EvaluationOptions options_with(std::uint64_t runs) {
  EvaluationOptions options;
  options.runs = runs;
  options.simulation.cost.charge_searcher = false;
  options.simulation.cost.compile_threads = 0;
  return options;
}

TEST(Evaluation, ExhaustiveSearchOnSixConfigurationsMatchesTheArithmetic) {
  Recording recording = six_configurations();
  Evaluation e = evaluate(recording, {"exhaustive"}, options_with(20));
  EXPECT_EQ(e.best_ms, 1.0);
  EXPECT_DOUBLE_EQ(e.target_ms, 1.1);
  EXPECT_EQ(e.configs, 6u);
  EXPECT_EQ(e.valid, 5u);
  ASSERT_EQ(e.searchers.size(), 1u);
  const SearcherEvaluation& exhaustive = e.searchers[0];
  // Index order X=1, 2, 3, 4: X=4 (1.05 <= 1.1) is the 4th test, in every run.
  EXPECT_EQ(exhaustive.runs, 20u);
  EXPECT_EQ(exhaustive.failed_runs, 0u);
  EXPECT_EQ(exhaustive.mean_tests, 4);
  EXPECT_EQ(exhaustive.median_tests, 4);
  EXPECT_EQ(exhaustive.p90_tests, 4);
  // 4 compiles x 100 ms + 4 x 0.2 ms typical framework time + runs of X=1, 3, 4 (X=2 never
  // ran): 400 + 0.8 + 5 + 8 + 1.05 = 414.85 ms.
  EXPECT_NEAR(exhaustive.mean_time_s, 0.41485, 1e-12);
  // Best so far after tests 1..4: 5, 5 (compile error), 5 (8 is slower), 1.05; no spread.
  ASSERT_EQ(exhaustive.by_test.size(), 4u);
  const double best_after[] = {5, 5, 5, 1.05};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(exhaustive.by_test[i].x, static_cast<double>(i + 1));
    EXPECT_EQ(exhaustive.by_test[i].runs_with_valid, 20u);
    EXPECT_DOUBLE_EQ(exhaustive.by_test[i].mean_best_ms, best_after[i]);
    EXPECT_EQ(exhaustive.by_test[i].std_best_ms, 0);
  }
  // Time axis: 0 s (nothing tested yet) up to 0.41485 s, where 1.05 was found.
  EXPECT_EQ(exhaustive.by_time.front().runs_with_valid, 0u);
  EXPECT_DOUBLE_EQ(exhaustive.by_time.back().x, 0.41485);
  EXPECT_DOUBLE_EQ(exhaustive.by_time.back().mean_best_ms, 1.05);
  ASSERT_TRUE(exhaustive.ratio_to_random.has_value()) << "random search runs as the baseline";
}

TEST(Evaluation, CompilesAheadOverlapAsTheLoopsPoolOverlapsThem) {
  EvaluationOptions options = options_with(5);
  options.simulation.cost.compile_threads = 7;  // a window of 14
  const SearcherEvaluation exhaustive = evaluate(six_configurations(), {"exhaustive"}, options).searchers[0];
  // All six proposals compile side by side until 100 ms; then the runs of X=1, 3, 4 and the
  // framework time of four tests: 100 + 5 + 8 + 1.05 + 0.8 = 114.85 ms.
  EXPECT_EQ(exhaustive.mean_tests, 4);
  EXPECT_NEAR(exhaustive.mean_time_s, 0.11485, 1e-12);
  // The window alone changes nothing when every compile is charged inline.
  options.simulation.cost.compile_threads = 0;
  options.simulation.ahead = 14;
  EXPECT_NEAR(evaluate(six_configurations(), {"exhaustive"}, options).searchers[0].mean_time_s, 0.41485, 1e-12);
}

// A model carries its training recording's runtimes, which guided transfers as a source; a
// replay of those very measurements or of part of them (a model trained on the recording
// replayed) must not hand them over: they are the answers.
TEST(Evaluation, AModelTrainedOnTheReplayedRecordingLendsNoRuntimes) {
  const std::filesystem::path data = STEER_DATA_DIR "/recordings/ktt";
  auto routes = [&](const std::string& trained_on, const std::string& source, bool part = false) {
    const std::filesystem::path model = std::filesystem::temp_directory_path() /
                                        ("steer_evaluation_test_" + std::to_string(getpid()) + ".json");
    const Recording training = Recording::load(data / trained_on);
    CounterModel::train(training_set(training, trained_on), {.kind = ModelKind::Tree}).save(model);
    EvaluationOptions options = options_with(3);
    options.keep_routes = true;
    options.model_path = model.string();
    if (!source.empty()) options.settings["guided.source"] = source;
    // A part of the recording, as a replay over the configurations with energy is.
    ImportedRecording imported = import_recording(data / "coulomb_rtx2080.ktt.json.gz");
    if (part) imported.results.resize(imported.results.size() / 2);
    const Recording replayed = Recording::from_import(imported);
    const Evaluation e = evaluate(replayed, {"guided"}, options);
    std::filesystem::remove(model);
    std::vector<std::vector<ConfigIndex>> out;
    for (const RunSummary& run : e.searchers[0].per_run) out.push_back(run.tested);
    return out;
  };
  EXPECT_EQ(routes("coulomb_rtx2080.ktt.json.gz", ""), routes("coulomb_rtx2080.ktt.json.gz", "none"));
  EXPECT_EQ(routes("coulomb_rtx2080.ktt.json.gz", "", true), routes("coulomb_rtx2080.ktt.json.gz", "none", true))
      << "a replay of part of the model's measurements";
  EXPECT_NE(routes("coulomb_gtx1070.ktt.json.gz", ""), routes("coulomb_gtx1070.ktt.json.gz", "none"))
      << "another GPU's runtimes are a source";
}

TEST(Evaluation, KeepsEachRunsRouteOnlyWhenAsked) {
  Recording recording = six_configurations();
  EvaluationOptions options = options_with(3);
  Evaluation plain = evaluate(recording, {"exhaustive"}, options);
  ASSERT_EQ(plain.searchers[0].per_run.size(), 3u);
  EXPECT_TRUE(plain.searchers[0].per_run[0].tested.empty()) << "routes are the bulk: not kept by default";

  options.keep_routes = true;
  Evaluation traced = evaluate(recording, {"exhaustive"}, options);
  for (const RunSummary& run : traced.searchers[0].per_run) {
    // Index order up to X=4, the first well-performing one; exhaustive search never profiles.
    EXPECT_EQ(run.tested, (std::vector<ConfigIndex>{0, 1, 2, 3}));
    EXPECT_EQ(run.with_counters, std::vector<bool>(4, false));
    EXPECT_EQ(run.tests, run.tested.size());
  }
}

TEST(Evaluation, ARunThatSpendsItsBudgetFails) {
  EvaluationOptions options = options_with(10);
  options.simulation.budget = 3;  // exhaustive needs 4
  Evaluation e = evaluate(six_configurations(), {"exhaustive"}, options);
  EXPECT_EQ(e.searchers[0].failed_runs, 10u);
  EXPECT_TRUE(std::isnan(e.searchers[0].mean_tests));
  EXPECT_FALSE(e.searchers[0].ratio_to_random.has_value());
  // 3 compiles + 3 x 0.2 ms framework + runs of X=1 and X=3: 300 + 0.6 + 5 + 8 ms is where
  // the longest run ended.
  EXPECT_DOUBLE_EQ(e.searchers[0].by_time.back().x, 0.3136);
}

TEST(Evaluation, ARunToAHorizonGoesOnPastTheTarget) {
  // Exhaustive search reaches X = 4 (1.05 ms) at test 4, the optimum X = 5 at test 5.
  Recording recording = six_configurations();
  SimulationOptions options;
  options.cost.compile_threads = 0;
  options.horizon = RunHorizon{.tests = 5, .seconds = 0};
  auto searcher = make_searcher("exhaustive", {});
  SimulatedRun run = simulate_run(recording, *searcher, options);
  EXPECT_EQ(run.tested.size(), 5u);
  EXPECT_EQ(run.tests_to_target, 4u) << "where it first reached the target";
  ASSERT_EQ(run.improvements.size(), 3u);
  EXPECT_EQ(run.improvements.back().best_ms, 1) << "the optimum, after the target";
  // Both limits: one test, and 0.3 s of simulated time (105, 100, 108 ms: 0.313 s after test 3).
  options.horizon = RunHorizon{.tests = 1, .seconds = 0.3};
  searcher = make_searcher("exhaustive", {});
  EXPECT_EQ(simulate_run(recording, *searcher, options).tested.size(), 3u);
  // The budget does not stop it; the end of the space does.
  options.budget = 2;
  options.horizon = RunHorizon{.tests = 100, .seconds = 0};
  searcher = make_searcher("exhaustive", {});
  EXPECT_EQ(simulate_run(recording, *searcher, options).tested.size(), 6u);
}

TEST(Evaluation, RandomSearchNeedsAboutWhatTheFormulaSays) {
  // Uniform order without repeats, k = 2 good among n = 6: E[first good] = (n + 1) / (k + 1) = 7/3.
  // Its standard deviation is about 1.25, so the mean of 2,000 runs is within 0.1 of 7/3
  // with overwhelming probability (the seeds are fixed, so the test is deterministic anyway).
  Evaluation e = evaluate(six_configurations(), {"random"}, options_with(2000));
  EXPECT_NEAR(e.searchers[0].mean_tests, 7.0 / 3.0, 0.1);
  EXPECT_EQ(e.searchers[0].ratio_to_random, 1.0);
  EXPECT_EQ(e.searchers[0].failed_runs, 0u);
  EXPECT_LE(e.searchers[0].p90_tests, 5) << "at most 5 tests: the 4 poor ones, then a good one";
}

TEST(Evaluation, MeanMedianAndNearestRankP90) {
  // 1..10: mean 5.5; median (5 + 6) / 2 = 5.5; p90 the ceil(0.9 x 10) = 9th smallest = 9.
  TestStatistics ten = test_statistics({10, 9, 8, 7, 6, 5, 4, 3, 2, 1});
  EXPECT_EQ(ten.mean, 5.5);
  EXPECT_EQ(ten.median, 5.5);
  EXPECT_EQ(ten.p90, 9);
  // {4, 1, 3}: mean 8/3; median 3; p90 the ceil(2.7) = 3rd smallest = 4.
  TestStatistics three = test_statistics({4, 1, 3});
  EXPECT_DOUBLE_EQ(three.mean, 8.0 / 3.0);
  EXPECT_EQ(three.median, 3);
  EXPECT_EQ(three.p90, 4);
  EXPECT_TRUE(std::isnan(test_statistics({}).median));
}

TEST(Evaluation, ProfilingIsCostedPerPass) {
  Recording recording = six_configurations();
  CostModel cost;  // as recorded, 5 passes, 12.5 ms each
  MeasureRequest plain;
  MeasureRequest profiled;
  profiled.counters = true;
  // X=1: 100 ms compile + 0.2 ms typical framework (none recorded) + 5 ms run = 105.2;
  // profiled adds 5 x (5 + 12.5) = 87.5.
  EXPECT_DOUBLE_EQ(test_cost_ms(recording, 0, plain, cost), 105.2);
  EXPECT_DOUBLE_EQ(test_cost_ms(recording, 0, profiled, cost), 192.7);
  // X=2 failed to compile: only the compile and the framework are paid, profiled or not.
  EXPECT_DOUBLE_EQ(test_cost_ms(recording, 1, profiled, cost), 100.2);
  cost.repetitions = 10;  // X=3: 100 + 0.2 + 10 x 8
  EXPECT_DOUBLE_EQ(test_cost_ms(recording, 2, plain, cost), 180.2);
}

// A hand-made two-configuration recording, X = 1 or 2: three timed launches each, and
// whatever `fill` adds.
Recording two_configurations(const std::function<void(Result&)>& fill) {
  ImportedRecording imported;
  imported.device = "Hand-made GPU";
  imported.kernel = "two";
  imported.parameters = {{"X", {1, 2}}};
  for (int x = 1; x <= 2; ++x) {
    Result result;
    result.configuration = {{"X", x}};
    result.status = Status::Ok;
    result.time = TimingStats::from_samples({4.0, 5.0, 6.0});
    fill(result);
    imported.results.push_back(result);
  }
  return Recording::from_import(imported);
}

TEST(Evaluation, ProfilingCostsWhatItTookWhenItWasRecorded) {
  Recording recording = two_configurations([](Result& result) {
    result.compile_ms = 100;
    result.time = TimingStats::from_samples({4.0});
    if (result.configuration[0].second == Value(1)) {
      // Profiled when recorded: 5 passes took 700 ms (a SASS-patched pass is slow).
      result.profiling_passes = 5;
      result.profiling_ms = 700;
      result.counters["smsp__inst_executed.sum"] = 1e6;
    }
  });
  MeasureRequest profiled;
  profiled.counters = true;
  const CostModel cost;
  const ConfigIndex measured = recording.space().index_of_key("X=1");
  const ConfigIndex modelled = recording.space().index_of_key("X=2");
  EXPECT_DOUBLE_EQ(test_cost_ms(recording, measured, profiled, cost), 100 + 0.2 + 4 + 700);
  EXPECT_DOUBLE_EQ(test_cost_ms(recording, modelled, profiled, cost), 100 + 0.2 + 4 + 5 * (4 + 12.5));
}

TEST(Evaluation, ATestCostsEverythingItsRecordingHolds) {
  // Compile, every timed launch, validation and the framework's time, as recorded.
  Recording recording = two_configurations([](Result& result) {
    result.compile_ms = 300;
    result.validation_ms = 20;
    result.overhead_ms = 1.5;
  });
  EXPECT_DOUBLE_EQ(test_cost_ms(recording, 0, MeasureRequest{}, CostModel{}), 300 + 1.5 + (4 + 5 + 6) + 20);
  CostModel single;
  single.repetitions = 1;  // the runtime (median 5) once, as Kernel Tuner's simulations count
  EXPECT_DOUBLE_EQ(test_cost_ms(recording, 0, MeasureRequest{}, single), 300 + 1.5 + 5 + 20);
}

TEST(Evaluation, ARecordingWithoutCompileOrFrameworkTimesIsChargedTypicalOnes) {
  Recording bare = two_configurations([](Result&) {});
  const CostModel cost;
  EXPECT_DOUBLE_EQ(test_cost_ms(bare, 0, MeasureRequest{}, cost),
                   cost.typical_compile_ms + cost.typical_framework_ms + 15);
  EXPECT_FALSE(RecordedCosts::of(bare).compile);
  // Framework times without compile times (KTT's TotalOverhead includes compiling): no
  // typical compile on top.
  Recording ktt_like = two_configurations([](Result& result) { result.overhead_ms = 400; });
  EXPECT_DOUBLE_EQ(test_cost_ms(ktt_like, 0, MeasureRequest{}, cost), 400 + 15);
}

TEST(Evaluation, DoesNotDependOnTheThreadCount) {
  Recording recording = Recording::load(STEER_DATA_DIR "/recordings/ktt/pnpoly_rtx2080ti.ktt.json.gz");
  EvaluationOptions options = options_with(200);
  options.seed = 17;
  options.threads = 1;
  Evaluation one = evaluate(recording, {"random", "exhaustive"}, options);
  options.threads = 4;
  Evaluation four = evaluate(recording, {"random", "exhaustive"}, options);
  ASSERT_EQ(one.searchers.size(), four.searchers.size());
  for (std::size_t s = 0; s < one.searchers.size(); ++s) {
    const SearcherEvaluation &a = one.searchers[s], &b = four.searchers[s];
    EXPECT_EQ(a.mean_tests, b.mean_tests);
    EXPECT_EQ(a.median_tests, b.median_tests);
    EXPECT_EQ(a.p90_tests, b.p90_tests);
    EXPECT_EQ(a.mean_time_s, b.mean_time_s);
    EXPECT_EQ(a.failed_runs, b.failed_runs);
    ASSERT_EQ(a.by_test.size(), b.by_test.size());
    for (std::size_t i = 0; i < a.by_test.size(); ++i) {
      EXPECT_EQ(a.by_test[i].mean_best_ms, b.by_test[i].mean_best_ms);
      EXPECT_EQ(a.by_test[i].std_best_ms, b.by_test[i].std_best_ms);
    }
    ASSERT_EQ(a.by_time.size(), b.by_time.size());
    for (std::size_t i = 0; i < a.by_time.size(); ++i) EXPECT_EQ(a.by_time[i].mean_best_ms, b.by_time[i].mean_best_ms);
  }
}

TEST(Evaluation, RefusesAnUnknownSearcherAndARecordingWithoutAValidConfiguration) {
  try {
    evaluate(six_configurations(), {"random", "clairvoyant"}, options_with(1));
    ADD_FAILURE() << "an unknown searcher must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("clairvoyant"), std::string::npos) << e.what();
  }
  ImportedRecording failing;
  failing.parameters = {{"X", {1}}};
  Result broken;
  broken.configuration = {{"X", 1}};
  broken.status = Status::LaunchError;
  failing.results = {broken};
  EXPECT_THROW(evaluate(Recording::from_import(failing), {"random"}, options_with(1)), Error);
}

// X = 1..4: runtimes 1, 2, 3, 4 ms and energies 4, 3, 1, 2 J, so the fastest is X = 1 and
// the most frugal X = 3; X = 4 has no energy.
Recording time_and_energy() {
  ImportedRecording imported;
  imported.device = "Hand-made GPU";
  imported.kernel = "four";
  imported.parameters = {{"X", {1, 2, 3, 4}}};
  const double joules[] = {4, 3, 1, NAN};
  for (int x = 1; x <= 4; ++x) {
    Result result;
    result.configuration = {{"X", x}};
    result.compile_ms = 100;
    result.status = Status::Ok;
    result.time = TimingStats::from_samples({static_cast<double>(x)});
    if (!std::isnan(joules[x - 1])) result.energy = EnergyStats{.joules_per_launch = joules[x - 1]};
    imported.results.push_back(result);
  }
  return Recording::from_import(imported);
}

TEST(Evaluation, ObjectiveValuesAreTheRecordingsOwnScores) {
  Recording recording = time_and_energy();
  EXPECT_EQ(objective_values(recording, Objective::parse("time")), (std::vector<double>{1, 2, 3, 4}));
  const std::vector<double> energy = objective_values(recording, Objective::parse("energy"));
  EXPECT_EQ(energy[0], 4);
  EXPECT_EQ(energy[2], 1);
  EXPECT_TRUE(std::isnan(energy[3])) << "no energy: not scorable";
  // Normalised by the best time (1 ms) and the least energy (1 J) over the whole recording.
  const std::vector<double> weighted = objective_values(recording, Objective::parse("weighted:0.25"));
  EXPECT_DOUBLE_EQ(weighted[0], 0.25 * 1 + 0.75 * 4);
  EXPECT_DOUBLE_EQ(weighted[2], 0.25 * 3 + 0.75 * 1);
  EXPECT_THROW(objective_values(recording, Objective::parse("gflops-per-watt")), Error);
}

TEST(Evaluation, UnderAnEnergyObjectiveTheTargetIsTheLeastEnergy) {
  EvaluationOptions options = options_with(5);
  options.simulation.objective = Objective::parse("energy");
  Evaluation e = evaluate(time_and_energy(), {"exhaustive"}, options);
  EXPECT_EQ(e.objective, "energy");
  EXPECT_EQ(e.best_ms, 1) << "joules, of X = 3";
  EXPECT_DOUBLE_EQ(e.target_ms, 1.1);
  // Index order: the fastest (X = 1) is not the target; X = 3 is, at test 3, and the run
  // stops there.
  const SearcherEvaluation& exhaustive = e.searchers[0];
  EXPECT_EQ(exhaustive.mean_tests, 3);
  EXPECT_EQ(exhaustive.per_run[0].tests, 3u);
  ASSERT_EQ(exhaustive.by_test.size(), 3u);
  EXPECT_EQ(exhaustive.by_test[0].mean_best_ms, 4);
  EXPECT_EQ(exhaustive.by_test[2].mean_best_ms, 1);
  // Every test measured energy: 3 x (100 ms compile + 0.2 ms framework + 500 ms energy window)
  // plus the runs, 1 + 2 + 3 ms.
  EXPECT_NEAR(exhaustive.mean_time_s, 3 * 0.6002 + 0.006, 1e-12);
  // Under time, the same runs stop at X = 1.
  options.simulation.objective = Objective::parse("time");
  EXPECT_EQ(evaluate(time_and_energy(), {"exhaustive"}, options).searchers[0].mean_tests, 1);
}

TEST(Evaluation, ScopedSettingsReachOnlyTheirSearcher) {
  const std::map<std::string, std::string> settings = {
      {"profile-based.compute_bound", "true"}, {"genetic.popsize", "10"}, {"budget_hint", "3"}};
  EXPECT_EQ(settings_for("profile-based", settings),
            (std::map<std::string, std::string>{{"compute_bound", "true"}, {"budget_hint", "3"}}));
  EXPECT_EQ(settings_for("genetic", settings),
            (std::map<std::string, std::string>{{"popsize", "10"}, {"budget_hint", "3"}}));
  EXPECT_EQ(settings_for("random", {{"profile-based.n", "2"}}), (std::map<std::string, std::string>{}));
  // A scoped setting the searcher does not know is still an error, naming it.
  Recording recording = six_configurations();
  EvaluationOptions options = options_with(2);
  options.settings = {{"annealing.no_such_setting", "2"}};
  try {
    evaluate(recording, {"random", "annealing"}, options);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_setting"), std::string::npos) << e.what();
  }
  options.settings = {{"annealing.T", "0.5"}};  // known to annealing, never given to random
  EXPECT_NO_THROW(evaluate(recording, {"random", "annealing"}, options));
}

TEST(Evaluation, RefusesASettingForASearcherThatIsNotEvaluated) {
  Recording recording = six_configurations();
  EvaluationOptions options = options_with(2);
  // `default` runs surrogate's algorithm, but under its own name: surrogate.popsize would be
  // dropped without a word.
  options.settings = {{"surrogate.popsize", "4"}};
  try {
    evaluate(recording, {"random", "default"}, options);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("surrogate.popsize=4 is for searcher 'surrogate', which is not evaluated here "
                                         "(random, default)"),
              std::string::npos)
        << e.what();
  }
  options.settings = {{"default.popsize", "4"}};
  EXPECT_NO_THROW(evaluate(recording, {"random", "default"}, options));
}

}  // namespace
}  // namespace steer
