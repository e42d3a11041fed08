// The performance score P as the methodology's package computes it: the calculated
// random-search baseline and the cut-offs checked by hand, P of searchers that find the
// optimum first and last, random search against its own baseline, the package's test
// costs, runs of another tool, the aggregate over spaces, every other figure left as it
// is, and the score in the simulation file.
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

TEST(PerformanceScore, CutOffsAreWhereRandomSearchReachesAPercentileOfTheWayToTheOptimum) {
  // kBestFirst worst first: 10 9 8 7 6 5 4 3 2 1.08 1.05 1; N = 12, median (5 + 4) / 2 = 4.5.
  const RandomSearchBaseline baseline(kBestFirst);
  EXPECT_EQ(baseline.median_ms(), 4.5);
  // 0.95: within 1 + 3.5 x 0.05 = 1.175, first at index 9 (1.08): ceil(9 / 4) = 3 tests.
  EXPECT_EQ(baseline.cutoff_tests(0.95), 3u);
  // 0.01: within 1 + 3.5 x 0.99 = 4.465, first at index 6 (4 ms): ceil(6 / 7) = 1.
  EXPECT_EQ(baseline.cutoff_tests(0.01), 1u);
  // 0.999 reaches the optimum itself (index 11), so one index earlier: ceil(10 / 3) = 4;
  // 1 asks for the optimum: ceil(11 / 2) = 6.
  EXPECT_EQ(baseline.cutoff_tests(0.999), 4u);
  EXPECT_EQ(baseline.cutoff_tests(1.0), 6u);
  EXPECT_THROW(RandomSearchBaseline({3, 3, 3}).cutoff_tests(0.95), Error) << "nothing to search for";

  // Time: the test cut-offs times the median test cost.
  const ScoreCutoffs cutoffs = score_cutoffs(baseline, SpaceTestCosts{.per_test_ms = 100, .median_ms = 200});
  EXPECT_EQ(cutoffs.start_tests, 1u);
  EXPECT_EQ(cutoffs.end_tests, 3u);
  EXPECT_DOUBLE_EQ(cutoffs.start_s, 0.2);
  EXPECT_DOUBLE_EQ(cutoffs.end_s, 0.6);
  EXPECT_EQ(cutoffs.test_cost_ms, 100);
  // Cut-offs closer than two tests are moved apart.
  ScoreSettings close;
  close.end_percentile = 0.02;  // within 4.43: also 1 test
  const ScoreCutoffs apart = score_cutoffs(baseline, SpaceTestCosts{.per_test_ms = 100, .median_ms = 100}, close);
  EXPECT_EQ(apart.end_tests - apart.start_tests, 2u);
  EXPECT_THROW(score_cutoffs(baseline, SpaceTestCosts{.per_test_ms = NAN, .median_ms = NAN}), Error);
}

TEST(PerformanceScore, RanksCountTheFasterValidRuntimes) {
  const RandomSearchBaseline baseline(kBestFirst);  // best first: 1 1.05 1.08 2 3 4 5 ...
  EXPECT_EQ(baseline.best_first_rank(1.0), 0u);
  EXPECT_EQ(baseline.best_first_rank(0.5), 0u);
  EXPECT_EQ(baseline.best_first_rank(4), 5u);
  EXPECT_EQ(baseline.best_first_rank(4.5), 6u);
  EXPECT_EQ(baseline.runtime_at_rank(5), 4);
  EXPECT_EQ(baseline.runtime_at_rank(99), 10) << "clamped to the worst";
}

TEST(PerformanceScore, PIsZeroForTheBaselineOneForTheOptimum) {
  EXPECT_EQ(performance_score(10, 10, 2), 0);
  EXPECT_EQ(performance_score(10, 2, 2), 1);
  EXPECT_EQ(performance_score(10, 14, 2), -0.5);
  EXPECT_EQ(performance_score(2, 3, 2), 0) << "0 by definition where the baseline is the optimum";
}

