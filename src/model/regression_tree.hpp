#pragma once
// A small CART regression tree: binary splits "feature <= threshold" chosen to minimise the
// summed squared error of the two sides, leaves predicting their mean. Used by the Starchart
// baseline (runtime from value indices) and by the counter models of steer/model.hpp
// (one tree, or a forest of them, per counter).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <vector>

namespace steer::model {

struct RegressionTreeOptions {
  std::size_t min_samples_split = 2;  // a node with fewer samples is a leaf
  std::size_t min_samples_leaf = 1;   // no split leaves fewer on either side
  std::size_t max_depth = 32;         // a guard; the sample counts stop growth much earlier
};

class RegressionTree {
 public:
  // Fits `targets[i]` from `features[i]` (every row the same length, at least one row).
  // Deterministic: among equally good splits the first feature, then the lowest threshold.
  static RegressionTree fit(const std::vector<std::vector<double>>& features,
                            const std::vector<double>& targets, const RegressionTreeOptions& options = {});

  double predict(std::span<const double> features) const;
  double predict(std::span<const std::uint32_t> features) const;
  std::size_t leaves() const;
  std::size_t depth() const;

  // Columnar JSON {"feature": [...], "threshold": [...], "left": [...], "right": [...],
  // "value": [...]}, feature -1 for a leaf. from_json throws steer::Error for a malformed
  // tree (children out of range or not after their parent, so no cycles).
  nlohmann::json to_json() const;
  static RegressionTree from_json(const nlohmann::json& json);
  // One more than the largest feature index a split reads (0 for a single leaf).
  std::size_t max_feature() const;

 private:
  struct Node {
    bool leaf = true;
    std::size_t feature = 0;
    double threshold = 0;  // samples with feature <= threshold go left
    std::uint32_t left = 0, right = 0;
    double value = 0;  // the leaf's mean
  };
  template <typename T>
  double descend(std::span<const T> features) const;
  std::vector<Node> nodes_;  // nodes_[0] is the root
};

}  // namespace steer::model
