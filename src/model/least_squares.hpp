#pragma once
// The least-squares counter model of method.md §5.1, internal to src/model/: the binary
// parameters (exactly two values in the training data) split the rows into subspaces; in
// each, every counter is a polynomial of the other parameters coded to [-1, 1] with main
// effects, pairwise interactions and quadratic terms.
#include <Eigen/Dense>

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <vector>

namespace steer::model {

struct LeastSquaresOptions {
  double ridge = 1e-6;  // relative to the mean diagonal of XᵀX, used only when XᵀX is singular
  // Fit log(1 + counter) over parameters coded on a log scale where their values are positive
  // and span a factor of 4 or more (tile sizes, unroll factors): counters are mostly products
  // and quotients of such parameters (threads = N / Z_ITERATIONS), which a low-order polynomial
  // of the raw values cannot follow but one of the logarithms can.
  bool logarithmic = true;
  // Highest order of the interactions between distinct parameters (2: pairwise, the
  // default; the paper also allows higher ones).
  std::size_t interaction_order = 2;
};

class LeastSquaresModel {
 public:
  // features[row][parameter], targets[row][counter]; no NaN. Parameters with a single value
  // carry no information and are left out.
  static LeastSquaresModel fit(const std::vector<std::vector<double>>& features,
                               const std::vector<std::vector<double>>& targets, const LeastSquaresOptions& options);

  // Counters of one configuration (features in the training order), unclamped. `scratch` is
  // reused between calls, so predicting a whole space allocates once.
  void predict(std::span<const double> features, std::span<double> out, std::vector<double>& scratch) const;

  nlohmann::json to_json() const;
  static LeastSquaresModel from_json(const nlohmann::json& json, std::size_t parameters, std::size_t counters);

  std::size_t subspaces() const noexcept { return subspaces_.size(); }

 private:
  // A polynomial over coded features: each monomial lists the positions it multiplies (the
  // empty one is the intercept, a repeated position a square).
  struct Terms {
    std::vector<std::vector<std::uint32_t>> monomials;
    // 1, every feature, the products of 2..max_order distinct features, the squares of
    // features[quadratic_from..].
    static Terms polynomial(const std::vector<std::size_t>& features, std::size_t quadratic_from,
                            std::size_t max_order);
    std::size_t count() const { return monomials.size(); }
    void expand(std::span<const double> coded, std::span<double> out) const;
  };

  // Subspace key: bit b set when binary parameter b has its second (higher) value.
  std::uint64_t key_of(std::span<const double> features) const;
  // Parameters coded to [-1, 1]: the non-binary ones, then (for the pooled fit) the binary ones.
  void code(std::span<const double> features, std::span<double> out) const;

  std::size_t parameters_ = 0, counters_ = 0;
  std::vector<std::size_t> binary_;           // parameter indices with exactly two values
  std::vector<double> binary_low_, binary_high_;
  std::vector<std::size_t> numeric_;          // parameter indices with three or more values
  std::vector<double> low_, high_;            // coding range of each numeric parameter (log2 when log_coded_)
  std::vector<bool> log_coded_;               // numeric parameter coded on a log2 scale
  bool log_targets_ = false;                  // the polynomials predict log(1 + counter)
  Terms subspace_terms_;                      // over the numeric parameters
  Terms pooled_terms_;                        // over numeric and binary parameters
  std::map<std::uint64_t, Eigen::MatrixXd> subspaces_;  // key -> coefficients [term][counter]
  Eigen::MatrixXd pooled_;  // every row, binary parameters as features: for subspaces without rows
};

}  // namespace steer::model