TEST(PerformanceScore, TestCostsAreThoseOfThePackage) {
  // Costs: 100 compile + 0.2 typical framework + the runtime for the valid ones, 100.2 for
  // the compile error. Per test: the valid mean plus 1/6 of the failed mean.
  Recording recording = recording_of({5, NAN, 8, 1.05, 1, 2});
  const SpaceTestCosts costs = space_test_costs(recording, CostModel{});
  EXPECT_DOUBLE_EQ(costs.per_test_ms, 100.2 + (5 + 8 + 1.05 + 1 + 2) / 5 + 100.2 / 6);
  EXPECT_DOUBLE_EQ(costs.median_ms, (101.25 + 102.2) / 2);
  EXPECT_TRUE(costs.recorded.compile);
  EXPECT_FALSE(costs.recorded.framework);

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
  EXPECT_DOUBLE_EQ(space_test_costs(Recording::from_import(imported), CostModel{}).median_ms, 104.2);
}

TEST(PerformanceScore, ScoreOfHandMadeRunsOnBothAxes) {
  const RandomSearchBaseline baseline(kBestFirst);  // baseline(1) = 4, (2) = 1.08, (3) = 1.05
  ScoreSettings three;
  three.time_points = 3;
  const ScoreCutoffs cutoffs = score_cutoffs(baseline, SpaceTestCosts{.per_test_ms = 100, .median_ms = 100}, three);
  ASSERT_EQ(cutoffs.end_tests, 3u);
  // Run A: 4 ms (rank 5) at test 1 (0.12 s), 1.05 ms (rank 1) at test 2 (0.2 s), nothing
  // better at test 3. Run B: the optimum (rank 0) at test 1 (0.05 s), then nothing better.
  const std::vector<RunTrace> runs = {{{0.12, 0.2, 0.3}, {4, 1.05, 1.05}}, {{0.05, 0.25, 0.3}, {1, 1, 1}}};
  PerformanceScore score = score_runs(baseline, cutoffs, runs);
  // Tests 1, 2, 3. Test 1: the mean rank 2.5 rounds to 2, 1.08 ms, against 4; then rank
  // 0.5 -> 0, the optimum.
  EXPECT_EQ(score.fevals_x, (std::vector<double>{1, 2, 3}));
  ASSERT_EQ(score.fevals_curve.size(), 3u);
  EXPECT_DOUBLE_EQ(score.fevals_curve[0], (4 - 1.08) / (4 - 1.0));
  EXPECT_DOUBLE_EQ(score.fevals_curve[1], 1);
  EXPECT_DOUBLE_EQ(score.fevals_curve[2], 1);
  EXPECT_DOUBLE_EQ(score.fevals, (score.fevals_curve[0] + 2) / 3);
  // Time: 0.1, 0.2 and 0.3 s, read off the regression through the pooled points (0.05, 0),
  // (0.12, 5), (0.2, 1), (0.25, 0), (0.3, 1), (0.3, 0), which only improves over time.
  EXPECT_EQ(score.time_x, (std::vector<double>{0.1, 0.2, 0.3}));
  ASSERT_EQ(score.time_curve.size(), 3u);
  for (double p : score.time_curve) {
    EXPECT_GE(p, (4 - 10.0) / (4 - 1.0));  // no worse than the worst configuration
    EXPECT_LE(p, 1);
  }
  EXPECT_NEAR(score.time, (score.time_curve[0] + score.time_curve[1] + score.time_curve[2]) / 3, 1e-12);
  EXPECT_THROW(score_runs(baseline, cutoffs, {}), Error);
}

