// CART for regression: exhaustive search of split points on each feature, with prefix sums
// over the samples sorted by that feature, so a node costs O(features * n log n).
#include "model/regression_tree.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>
#include <stdexcept>

#include "steer/error.hpp"

namespace steer::model {
namespace {

struct Builder {
  const std::vector<std::vector<double>>& x;
  const std::vector<double>& y;
  const RegressionTreeOptions& options;

  struct Split {
    bool found = false;
    std::size_t feature = 0;
    double threshold = 0;
    std::size_t left_count = 0;  // after sorting the samples by `feature`
    double error = 0;
  };

  // Summed squared error of the samples around their mean.
  double squared_error(std::span<const std::size_t> samples) const {
    double sum = 0, sum_sq = 0;
    for (std::size_t s : samples) {
      sum += y[s];
      sum_sq += y[s] * y[s];
    }
    return sum_sq - sum * sum / static_cast<double>(samples.size());
  }

  Split best_split(std::vector<std::size_t>& samples) const {
    Split best;
    const std::size_t n = samples.size();
    best.error = squared_error(samples);
    // A split must reduce the error by more than rounding noise.
    const double required_gain = 1e-12 * std::max(1.0, best.error);
    for (std::size_t f = 0; f < x[samples[0]].size(); ++f) {
      std::stable_sort(samples.begin(), samples.end(),
                       [&](std::size_t a, std::size_t b) { return x[a][f] < x[b][f]; });
      double total = 0, total_sq = 0;
      for (std::size_t s : samples) {
        total += y[s];
        total_sq += y[s] * y[s];
      }
      double left = 0, left_sq = 0;
      for (std::size_t i = 0; i + 1 < n; ++i) {
        left += y[samples[i]];
        left_sq += y[samples[i]] * y[samples[i]];
        const double here = x[samples[i]][f];
        const double next = x[samples[i + 1]][f];
        const std::size_t nl = i + 1, nr = n - nl;
        if (here == next || nl < options.min_samples_leaf || nr < options.min_samples_leaf) continue;
        const double right = total - left, right_sq = total_sq - left_sq;
        const double error = (left_sq - left * left / static_cast<double>(nl)) +
                             (right_sq - right * right / static_cast<double>(nr));
        if (error < best.error - required_gain) {
          best = {true, f, (here + next) / 2, nl, error};
        }
      }
    }
    return best;
  }
};

}  // namespace

// Grown with an explicit work list rather than recursion, so depth never meets the stack.
RegressionTree RegressionTree::fit(const std::vector<std::vector<double>>& features,
                                   const std::vector<double>& targets, const RegressionTreeOptions& options) {
  if (features.empty() || features.size() != targets.size()) {
    throw std::invalid_argument("RegressionTree::fit: needs as many targets as feature rows, at least one");
  }
  RegressionTree tree;
  struct Frame {
    std::uint32_t node;
    std::vector<std::size_t> samples;
    std::size_t depth;
  };
  Builder builder{features, targets, options};
  std::vector<std::size_t> all(features.size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  tree.nodes_.emplace_back();
  std::vector<Frame> work;
  work.push_back({0, std::move(all), 0});
  while (!work.empty()) {
    Frame frame = std::move(work.back());
    work.pop_back();
    double sum = 0;
    for (std::size_t s : frame.samples) sum += targets[s];
    tree.nodes_[frame.node].value = sum / static_cast<double>(frame.samples.size());
    if (frame.samples.size() < options.min_samples_split || frame.depth >= options.max_depth) continue;
    Builder::Split split = builder.best_split(frame.samples);
    if (!split.found) continue;
    // Re-sort by the chosen feature: best_split left the samples sorted by the last one.
    std::stable_sort(frame.samples.begin(), frame.samples.end(), [&](std::size_t a, std::size_t b) {
      return features[a][split.feature] < features[b][split.feature];
    });
    const auto left = static_cast<std::uint32_t>(tree.nodes_.size());
    tree.nodes_.emplace_back();
    tree.nodes_.emplace_back();
    Node& node = tree.nodes_[frame.node];
    node.leaf = false;
    node.feature = split.feature;
    node.threshold = split.threshold;
    node.left = left;
    node.right = left + 1;
    const auto middle = frame.samples.begin() + static_cast<std::ptrdiff_t>(split.left_count);
    work.push_back({left + 1, std::vector<std::size_t>(middle, frame.samples.end()), frame.depth + 1});
    work.push_back({left, std::vector<std::size_t>(frame.samples.begin(), middle), frame.depth + 1});
  }
  return tree;
}

template <typename T>
double RegressionTree::descend(std::span<const T> features) const {
  std::uint32_t at = 0;
  while (!nodes_[at].leaf) {
    const Node& node = nodes_[at];
    at = static_cast<double>(features[node.feature]) <= node.threshold ? node.left : node.right;
  }
  return nodes_[at].value;
}

double RegressionTree::predict(std::span<const double> features) const { return descend(features); }
double RegressionTree::predict(std::span<const std::uint32_t> features) const { return descend(features); }

std::size_t RegressionTree::leaves() const {
  return static_cast<std::size_t>(
      std::count_if(nodes_.begin(), nodes_.end(), [](const Node& n) { return n.leaf; }));
}

std::size_t RegressionTree::depth() const {
  std::size_t deepest = 0;
  std::vector<std::pair<std::uint32_t, std::size_t>> work{{0, 0}};
  while (!work.empty()) {
    auto [at, d] = work.back();
    work.pop_back();
    deepest = std::max(deepest, d);
    if (!nodes_[at].leaf) {
      work.emplace_back(nodes_[at].left, d + 1);
      work.emplace_back(nodes_[at].right, d + 1);
    }
  }
  return deepest;
}

nlohmann::json RegressionTree::to_json() const {
  nlohmann::json feature = nlohmann::json::array(), threshold = nlohmann::json::array(),
                 left = nlohmann::json::array(), right = nlohmann::json::array(), value = nlohmann::json::array();
  for (const Node& node : nodes_) {
    feature.push_back(node.leaf ? -1 : static_cast<std::int64_t>(node.feature));
    threshold.push_back(node.threshold);
    left.push_back(node.left);
    right.push_back(node.right);
    value.push_back(node.value);
  }
  return {{"feature", feature}, {"threshold", threshold}, {"left", left}, {"right", right}, {"value", value}};
}

RegressionTree RegressionTree::from_json(const nlohmann::json& json) {
  RegressionTree tree;
  try {
    const auto& feature = json.at("feature");
    const std::size_t n = feature.size();
    const auto& threshold = json.at("threshold");
    const auto& left = json.at("left");
    const auto& right = json.at("right");
    const auto& value = json.at("value");
    if (n == 0 || threshold.size() != n || left.size() != n || right.size() != n || value.size() != n) {
      throw Error("the node arrays are empty or of different lengths");
    }
    tree.nodes_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      Node& node = tree.nodes_[i];
      const std::int64_t f = feature[i].get<std::int64_t>();
      node.leaf = f < 0;
      node.feature = node.leaf ? 0 : static_cast<std::size_t>(f);
      node.threshold = threshold[i].get<double>();
      node.left = left[i].get<std::uint32_t>();
      node.right = right[i].get<std::uint32_t>();
      node.value = value[i].get<double>();
      if (!node.leaf && (node.left <= i || node.right <= i || node.left >= n || node.right >= n)) {
        throw Error(fmt::format("node {} has children {} and {} outside ({}, {})", i, node.left, node.right, i, n));
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("regression tree: {}", e.what()));
  } catch (const Error& e) {
    throw Error(fmt::format("regression tree: {}", e.what()));
  }
  return tree;
}

std::size_t RegressionTree::max_feature() const {
  std::size_t most = 0;
  for (const Node& node : nodes_) {
    if (!node.leaf) most = std::max(most, node.feature + 1);
  }
  return most;
}

}  // namespace steer::model
