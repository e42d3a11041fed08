// Objectives (time, energy, weighted, EDP, GFLOP/s per watt) and the time-energy Pareto front.
#include "steer/objective.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "steer/error.hpp"

namespace steer {
namespace {

Result measured(double ms, std::optional<double> joules, std::string name = "") {
  Result r;
  r.status = Status::Ok;
  r.time.median_ms = ms;
  if (joules) r.energy = EnergyStats{.joules_per_launch = *joules};
  r.message = std::move(name);
  return r;
}

TEST(Objective, ParsesEveryFormAndNamesItself) {
  for (const char* text : {"time", "energy", "edp", "gflops-per-watt", "weighted:0.25"}) {
    EXPECT_EQ(Objective::parse(text).name(), text);
  }
  EXPECT_EQ(Objective::parse("weighted:1").kind(), Objective::Kind::Weighted);
  EXPECT_FALSE(Objective::parse("time").needs_energy());
  EXPECT_TRUE(Objective::parse("edp").needs_energy());
  EXPECT_TRUE(Objective::parse("gflops-per-watt").needs_flops());
}

TEST(Objective, RejectsWhatItDoesNotKnowWithTheAcceptedForms) {
  for (const char* text : {"speed", "weighted", "weighted:", "weighted:x", "weighted:1.5", "weighted:-0.1",
                           "weighted:0.5x"}) {
    try {
      Objective::parse(text);
      ADD_FAILURE() << text << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("weighted:"), std::string::npos) << e.what();
    }
  }
}

TEST(Objective, ScoresByHand) {
  const Result r = measured(2.0, 0.5);  // 2 ms, 0.5 J per launch
  ObjectiveBests bests;
  bests.time_ms = 1.0;
  bests.joules = 0.25;
  EXPECT_DOUBLE_EQ(Objective::parse("time").score(r, bests), 2.0);
  EXPECT_DOUBLE_EQ(Objective::parse("energy").score(r, bests), 0.5);
  EXPECT_DOUBLE_EQ(Objective::parse("edp").score(r, bests), 0.5 * 0.002);  // J·s
  // M(t, e) = a t/t_best + (1 - a) e/e_best = 0.25 * 2 + 0.75 * 2.
  EXPECT_DOUBLE_EQ(Objective::parse("weighted:0.25").score(r, bests), 2.0);
  EXPECT_DOUBLE_EQ(Objective::parse("weighted:1").score(r, bests), 2.0);
  EXPECT_DOUBLE_EQ(Objective::parse("weighted:0").score(r, bests), 2.0);
  const Result frugal = measured(2.0, 0.25);
  EXPECT_DOUBLE_EQ(Objective::parse("weighted:0.5").score(frugal, bests), 0.5 * 2 + 0.5 * 1);
  // 1e9 FLOP per launch at 0.5 J: 2 GFLOP/J; the score is negated so that lower is better.
  const Objective gpw = Objective::parse("gflops-per-watt");
  EXPECT_DOUBLE_EQ(gpw.value(r, bests, 1e9), 2.0);
  EXPECT_DOUBLE_EQ(gpw.score(r, bests, 1e9), -2.0);
}

TEST(Objective, WhatCannotBeScoredIsNaN) {
  ObjectiveBests bests;
  const Result no_energy = measured(1.0, std::nullopt);
  EXPECT_TRUE(std::isnan(Objective::parse("energy").score(no_energy, bests)));
  EXPECT_TRUE(std::isnan(Objective::parse("weighted:0.5").score(measured(1, 1), bests))) << "no bests yet";
  EXPECT_TRUE(std::isnan(Objective::parse("gflops-per-watt").score(measured(1, 1), bests))) << "no FLOP count";
  Result failed = measured(1.0, 1.0);
  failed.status = Status::CompileError;
  EXPECT_TRUE(std::isnan(Objective::parse("time").score(failed, bests)));
}

TEST(ObjectiveBests, FollowTheValidResultsOnly) {
  ObjectiveBests bests;
  bests.update(measured(3, 2));
  bests.update(measured(5, 1));
  Result failed = measured(0.1, 0.1);
  failed.status = Status::InvalidOutput;
  bests.update(failed);
  bests.update(measured(4, std::nullopt));
  EXPECT_DOUBLE_EQ(*bests.time_ms, 3);
  EXPECT_DOUBLE_EQ(*bests.joules, 1);
}

TEST(ParetoOptimal, KeepsWhatNoOtherPointBeatsInBothRuntimeAndEnergy) {
  //            0       1       2       3       4       5
  // (ms, J): (4,2)   (2,3)   (1,5)   (8,1)   (2,4)   (4,2)
  // 4 loses to 1 (as fast, more energy); 5 repeats 0 (only the first of equal points counts).
  std::vector<bool> front = pareto_optimal({4, 2, 1, 8, 2, 4}, {2, 3, 5, 1, 4, 2});
  EXPECT_EQ(front, (std::vector<bool>{true, true, true, true, false, false}));
  EXPECT_EQ(pareto_optimal({}, {}), std::vector<bool>{});
  EXPECT_THROW(pareto_optimal({1, 2}, {1}), Error);
}

TEST(ParetoFront, KeepsExactlyTheNonDominatedPointsByTime) {
  std::vector<Result> results = {
      measured(1, 5, "fast"),       measured(2, 3, "middle"),   measured(2, 4, "dominated by middle"),
      measured(3, 3, "equal energy, slower"), measured(4, 1, "frugal"), measured(5, 2, "dominated by frugal"),
      measured(0.5, std::nullopt, "no energy"),
  };
  Result failed = measured(0.1, 0.1, "failed");
  failed.status = Status::Timeout;
  results.push_back(failed);
  std::vector<Result> front = pareto_front(results);
  ASSERT_EQ(front.size(), 3u);
  EXPECT_EQ(front[0].message, "fast");
  EXPECT_EQ(front[1].message, "middle");
  EXPECT_EQ(front[2].message, "frugal");
}

TEST(ParetoFront, EqualPointsAppearOnceAndAnEmptyInputGivesAnEmptyFront) {
  std::vector<Result> twins = {measured(1, 1, "first"), measured(1, 1, "second")};
  std::vector<Result> front = pareto_front(twins);
  ASSERT_EQ(front.size(), 1u);
  EXPECT_EQ(front[0].message, "first");
  EXPECT_TRUE(pareto_front(std::vector<Result>{}).empty());
}

}  // namespace
}  // namespace steer
