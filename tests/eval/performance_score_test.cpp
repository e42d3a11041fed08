// The performance score P: the calculated random-search baseline checked by hand, P of
// searchers that find the optimum first and last, random search against its own baseline,
// the time axis's mean test cost, every other figure left as it is, and the score in the
// simulation file.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "steer/error.hpp"
#include "steer/eval.hpp"

namespace steer {
namespace {

// X = 1..n in index order (the order exhaustive search tests them), each compiled in
// 100 ms, with these runtimes (ms); NaN: a compile error.
Recording recording_of(const std::vector<double>& runtimes) {
  ImportedRecording imported;
  imported.device = "Hand-made GPU";
  imported.kernel = "hand-made";
  imported.parameters = {{"X", std::vector<Value>(runtimes.size())}};
  for (std::size_t i = 0; i < runtimes.size(); ++i) imported.parameters[0].values[i] = static_cast<std::int64_t>(i + 1);
  for (std::size_t i = 0; i < runtimes.size(); ++i) {
    Result result;
    result.configuration = {{"X", static_cast<std::int64_t>(i + 1)}};
    result.compile_ms = 100;
    if (std::isnan(runtimes[i])) {
      result.status = Status::CompileError;
      result.message = "error";
    } else {
      result.status = Status::Ok;
      result.time = TimingStats::from_samples({runtimes[i]});
    }
    imported.results.push_back(result);
  }
  return Recording::from_import(imported);
}

// Twelve valid runtimes, three of them within 1.1x of the optimum 1 ms.
const std::vector<double> kBestFirst = {1.0, 1.05, 1.08, 9, 8, 7, 6, 5, 4, 3, 2, 10};
const std::vector<double> kWorstFirst = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1.08, 1.05, 1.0};

EvaluationOptions scored(std::uint64_t runs) {
  EvaluationOptions options;
  options.runs = runs;
  options.score = true;
  return options;
}

TEST(PerformanceScore, BaselineOfFourRuntimesByHand) {
  // Worst first: 4, 3, 2, 1; N = 4. index(M) = min(3, round(5M / (M + 1))), half to even.
  RandomSearchBaseline baseline({2, 4, 1, 3});
  EXPECT_EQ(baseline.size(), 4u);
  EXPECT_EQ(baseline.worst_first(), (std::vector<double>{4, 3, 2, 1}));
  EXPECT_EQ(baseline.worst_ms(), 4);
  EXPECT_EQ(baseline.optimum_ms(), 1);
  EXPECT_EQ(baseline.index(1), 2u) << "5/2 = 2.5 rounds to the even 2";
  EXPECT_EQ(baseline.index(0), 2u) << "no evaluation counts as one";
  EXPECT_EQ(baseline.index(2), 3u) << "10/3 = 3.33";
  EXPECT_EQ(baseline.index(3), 3u) << "15/4 = 3.75 rounds to 4, clamped to N - 1";
  EXPECT_EQ(baseline.index(1000000), 3u);
  EXPECT_EQ(baseline.runtime_ms(1), 2);
  EXPECT_EQ(baseline.runtime_ms(2), 1);
  EXPECT_EQ(baseline.evaluations_to_reach(4), 1u);
  EXPECT_EQ(baseline.evaluations_to_reach(2), 1u);
  EXPECT_EQ(baseline.evaluations_to_reach(1.5), 2u);
  EXPECT_EQ(baseline.evaluations_to_reach(1), 2u);
  EXPECT_THROW(baseline.evaluations_to_reach(0.5), Error) << "below the optimum";

  // N = 6: index(1) = round(7/2 = 3.5) rounds to the even 4; index(2) = round(14/3) = 5.
  RandomSearchBaseline six({6, 5, 4, 3, 2, 1});
  EXPECT_EQ(six.index(1), 4u);
  EXPECT_EQ(six.index(2), 5u);
  // N = 12 (kBestFirst): index(1) = round(6.5) = 6, index(2) = round(26/3 = 8.67) = 9.
  RandomSearchBaseline twelve(kBestFirst);
  EXPECT_EQ(twelve.index(1), 6u);
  EXPECT_EQ(twelve.runtime_ms(1), 4);
  EXPECT_EQ(twelve.index(2), 9u);
  EXPECT_EQ(twelve.runtime_ms(2), 1.08);
  EXPECT_EQ(twelve.evaluations_to_reach(1.1), 2u);

  EXPECT_THROW(RandomSearchBaseline({}), Error);
  EXPECT_THROW(RandomSearchBaseline({1, NAN}), Error);
}

TEST(PerformanceScore, TimeIsTurnedIntoEvaluationsByTheMeanTestCost) {
  EXPECT_EQ(RandomSearchBaseline::evaluations_in(2.5, 1), 2u) << "half to even";
  EXPECT_EQ(RandomSearchBaseline::evaluations_in(3.5, 1), 4u);
  EXPECT_EQ(RandomSearchBaseline::evaluations_in(3.4, 1), 3u);
  EXPECT_EQ(RandomSearchBaseline::evaluations_in(0.2, 1), 1u) << "at least one";
  EXPECT_EQ(RandomSearchBaseline::evaluations_in(0, 1), 1u);
}

TEST(PerformanceScore, PIsZeroForTheBaselineOneForTheOptimum) {
  EXPECT_EQ(performance_score(10, 10, 2), 0);
  EXPECT_EQ(performance_score(10, 2, 2), 1);
  EXPECT_EQ(performance_score(10, 14, 2), -0.5);
  EXPECT_EQ(performance_score(2, 3, 2), 0) << "0 by definition where the baseline is the optimum";
}

TEST(PerformanceScore, MeanTestCostIsOverEveryConfigurationThatCostsATest) {
  // Costs: 100 + runtime for the valid ones, 100 for the compile error.
  Recording recording = recording_of({5, NAN, 8, 1.05, 1, 2});
  EXPECT_DOUBLE_EQ(mean_test_cost_ms(recording, CostModel{}), (600 + 5 + 8 + 1.05 + 1 + 2) / 6);
  CostModel ten;
  ten.repetitions = 10;
  EXPECT_DOUBLE_EQ(mean_test_cost_ms(recording, ten), (600 + 10 * (5 + 8 + 1.05 + 1 + 2)) / 6);

  // A configuration recorded as skipped (removed by a constraint) costs nothing and is left out.
  ImportedRecording imported;
  imported.parameters = {{"X", {1, 2}}};
  Result ok;
  ok.configuration = {{"X", 1}};
  ok.compile_ms = 100;
  ok.status = Status::Ok;
  ok.time = TimingStats::from_samples({4.0});
  Result skipped;
  skipped.configuration = {{"X", 2}};
  skipped.status = Status::Skipped;
  imported.results = {ok, skipped};
  EXPECT_DOUBLE_EQ(mean_test_cost_ms(Recording::from_import(imported), CostModel{}), 104);
}

TEST(PerformanceScore, ScoreOfHandMadeRunsOnBothAxes) {
  const RandomSearchBaseline baseline(kBestFirst);  // worst 10, optimum 1; baseline(1) = 4, baseline(2) = 1.08
  const ScoreCutoffs cutoffs = score_cutoffs(baseline, 100, 1.1, 3);
  EXPECT_EQ(cutoffs.end_tests, 2u);
  EXPECT_DOUBLE_EQ(cutoffs.start_s, 0.1);
  EXPECT_DOUBLE_EQ(cutoffs.end_s, 0.2);
  // Run A: 4 ms at test 1 (0.12 s), 1.05 ms at test 2 (0.2 s). Run B: the optimum at test 1 (0.05 s).
  const std::vector<std::vector<Improvement>> runs = {{{1, 0.12, 4}, {2, 0.2, 1.05}}, {{1, 0.05, 1}}};
  PerformanceScore score = score_runs(baseline, cutoffs, runs);
  // Tests 1, round(1.5) = 2, 2. Test 1: found (4 + 1) / 2 = 2.5 against 4; test 2: 1.025 against 1.08.
  EXPECT_EQ(score.fevals_x, (std::vector<double>{1, 2, 2}));
  ASSERT_EQ(score.fevals_curve.size(), 3u);
  EXPECT_DOUBLE_EQ(score.fevals_curve[0], (4 - 2.5) / (4 - 1.0));
  EXPECT_DOUBLE_EQ(score.fevals_curve[1], (1.08 - 1.025) / (1.08 - 1));
  EXPECT_DOUBLE_EQ(score.fevals, (score.fevals_curve[0] + 2 * score.fevals_curve[1]) / 3);
  // 0.1 s: A has no valid test yet and counts as the worst, 10 ms; 1 test fits: baseline 4.
  // 0.15 s: A 4, B 1; round(1.5) = 2 tests fit: baseline 1.08. 0.2 s: A 1.05, B 1; baseline 1.08.
  ASSERT_EQ(score.time_x.size(), 3u);
  EXPECT_DOUBLE_EQ(score.time_x[1], 0.15);
  const double by_time[] = {(4 - 5.5) / (4 - 1.0), (1.08 - 2.5) / (1.08 - 1), (1.08 - 1.025) / (1.08 - 1)};
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(score.time_curve[i], by_time[i], 1e-9) << i;
  EXPECT_NEAR(score.time, (by_time[0] + by_time[1] + by_time[2]) / 3, 1e-9);
  EXPECT_THROW(score_runs(baseline, cutoffs, {}), Error);
}

TEST(PerformanceScore, FindingTheOptimumFirstScoresOneEverywhere) {
  // Exhaustive search tests X = 1 first: the optimum, in every run.
  Evaluation e = evaluate(recording_of(kBestFirst), {"exhaustive"}, scored(5));
  ASSERT_TRUE(e.score.has_value());
  EXPECT_EQ(e.score->end_tests, 2u);
  const PerformanceScore& score = e.searchers[0].score;
  ASSERT_EQ(score.fevals_curve.size(), 50u);
  ASSERT_EQ(score.time_curve.size(), 50u);
  for (double p : score.fevals_curve) EXPECT_EQ(p, 1);
  // The first test (101 ms) ends before the mean test cost (the time axis's start).
  for (double p : score.time_curve) EXPECT_EQ(p, 1);
  EXPECT_EQ(score.fevals, 1);
  EXPECT_EQ(score.time, 1);
}

TEST(PerformanceScore, ExhaustiveSearchWorstFirstScoresBelowRandom) {
  Evaluation e = evaluate(recording_of(kWorstFirst), {"exhaustive", "random"}, scored(200));
  const PerformanceScore& exhaustive = e.searchers[0].score;
  // Test 1 finds 10 ms where the baseline has 4: (4 - 10) / (4 - 1) = -2.
  EXPECT_EQ(exhaustive.fevals_curve.front(), -2);
  EXPECT_LT(exhaustive.fevals, -1);
  EXPECT_LT(exhaustive.time, -1);
  EXPECT_LT(exhaustive.fevals, e.searchers[1].score.fevals);
}

TEST(PerformanceScore, RandomSearchScoresAboutZeroOnPnpoly) {
  Recording recording = Recording::load(STEER_DATA_DIR "/recordings/ktt/pnpoly_rtx2080ti.ktt.json.gz");
  EvaluationOptions options = scored(1000);
  options.threads = 2;
  Evaluation e = evaluate(recording, {"random"}, options);
  // The baseline is the runtime at the expected index of the best draw, not the expected
  // runtime, so random search scores a little off 0 (0.015 over 1,000 runs).
  EXPECT_NEAR(e.searchers[0].score.fevals, 0, 0.1);
  // Over time it starts well below 0: at one mean test cost, about half of the runs have not
  // finished a test and count as the worst runtime.
  EXPECT_LT(e.searchers[0].score.time_curve.front(), -0.5);
  EXPECT_NEAR(e.searchers[0].score.time, 0, 0.3);
  // The time axis: from one mean test cost to end_tests of them.
  const double cost = mean_test_cost_ms(recording, options.simulation.cost);
  ASSERT_TRUE(e.score.has_value());
  EXPECT_EQ(e.score->test_cost_ms, cost);
  EXPECT_DOUBLE_EQ(e.score->start_s, cost / 1e3);
  EXPECT_DOUBLE_EQ(e.score->end_s, static_cast<double>(e.score->end_tests) * cost / 1e3);
  EXPECT_DOUBLE_EQ(e.searchers[0].score.time_x.back(), e.score->end_s);
  // The end cut-off: the first budget whose baseline is within 1.1x of the optimum.
  const RandomSearchBaseline baseline = RandomSearchBaseline::of(recording);
  EXPECT_LE(baseline.runtime_ms(e.score->end_tests), 1.1 * baseline.optimum_ms());
  EXPECT_GT(baseline.runtime_ms(e.score->end_tests - 1), 1.1 * baseline.optimum_ms());
}

TEST(PerformanceScore, LeavesEveryOtherFigureAsItIs) {
  Recording recording = Recording::load(STEER_DATA_DIR "/recordings/ktt/pnpoly_rtx2080ti.ktt.json.gz");
  EvaluationOptions options;
  options.runs = 50;
  Evaluation plain = evaluate(recording, {"random", "basin-hopping"}, options);
  EXPECT_FALSE(plain.score.has_value());
  EXPECT_TRUE(std::isnan(plain.searchers[0].score.fevals));
  EXPECT_TRUE(plain.searchers[0].score.fevals_curve.empty());
  options.score = true;
  Evaluation with = evaluate(recording, {"random", "basin-hopping"}, options);
  for (std::size_t s = 0; s < 2; ++s) {
    const SearcherEvaluation &a = plain.searchers[s], &b = with.searchers[s];
    EXPECT_EQ(a.mean_tests, b.mean_tests);
    EXPECT_EQ(a.p90_tests, b.p90_tests);
    EXPECT_EQ(a.mean_time_s, b.mean_time_s);
    EXPECT_EQ(a.ratio_to_random, b.ratio_to_random);
    ASSERT_EQ(a.by_test.size(), b.by_test.size());
    for (std::size_t i = 0; i < a.by_test.size(); ++i) EXPECT_EQ(a.by_test[i].mean_best_ms, b.by_test[i].mean_best_ms);
    ASSERT_EQ(a.per_run.size(), b.per_run.size());
    for (std::size_t r = 0; r < a.per_run.size(); ++r) EXPECT_EQ(a.per_run[r].tests, b.per_run[r].tests);
    EXPECT_FALSE(std::isnan(b.score.fevals));
  }
}

TEST(PerformanceScore, TheSimulationFileCarriesTheScore) {
  SimulationReport report;
  report.data = "hand-made";
  report.runs = 5;
  report.evaluation = evaluate(recording_of(kWorstFirst), {"exhaustive"}, scored(5));
  std::ostringstream text;
  write_simulation_json(text, report, true);
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("steer_score_" + std::to_string(::getpid()) + ".json");
  std::ofstream(file) << text.str();
  SimulationReport read = read_simulation_json(file);
  std::filesystem::remove(file);
  ASSERT_TRUE(read.evaluation.score.has_value());
  const ScoreCutoffs &written = *report.evaluation.score, &back = *read.evaluation.score;
  EXPECT_EQ(back.points, written.points);
  EXPECT_EQ(back.end_tests, written.end_tests);
  EXPECT_EQ(back.test_cost_ms, written.test_cost_ms);
  EXPECT_EQ(back.end_s, written.end_s);
  const PerformanceScore &a = report.evaluation.searchers[0].score, &b = read.evaluation.searchers[0].score;
  EXPECT_EQ(b.fevals, a.fevals);
  EXPECT_EQ(b.time, a.time);
  EXPECT_EQ(b.fevals_x, a.fevals_x);
  EXPECT_EQ(b.fevals_curve, a.fevals_curve);
  EXPECT_EQ(b.time_x, a.time_x);
  EXPECT_EQ(b.time_curve, a.time_curve);
}

}  // namespace
}  // namespace steer
