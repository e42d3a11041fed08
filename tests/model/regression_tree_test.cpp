// The small CART of the Starchart searcher: exact on what a tree can represent, sensible on
// what it cannot, deterministic.
#include "model/regression_tree.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace steer::model {
namespace {

TEST(RegressionTree, ASingleSampleIsALeafPredictingIt) {
  RegressionTree tree = RegressionTree::fit({{1.0, 2.0}}, {7.5});
  EXPECT_EQ(tree.leaves(), 1u);
  EXPECT_DOUBLE_EQ(tree.predict(std::vector<double>{0.0, 0.0}), 7.5);
}

TEST(RegressionTree, RecoversAStepFunctionWithOneSplit) {
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (int i = 0; i < 10; ++i) {
    x.push_back({static_cast<double>(i), static_cast<double>(i % 3)});
    y.push_back(i < 6 ? 1.0 : 5.0);
  }
  RegressionTree tree = RegressionTree::fit(x, y);
  EXPECT_EQ(tree.leaves(), 2u) << "the second feature explains nothing";
  EXPECT_DOUBLE_EQ(tree.predict(std::vector<double>{5.0, 0.0}), 1.0);
  EXPECT_DOUBLE_EQ(tree.predict(std::vector<double>{6.0, 0.0}), 5.0);
  EXPECT_DOUBLE_EQ(tree.predict(std::vector<double>{5.4, 0.0}), 1.0) << "threshold halfway between 5 and 6";
}

TEST(RegressionTree, FitsAnInteractionOfTwoFeatures) {
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      x.push_back({static_cast<double>(a), static_cast<double>(b)});
      y.push_back(a * 10.0 + b);
    }
  }
  RegressionTree tree = RegressionTree::fit(x, y);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_DOUBLE_EQ(tree.predict(x[i]), y[i]);
  EXPECT_EQ(tree.leaves(), 16u);
  EXPECT_EQ(tree.predict(std::vector<std::uint32_t>{2, 3}), 23.0) << "value indices predict directly";
}

TEST(RegressionTree, MinimumLeafSizeAveragesNoise) {
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (int i = 0; i < 8; ++i) {
    x.push_back({static_cast<double>(i)});
    y.push_back(i % 2 == 0 ? 1.0 : 3.0);
  }
  RegressionTree tree = RegressionTree::fit(x, y, {.min_samples_split = 2, .min_samples_leaf = 4});
  EXPECT_LE(tree.leaves(), 2u);
  EXPECT_NEAR(tree.predict(std::vector<double>{0.0}), 2.0, 1e-12);
}

TEST(RegressionTree, ConstantTargetsNeedNoSplit) {
  RegressionTree tree = RegressionTree::fit({{0.0}, {1.0}, {2.0}}, {4.0, 4.0, 4.0});
  EXPECT_EQ(tree.leaves(), 1u);
  EXPECT_EQ(tree.depth(), 0u);
}

TEST(RegressionTree, RejectsMismatchedInput) {
  EXPECT_THROW(RegressionTree::fit({}, {}), std::invalid_argument);
  EXPECT_THROW(RegressionTree::fit({{1.0}}, {1.0, 2.0}), std::invalid_argument);
}

}  // namespace
}  // namespace steer::model
