// Bayesian optimisation over valid configurations only: a Gaussian process models runtime
// from the parameters' value indices scaled to [0, 1]; each next test is the configuration of
// greatest expected improvement among a random subset of the untested ones plus the untested
// neighbours of the fastest so far. Sequential, like Kernel Tuner's bayes_opt: every choice
// waits for the previous result.
//
// Cost: a refit is a Cholesky factorisation of the n x n kernel matrix, O(n^3), and scoring m
// candidates is O(m n^2); so the model keeps at most `max_points` measurements (half the
// fastest, half spread over the rest), 300 by default: about 10 ms per choice.
#include <Eigen/Cholesky>
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numbers>
#include <set>
#include <utility>

#include "search/latin_hypercube.hpp"
#include "search/search_support.hpp"
#include "steer/searcher.hpp"

namespace steer {
namespace {

enum class Covariance { Matern32, Matern52, Rbf };

struct BayesOptions {
  std::uint64_t initial_samples = 20;            // tests before the model chooses (KT's popsize)
  bool latin_hypercube = true;                   // KT's samplingmethod: lhs (true) or random
  std::uint64_t candidates = 1000;               // random untested configurations scored per choice
  std::uint64_t max_points = 300;                // measurements the Gaussian process is fitted to
  Covariance covariance = Covariance::Matern32;  // KT's covariancekernel
  double lengthscale = 1.5;                      // KT's covariancelengthscale, in scaled units
  double xi = 0.01;                              // expected improvement's exploration margin
};

class BayesSearcher final : public Searcher {
 public:
  BayesSearcher(std::uint64_t seed, BayesOptions options) : random_(seed), options_(options) {}
  std::string name() const override { return "bayes"; }

  void start(const Space& space) override {
    space_ = &space;
    memory_.reset(space.size());
    initial_ = options_.latin_hypercube ? search::latin_hypercube(space, options_.initial_samples, random_)
                                        : space.sample(random_.engine(), options_.initial_samples);
    next_initial_ = 0;
    measured_.clear();
  }

  std::vector<Proposal> propose(std::size_t max) override {
    std::vector<Proposal> out;
    while (out.size() < max && next_initial_ < initial_.size()) {
      memory_.propose(initial_[next_initial_]);
      out.push_back({initial_[next_initial_++], {}});
    }
    if (out.size() < max && memory_.pending() == 0 && !memory_.exhausted()) {
      const ConfigIndex next = most_promising();  // the initial samples are all measured now
      memory_.propose(next);
      out.push_back({next, {}});
    }
    return out;
  }

  void observe(const Result& result) override {
    measured_.emplace_back(memory_.observe(result), result.config_index);
  }

 private:
  Eigen::VectorXd features(ConfigIndex c) const {
    const ValueIndices v = space_->value_indices(c);
    const auto& parameters = space_->parameters();
    Eigen::VectorXd x(static_cast<Eigen::Index>(v.size()));
    for (std::size_t p = 0; p < v.size(); ++p) {
      const auto last = static_cast<double>(parameters[p].values.size() - 1);
      x[static_cast<Eigen::Index>(p)] = last > 0 ? v[p] / last : 0.0;
    }
    return x;
  }

  double kernel(const Eigen::VectorXd& a, const Eigen::VectorXd& b) const {
    const double r = (a - b).norm() / options_.lengthscale;
    switch (options_.covariance) {
      case Covariance::Matern32:
        return (1 + std::sqrt(3.0) * r) * std::exp(-std::sqrt(3.0) * r);
      case Covariance::Matern52:
        return (1 + std::sqrt(5.0) * r + 5.0 / 3.0 * r * r) * std::exp(-std::sqrt(5.0) * r);
      case Covariance::Rbf:
        break;
    }
    return std::exp(-0.5 * r * r);
  }

  // Untested candidates: every one in a small space, else a random subset; plus the untested
  // Hamming neighbours of the fastest configuration, where improvement is most likely.
  std::vector<ConfigIndex> candidates(ConfigIndex best) {
    std::set<ConfigIndex> chosen;
    if (space_->size() <= 4 * options_.candidates) {
      for (ConfigIndex c = 0; c < space_->size(); ++c) {
        if (!memory_.seen(c)) chosen.insert(c);
      }
    } else {
      for (std::uint64_t attempt = 0;
           attempt < 4 * options_.candidates && chosen.size() < options_.candidates; ++attempt) {
        const ConfigIndex c = space_->sample(random_.engine());
        if (!memory_.seen(c)) chosen.insert(c);
      }
    }
    for (ConfigIndex c : space_->neighbours(best)) {
      if (!memory_.seen(c)) chosen.insert(c);
    }
    if (chosen.empty()) chosen.insert(*memory_.random_unseen(*space_, random_));
    return {chosen.begin(), chosen.end()};
  }

