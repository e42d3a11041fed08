// Least-squares polynomials per subspace of the binary parameters (method.md §5.1).
#include "model/least_squares.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "steer/model.hpp"

namespace steer::model {
namespace {

// Coefficients [term][counter] minimising ||X B - Y||. A rank-deficient X (fewer distinct rows
// than terms, or collinear terms) gets a ridge solve, which picks small coefficients for the
// directions the data does not determine instead of arbitrary ones.
Eigen::MatrixXd solve(const Eigen::MatrixXd& x, const Eigen::MatrixXd& y, double ridge) {
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(x);
  if (qr.rank() == x.cols()) return qr.solve(y);
  Eigen::MatrixXd gram = x.transpose() * x;
  const double mean_diagonal = std::max(gram.diagonal().mean(), 1e-300);
  for (Eigen::Index i = 1; i < gram.rows(); ++i) gram(i, i) += ridge * mean_diagonal;  // intercept unpenalised
  if (gram.rows() > 0) gram(0, 0) += 1e-12 * mean_diagonal;
  return gram.ldlt().solve(x.transpose() * y);
}

Eigen::MatrixXd matrix_from_json(const nlohmann::json& rows, std::size_t terms, std::size_t counters) {
  if (rows.size() != terms) throw ModelError(fmt::format("expected {} coefficient rows, found {}", terms, rows.size()));
  Eigen::MatrixXd m(static_cast<Eigen::Index>(terms), static_cast<Eigen::Index>(counters));
  for (std::size_t t = 0; t < terms; ++t) {
    if (rows[t].size() != counters) {
      throw ModelError(fmt::format("coefficient row {} has {} values, expected {}", t, rows[t].size(), counters));
    }
    for (std::size_t k = 0; k < counters; ++k) {
      m(static_cast<Eigen::Index>(t), static_cast<Eigen::Index>(k)) = rows[t][k].get<double>();
    }
  }
  return m;
}

nlohmann::json matrix_to_json(const Eigen::MatrixXd& m) {
  nlohmann::json rows = nlohmann::json::array();
  for (Eigen::Index t = 0; t < m.rows(); ++t) {
    nlohmann::json row = nlohmann::json::array();
    for (Eigen::Index k = 0; k < m.cols(); ++k) row.push_back(m(t, k));
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

LeastSquaresModel::Terms LeastSquaresModel::Terms::polynomial(const std::vector<std::size_t>& features,
                                                             std::size_t quadratic_from, std::size_t max_order) {
  Terms terms;
  terms.monomials.emplace_back();  // intercept
  // Products of 1..max_order distinct features, by order, each in lexicographic order.
  std::vector<std::vector<std::uint32_t>> previous{{}};
  for (std::size_t order = 1; order <= std::max<std::size_t>(max_order, 1); ++order) {
    std::vector<std::vector<std::uint32_t>> next;
    for (const auto& monomial : previous) {
      // Positions in `features` after the monomial's last one, so each set appears once.
      std::size_t from = 0;
      if (!monomial.empty()) {
        from = static_cast<std::size_t>(
                   std::find(features.begin(), features.end(), monomial.back()) - features.begin()) + 1;
      }
      for (std::size_t f = from; f < features.size(); ++f) {
        std::vector<std::uint32_t> extended = monomial;
        extended.push_back(static_cast<std::uint32_t>(features[f]));
        next.push_back(std::move(extended));
      }
    }
    terms.monomials.insert(terms.monomials.end(), next.begin(), next.end());
    previous = std::move(next);
  }
  for (std::size_t f = quadratic_from; f < features.size(); ++f) {
    terms.monomials.push_back({static_cast<std::uint32_t>(features[f]), static_cast<std::uint32_t>(features[f])});
  }
  return terms;
}

void LeastSquaresModel::Terms::expand(std::span<const double> coded, std::span<double> out) const {
  for (std::size_t t = 0; t < monomials.size(); ++t) {
    double product = 1;
    for (std::uint32_t position : monomials[t]) product *= coded[position];
    out[t] = product;
  }
}

std::uint64_t LeastSquaresModel::key_of(std::span<const double> features) const {
  std::uint64_t key = 0;
  for (std::size_t b = 0; b < binary_.size(); ++b) {
    const double v = features[binary_[b]];
    // A value the training data did not have (another space) goes with the nearer one.
    if (std::abs(v - binary_high_[b]) < std::abs(v - binary_low_[b])) key |= std::uint64_t{1} << b;
  }
  return key;
}

void LeastSquaresModel::code(std::span<const double> features, std::span<double> out) const {
  for (std::size_t i = 0; i < numeric_.size(); ++i) {
    const double x = features[numeric_[i]];
    // A value at or below 0 on a log-coded parameter (another space) is taken as the lowest.
    const double v = log_coded_[i] ? (x > 0 ? std::log2(x) : low_[i]) : x;
    out[i] = 2 * (v - low_[i]) / (high_[i] - low_[i]) - 1;
  }
  for (std::size_t b = 0; b < binary_.size(); ++b) {
    const double v = features[binary_[b]];
    out[numeric_.size() + b] = 2 * (v - binary_low_[b]) / (binary_high_[b] - binary_low_[b]) - 1;
  }
}

LeastSquaresModel LeastSquaresModel::fit(const std::vector<std::vector<double>>& features,
                                         const std::vector<std::vector<double>>& targets,
                                         const LeastSquaresOptions& options) {
  if (features.empty() || features.size() != targets.size()) {
    throw ModelError("least squares: needs as many target rows as feature rows, at least one");
  }
  LeastSquaresModel model;
  model.parameters_ = features[0].size();
  model.counters_ = targets[0].size();
  for (std::size_t p = 0; p < model.parameters_; ++p) {
    std::set<double> values;
    for (const auto& row : features) values.insert(row[p]);
    if (values.size() == 2) {
      if (model.binary_.size() == 63) throw ModelError("least squares: more than 63 binary parameters");
      model.binary_.push_back(p);
      model.binary_low_.push_back(*values.begin());
      model.binary_high_.push_back(*values.rbegin());
    } else if (values.size() > 2) {
      const double low = *values.begin(), high = *values.rbegin();
      const bool log_coded = options.logarithmic && low > 0 && high >= 4 * low;
      model.numeric_.push_back(p);
      model.log_coded_.push_back(log_coded);
      model.low_.push_back(log_coded ? std::log2(low) : low);
      model.high_.push_back(log_coded ? std::log2(high) : high);
    }
  }
  model.log_targets_ = options.logarithmic;
  const std::size_t numeric = model.numeric_.size();
  std::vector<std::size_t> numeric_positions, pooled_positions;
  for (std::size_t i = 0; i < numeric; ++i) numeric_positions.push_back(i);
  // Pooled: binary features first so that only the numeric ones get squares.
  for (std::size_t b = 0; b < model.binary_.size(); ++b) pooled_positions.push_back(numeric + b);
  pooled_positions.insert(pooled_positions.end(), numeric_positions.begin(), numeric_positions.end());
  model.subspace_terms_ = Terms::polynomial(numeric_positions, 0, options.interaction_order);
  model.pooled_terms_ = Terms::polynomial(pooled_positions, model.binary_.size(), options.interaction_order);

  std::map<std::uint64_t, std::vector<std::size_t>> rows_of;
  for (std::size_t r = 0; r < features.size(); ++r) rows_of[model.key_of(features[r])].push_back(r);

  std::vector<double> coded(numeric + model.binary_.size());
  auto fit_rows = [&](const std::vector<std::size_t>& rows, const Terms& terms) {
    Eigen::MatrixXd x(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(terms.count()));
    Eigen::MatrixXd y(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(model.counters_));
    std::vector<double> expanded(terms.count());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      model.code(features[rows[i]], coded);
      terms.expand(coded, expanded);
      for (std::size_t t = 0; t < expanded.size(); ++t) x(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(t)) = expanded[t];
      for (std::size_t k = 0; k < model.counters_; ++k) {
        const double target = targets[rows[i]][k];
        // Counters are >= 0; a slightly negative one (rounding in the profiler) counts as 0.
        y(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(k)) =
            model.log_targets_ ? std::log1p(std::max(0.0, target)) : target;
      }
    }
    return solve(x, y, options.ridge);
  };
  for (const auto& [key, rows] : rows_of) model.subspaces_[key] = fit_rows(rows, model.subspace_terms_);
  std::vector<std::size_t> all(features.size());
  for (std::size_t r = 0; r < all.size(); ++r) all[r] = r;
  model.pooled_ = fit_rows(all, model.pooled_terms_);
  return model;
}

void LeastSquaresModel::predict(std::span<const double> features, std::span<double> out,
                                std::vector<double>& scratch) const {
  auto found = subspaces_.find(key_of(features));
  const Terms& terms = found != subspaces_.end() ? subspace_terms_ : pooled_terms_;
  const Eigen::MatrixXd& coefficients = found != subspaces_.end() ? found->second : pooled_;
  const std::size_t coded_size = numeric_.size() + binary_.size();
  scratch.resize(coded_size + terms.count());
  std::span<double> coded(scratch.data(), coded_size);
  std::span<double> expanded(scratch.data() + coded_size, terms.count());
  code(features, coded);
  terms.expand(coded, expanded);
  for (std::size_t k = 0; k < counters_; ++k) {
    double sum = 0;
    for (std::size_t t = 0; t < expanded.size(); ++t) sum += expanded[t] * coefficients(static_cast<Eigen::Index>(t), static_cast<Eigen::Index>(k));
    out[k] = log_targets_ ? std::expm1(sum) : sum;
  }
}

nlohmann::json LeastSquaresModel::to_json() const {
  nlohmann::json binary = nlohmann::json::array(), numeric = nlohmann::json::array();
  for (std::size_t b = 0; b < binary_.size(); ++b) {
    binary.push_back({{"parameter", binary_[b]}, {"low", binary_low_[b]}, {"high", binary_high_[b]}});
  }
  for (std::size_t i = 0; i < numeric_.size(); ++i) {
    numeric.push_back(
        {{"parameter", numeric_[i]}, {"low", low_[i]}, {"high", high_[i]}, {"log2", static_cast<bool>(log_coded_[i])}});
  }
  nlohmann::json subspaces = nlohmann::json::array();
  for (const auto& [key, coefficients] : subspaces_) {
    nlohmann::json high = nlohmann::json::array();
    for (std::size_t b = 0; b < binary_.size(); ++b) high.push_back(((key >> b) & 1) != 0);
    subspaces.push_back({{"binary_high", high}, {"coefficients", matrix_to_json(coefficients)}});
  }
  auto monomials = [](const Terms& terms) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& monomial : terms.monomials) out.push_back(monomial);
    return out;
  };
  return {{"coding", "z = 2 (v - low) / (high - low) - 1, v the value or its log2 (numeric) and the binary "
                     "parameters after the numeric ones; a term multiplies the z at its positions"},
          {"terms", monomials(subspace_terms_)},
          {"targets", log_targets_ ? "log1p" : "counter"},
          {"binary", binary},
          {"numeric", numeric},
          {"subspaces", subspaces},
          {"pooled", {{"terms", monomials(pooled_terms_)}, {"coefficients", matrix_to_json(pooled_)}}}};
}

LeastSquaresModel LeastSquaresModel::from_json(const nlohmann::json& json, std::size_t parameters,
                                               std::size_t counters) {
  LeastSquaresModel model;
  model.parameters_ = parameters;
  model.counters_ = counters;
  auto parameter_index = [&](const nlohmann::json& entry) {
    const auto p = entry.at("parameter").get<std::size_t>();
    if (p >= parameters) throw ModelError(fmt::format("parameter index {} out of range", p));
    return p;
  };
  for (const auto& entry : json.at("binary")) {
    model.binary_.push_back(parameter_index(entry));
    model.binary_low_.push_back(entry.at("low").get<double>());
    model.binary_high_.push_back(entry.at("high").get<double>());
  }
  for (const auto& entry : json.at("numeric")) {
    model.numeric_.push_back(parameter_index(entry));
    model.low_.push_back(entry.at("low").get<double>());
    model.high_.push_back(entry.at("high").get<double>());
    model.log_coded_.push_back(entry.at("log2").get<bool>());
  }
  const std::string targets = json.at("targets").get<std::string>();
  if (targets != "log1p" && targets != "counter") throw ModelError(fmt::format("unknown targets '{}'", targets));
  model.log_targets_ = targets == "log1p";
  if (model.binary_.size() > 63) throw ModelError("more than 63 binary parameters");
  const std::size_t coded = model.numeric_.size() + model.binary_.size();
  auto read_terms = [&](const nlohmann::json& json_terms, std::size_t positions) {
    Terms terms;
    for (const auto& monomial : json_terms) {
      terms.monomials.push_back(monomial.get<std::vector<std::uint32_t>>());
      for (std::uint32_t position : terms.monomials.back()) {
        if (position >= positions) throw ModelError(fmt::format("term position {} out of range", position));
      }
    }
    return terms;
  };
  model.subspace_terms_ = read_terms(json.at("terms"), model.numeric_.size());
  model.pooled_terms_ = read_terms(json.at("pooled").at("terms"), coded);
  for (const auto& subspace : json.at("subspaces")) {
    const auto& high = subspace.at("binary_high");
    if (high.size() != model.binary_.size()) throw ModelError("a subspace key does not match the binary parameters");
    std::uint64_t key = 0;
    for (std::size_t b = 0; b < high.size(); ++b) {
      if (high[b].get<bool>()) key |= std::uint64_t{1} << b;
    }
    model.subspaces_[key] = matrix_from_json(subspace.at("coefficients"), model.subspace_terms_.count(), counters);
  }
  model.pooled_ = matrix_from_json(json.at("pooled").at("coefficients"), model.pooled_terms_.count(), counters);
  return model;
}

}  // namespace steer::model