TEST(PerformanceScore, OverTestsEveryRunThatReachesTheCutoffCounts) {
  const RandomSearchBaseline baseline(kBestFirst);  // baseline(1) = 4, (2) = 1.08, (3) = 1.05
  const ScoreCutoffs cutoffs = score_cutoffs(baseline, SpaceTestCosts{.per_test_ms = 100, .median_ms = 100}, {});
  ASSERT_EQ(cutoffs.end_tests, 3u);
  auto run = [](std::size_t tests, double best_ms) {
    RunTrace trace;
    for (std::size_t t = 1; t <= tests; ++t) {
      trace.end_s.push_back(0.1 * static_cast<double>(t));
      trace.best_ms.push_back(best_ms);
    }
    return trace;
  };
  // Two runs at the optimum (rank 0) that stop at the cut-off or just past it, three at 2 ms
  // (rank 3) that go on longer, as a faster searcher's runs do before a time cut-off, and one
  // run shorter than the cut-off at the worst.
  const std::vector<RunTrace> runs = {run(3, 1.0), run(4, 1.0), run(6, 2.0), run(7, 2.0), run(8, 2.0), run(2, 10.0)};
  const PerformanceScore score = score_runs(baseline, cutoffs, runs);
  // Lengths count up to the cut-off (3, 3, 3, 3, 3, 2; median 3): the five that reach it
  // count, the short one does not. The mean rank 9 / 5 rounds to 2, 1.08 ms, at every test.
  // (The median of the whole lengths, 5, would keep only the runs at 2 ms.)
  ASSERT_EQ(score.fevals_curve.size(), 3u);
  const std::vector<double> base = {4, 1.08, 1.05};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(score.fevals_curve[i], (base[i] - 1.08) / (base[i] - 1.0)) << "test " << i + 1;
  }
}

TEST(PerformanceScore, TheBaselineOverTimeIsMonotoneBetweenWholeTests) {
  const RandomSearchBaseline baseline(kBestFirst);
  ScoreSettings four;
  four.time_points = 4;  // 1, 1.67, 2.33, 3 tests: the nodes 1, 2, 3 read at those points
  const ScoreCutoffs cutoffs = score_cutoffs(baseline, SpaceTestCosts{.per_test_ms = 100, .median_ms = 100}, four);
  // A run that finds the optimum at once scores 1 wherever the baseline is above the optimum,
  // and the baseline is strictly between its whole-test values in between.
  const PerformanceScore score = score_runs(baseline, cutoffs, {{{0.1, 0.2, 0.3}, {1.0, 1.0, 1.0}}});
  for (double p : score.time_curve) EXPECT_DOUBLE_EQ(p, 1);
  // A run stuck at 5 ms: P = (b - 5) / (b - 1), so b = (5 - P) / (1 - P).
  const PerformanceScore stuck = score_runs(baseline, cutoffs, {{{0.1, 0.2, 0.3}, {5.0, 5.0, 5.0}}});
  std::vector<double> b;
  for (double p : stuck.time_curve) b.push_back((5 - p) / (1 - p));
  EXPECT_NEAR(b[0], 4, 1e-9);
  EXPECT_NEAR(b[3], 1.05, 1e-9);
  EXPECT_LT(b[1], 4);
  EXPECT_GT(b[1], b[2]);
  EXPECT_GT(b[2], 1.05);
}

TEST(PerformanceScore, FindingTheOptimumFirstScoresOneEverywhere) {
  // Exhaustive search tests X = 1 first: the optimum, in every run.
  Evaluation e = evaluate(recording_of(kBestFirst), {"exhaustive"}, scored(5));
  ASSERT_TRUE(e.score.has_value());
  EXPECT_EQ(e.score->end_tests, 3u);
  const PerformanceScore& score = e.searchers[0].score;
  ASSERT_EQ(score.fevals_curve.size(), 3u);
  ASSERT_EQ(score.time_curve.size(), 1000u);
  for (double p : score.fevals_curve) EXPECT_EQ(p, 1);
  // The first test (101.2 ms) ends before the median test cost (104.7 ms, the time axis's start).
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
  // Not exactly 0: random search also draws the 7 % invalid configurations, which the
  // baseline (of valid runtimes) never does (-0.07 over these 1,000 runs).
  EXPECT_NEAR(e.searchers[0].score.fevals, 0, 0.1);
  EXPECT_NEAR(e.searchers[0].score.time, 0, 0.15);
  // The time axis: the test cut-offs times the median test cost.
  const SpaceTestCosts costs = space_test_costs(recording, options.simulation.cost);
  ASSERT_TRUE(e.score.has_value());
  EXPECT_EQ(e.score->test_cost_ms, costs.per_test_ms);
  EXPECT_DOUBLE_EQ(e.score->start_s, static_cast<double>(e.score->start_tests) * costs.median_ms / 1e3);
  EXPECT_DOUBLE_EQ(e.score->end_s, static_cast<double>(e.score->end_tests) * costs.median_ms / 1e3);
  EXPECT_DOUBLE_EQ(e.searchers[0].score.time_x.back(), e.score->end_s);
  const RandomSearchBaseline baseline = RandomSearchBaseline::of(recording);
  EXPECT_EQ(e.score->end_tests, baseline.cutoff_tests(0.95));
}

