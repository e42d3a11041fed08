#pragma once
// A Bayesian linear model of log runtime over the parameters' values: one weight per value
// of each parameter (one-hot features) under a ridge prior, refitted from every result. It
// learns main effects (a block size that is fast everywhere) from a handful of tests, and
// ranks untested configurations by a lower confidence bound. A fit is a D x D solve (D: the
// values of all parameters together), well under a millisecond for real spaces. Internal to
// src/search/.
#include <Eigen/Cholesky>
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "steer/space.hpp"

namespace steer::search {

class ValueModel {
 public:
  explicit ValueModel(double ridge = 1.0) : ridge_(ridge) {}

  void start(const Space& space) {
    space_ = &space;
    offsets_.clear();
    std::size_t features = 0;
    for (const Parameter& parameter : space.parameters()) {
      offsets_.push_back(features);
      features += parameter.values.size();
    }
    features_ = features;
    gram_ = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(features), static_cast<Eigen::Index>(features));
    observed_.clear();
    fitted_ = false;
  }

  // A test's cost (runtime, or +infinity for a failure).
  void observe(ConfigIndex config, double cost) {
    std::vector<std::size_t> active = active_features(config);
    for (std::size_t i : active) {
      for (std::size_t j : active) gram_(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) += 1;
    }
    observed_.push_back({std::isfinite(cost) ? std::log(cost) : kFailed, std::move(active)});
    fitted_ = false;
  }

  std::size_t observations() const { return observed_.size(); }
  bool has_valid() const {
    return std::any_of(observed_.begin(), observed_.end(), [](const Observation& o) { return o.log_cost != kFailed; });
  }

  // mean - kappa x standard deviation of the predicted log runtime (lower is more promising).
  double lower_bound(ConfigIndex config, double kappa) {
    if (!fitted_) fit();
    const std::vector<std::size_t> active = active_features(config);
    double variance = 0;
    for (std::size_t i : active) {
      for (std::size_t j : active) variance += covariance_(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
    }
    return predict_mean(active) - kappa * sigma_ * std::sqrt(1 + std::max(0.0, variance));
  }

 private:
  static constexpr double kFailed = std::numeric_limits<double>::infinity();
  struct Observation {
    double log_cost;  // kFailed for a failed test
    std::vector<std::size_t> active;
  };

  std::vector<std::size_t> active_features(ConfigIndex c) const {
    const ValueIndices v = space_->value_indices(c);
    std::vector<std::size_t> active(v.size());
    for (std::size_t p = 0; p < v.size(); ++p) active[p] = offsets_[p] + v[p];
    return active;
  }

  // Failures read as twice the slowest valid runtime, so the model steers away from them
  // without an outlier that swamps the scale.
  void fit() {
    double slowest = -std::numeric_limits<double>::infinity();
    for (const Observation& o : observed_) {
      if (o.log_cost != kFailed) slowest = std::max(slowest, o.log_cost);
    }
    const double failed = std::isfinite(slowest) ? slowest + std::log(2.0) : 0.0;
    std::vector<double> targets;
    targets.reserve(observed_.size());
    double total = 0;
    for (const Observation& o : observed_) {
      targets.push_back(o.log_cost == kFailed ? failed : o.log_cost);
      total += targets.back();
    }
    mean_ = targets.empty() ? 0 : total / static_cast<double>(targets.size());
    const auto d = static_cast<Eigen::Index>(features_);
    Eigen::VectorXd moment = Eigen::VectorXd::Zero(d);
    for (std::size_t k = 0; k < observed_.size(); ++k) {
      for (std::size_t i : observed_[k].active) moment[static_cast<Eigen::Index>(i)] += targets[k] - mean_;
    }
    Eigen::MatrixXd precision = gram_;
    precision.diagonal().array() += ridge_;
    const Eigen::LLT<Eigen::MatrixXd> llt(precision);
    weights_ = llt.solve(moment);
    covariance_ = llt.solve(Eigen::MatrixXd::Identity(d, d));
    double squares = 0;
    for (std::size_t k = 0; k < observed_.size(); ++k) {
      const double residual = targets[k] - predict_mean(observed_[k].active);
      squares += residual * residual;
    }
    // The residual spread, never below a floor: an exact fit of few points would claim a
    // certainty it does not have.
    sigma_ = observed_.empty() ? 1 : std::sqrt(squares / static_cast<double>(observed_.size()) + 1e-4);
    fitted_ = true;
  }

  double predict_mean(const std::vector<std::size_t>& active) const {
    double y = mean_;
    for (std::size_t i : active) y += weights_[static_cast<Eigen::Index>(i)];
    return y;
  }

  double ridge_;
  const Space* space_ = nullptr;
  std::vector<std::size_t> offsets_;
  std::size_t features_ = 0;
  Eigen::MatrixXd gram_;  // sum of x x^T over observations
  std::vector<Observation> observed_;
  bool fitted_ = false;
  Eigen::VectorXd weights_;
  Eigen::MatrixXd covariance_;
  double mean_ = 0, sigma_ = 1;
};

}  // namespace steer::search