  ConfigIndex most_promising() {
    // The model's points, ranked by runtime; failures take the slowest successful runtime, so
    // they read as bad without an outlier that would swamp the scale.
    std::vector<std::pair<double, ConfigIndex>> points = measured_;
    std::sort(points.begin(), points.end());
    double slowest_ok = 0;
    for (const auto& [cost, c] : points) {
      if (std::isfinite(cost)) slowest_ok = std::max(slowest_ok, cost);
    }
    for (auto& [cost, c] : points) {
      if (!std::isfinite(cost)) cost = slowest_ok > 0 ? slowest_ok : 1.0;
    }
    if (points.size() > options_.max_points) {
      // The fastest half, where expected improvement is decided, and an even spread of the
      // rest by rank: a model of the fastest only would forget where the slow regions are
      // and find them uncertain, so worth testing, again and again.
      const std::size_t fastest = options_.max_points / 2;
      const std::size_t spread = options_.max_points - fastest;
      const double stride = static_cast<double>(points.size() - fastest) / static_cast<double>(spread);
      std::vector<std::pair<double, ConfigIndex>> kept(points.begin(),
                                                       points.begin() + static_cast<std::ptrdiff_t>(fastest));
      for (std::size_t k = 0; k < spread; ++k) {
        kept.push_back(points[fastest + static_cast<std::size_t>(static_cast<double>(k) * stride)]);
      }
      points = std::move(kept);
    }

    const auto n = static_cast<Eigen::Index>(points.size());
    std::vector<Eigen::VectorXd> x;
    Eigen::VectorXd y(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      x.push_back(features(points[static_cast<std::size_t>(i)].second));
      y[i] = points[static_cast<std::size_t>(i)].first;
    }
    // Standardised targets: the kernel has unit variance.
    const double mean = y.mean();
    const double spread = std::sqrt((y.array() - mean).square().mean());
    y = (y.array() - mean) / (spread > 0 ? spread : 1.0);

    Eigen::MatrixXd k(n, n);
    for (Eigen::Index i = 0; i < n; ++i) {
      for (Eigen::Index j = 0; j <= i; ++j)
        k(i, j) = k(j, i) = kernel(x[static_cast<std::size_t>(i)], x[static_cast<std::size_t>(j)]);
    }
    // Nearby configurations make the matrix nearly singular; a growing nugget restores it.
    Eigen::LLT<Eigen::MatrixXd> cholesky;
    for (double nugget = 1e-6;; nugget *= 10) {
      cholesky.compute(k + nugget * Eigen::MatrixXd::Identity(n, n));
      if (cholesky.info() == Eigen::Success) break;
    }
    const Eigen::VectorXd weights = cholesky.solve(y);
    const double best = y.minCoeff();

    const std::vector<ConfigIndex> pool = candidates(points.front().second);
    // All candidates at once: one triangular solve with many right-hand sides is far faster
    // than one solve per candidate.
    const auto m = static_cast<Eigen::Index>(pool.size());
    Eigen::MatrixXd kstar(n, m);
    for (Eigen::Index j = 0; j < m; ++j) {
      const Eigen::VectorXd xc = features(pool[static_cast<std::size_t>(j)]);
      for (Eigen::Index i = 0; i < n; ++i) kstar(i, j) = kernel(xc, x[static_cast<std::size_t>(i)]);
    }
    const Eigen::VectorXd mu = kstar.transpose() * weights;
    cholesky.matrixL().solveInPlace(kstar);
    const Eigen::VectorXd explained = kstar.colwise().squaredNorm().transpose();
    ConfigIndex choice = pool.front();
    double choice_ei = -1;
    for (Eigen::Index j = 0; j < m; ++j) {
      const double sigma = std::sqrt(std::max(0.0, 1.0 - explained[j]));
      const double ei = expected_improvement(best - options_.xi - mu[j], sigma);
      if (ei > choice_ei) {  // strict: ties keep the lower index
        choice = pool[static_cast<std::size_t>(j)];
        choice_ei = ei;
      }
    }
    return choice;
  }

  // E[max(0, gain)] for a Gaussian gain with mean `gain` and standard deviation `sigma`.
  static double expected_improvement(double gain, double sigma) {
    if (sigma <= 1e-12) return std::max(0.0, gain);
    const double z = gain / sigma;
    const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2 * std::numbers::pi);
    const double cdf = 0.5 * std::erfc(-z / std::numbers::sqrt2);
    return gain * cdf + sigma * pdf;
  }

  search::Random random_;
  BayesOptions options_;
  const Space* space_ = nullptr;
  search::Memory memory_;
  std::vector<ConfigIndex> initial_;
  std::size_t next_initial_ = 0;
  std::vector<std::pair<double, ConfigIndex>> measured_;  // (cost, configuration), as observed
};

}  // namespace

std::unique_ptr<Searcher> make_bayes_searcher(const SearcherOptions& options) {
  search::Settings settings("bayes", options.settings);
  BayesOptions bayes;
  bayes.initial_samples = settings.integer("popsize", bayes.initial_samples, 1, 1'000'000);
  bayes.latin_hypercube = settings.choice("samplingmethod", "lhs", {"lhs", "random"}) == "lhs";
  bayes.candidates = settings.integer("candidates", bayes.candidates, 1, 10'000'000);
  bayes.max_points = settings.integer("max_points", bayes.max_points, 2, 5'000);
  const std::string covariance =
      settings.choice("covariancekernel", "matern32", {"matern32", "matern52", "rbf"});
  bayes.covariance = covariance == "matern32"   ? Covariance::Matern32
                     : covariance == "matern52" ? Covariance::Matern52
                                                : Covariance::Rbf;
  bayes.lengthscale = settings.number("covariancelengthscale", bayes.lengthscale, 1e-6, 1e6);
  bayes.xi = settings.number("xi", bayes.xi, 0, 1e6);
  settings.finish();
  return std::make_unique<BayesSearcher>(options.seed, bayes);
}

}  // namespace steer