TEST(PerformanceScore, RunsOfAnotherToolAreScoredBesideTheSearchers) {
  // Two runs that test the optimum (X = 1) second: 10 ms first.
  ExternalRuns external;
  external.tool = "Kernel Tuner 1.5.0";
  external.strategies.push_back({"greedy", {{{0.1, 10}, {0.2, 1.0}}, {{0.1, NAN}, {0.2, 10}, {0.3, 1.0}}}});
  EvaluationOptions options = scored(5);
  options.external = {external};
  Evaluation e = evaluate(recording_of(kBestFirst), {"random"}, options);
  ASSERT_EQ(e.searchers.size(), 2u);
  const SearcherEvaluation& greedy = e.searchers[1];
  EXPECT_EQ(greedy.name, "kernel_tuner:greedy");
  EXPECT_EQ(greedy.runs, 2u);
  EXPECT_EQ(greedy.mean_tests, 2.5) << "the optimum at tests 2 and 3";
  EXPECT_FALSE(std::isnan(greedy.score.fevals));
  EXPECT_EQ(improvements_of(external.strategies[0].second[1]).size(), 2u);
  EXPECT_EQ(improvements_of(external.strategies[0].second[1]).front().test, 2u);
}

TEST(PerformanceScore, AggregatesOverSpacesWithTheirSpread) {
  Evaluation first = evaluate(recording_of(kBestFirst), {"exhaustive"}, scored(3));
  Evaluation second = evaluate(recording_of(kWorstFirst), {"exhaustive"}, scored(3));
  const std::vector<AggregateScore> scores = aggregate_scores({&first, &second}, 11);
  ASSERT_EQ(scores.size(), 1u);
  const double a = first.searchers[0].score.time, b = second.searchers[0].score.time;
  EXPECT_EQ(scores[0].spaces, 2u);
  EXPECT_DOUBLE_EQ(scores[0].time, (a + b) / 2);
  EXPECT_DOUBLE_EQ(scores[0].time_spread, std::abs(a - b) / 2);
  ASSERT_EQ(scores[0].time_curve.size(), 11u);
  EXPECT_DOUBLE_EQ(scores[0].time_curve.front(),
                   (first.searchers[0].score.time_curve.front() + second.searchers[0].score.time_curve.front()) / 2);
  Evaluation unscored = evaluate(recording_of(kBestFirst), {"exhaustive"}, EvaluationOptions{});
  EXPECT_THROW(aggregate_scores({&first, &unscored}), Error);
}

TEST(PerformanceScore, LeavesEveryOtherFigureAsItIs) {
  Recording recording = Recording::load(STEER_DATA_DIR "/recordings/ktt/pnpoly_rtx2080ti.ktt.json.gz");
  EvaluationOptions options;
  options.runs = 50;
  options.simulation.cost.charge_searcher = false;  // simulated times that can be compared exactly
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
  EXPECT_EQ(back.settings.time_points, written.settings.time_points);
  EXPECT_EQ(back.start_tests, written.start_tests);
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
