// Counter models: training (least squares, tree, forest), prediction over a space, JSON files.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>

#include "model/least_squares.hpp"
#include "model/regression_tree.hpp"
#include "steer/model.hpp"

namespace steer {
namespace {

constexpr const char* kFormat = "steer-counter-model";
constexpr int kVersion = 1;

// Seeded draws that give the same numbers with any standard library.
class Draws {
 public:
  explicit Draws(std::uint64_t seed) : engine_(seed) {}
  std::size_t below(std::size_t n) {
    const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    for (;;) {
      const std::uint64_t x = engine_();
      if (x < limit) return static_cast<std::size_t>(x % n);
    }
  }
  std::vector<std::size_t> permutation(std::size_t n) {
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    for (std::size_t i = n; i > 1; --i) std::swap(order[i - 1], order[below(i)]);
    return order;
  }

 private:
  std::mt19937_64 engine_;
};

double median(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  if (values.size() % 2 == 1) return *middle;
  return (*middle + *std::max_element(values.begin(), middle)) / 2;
}

nlohmann::json value_json(const Value& value) {
  switch (value.type()) {
    case ValueType::Int: return value.as_int();
    case ValueType::Float: return value.as_double();
    case ValueType::Bool: return value.as_bool();
    case ValueType::String: return value.as_string();
  }
  return nullptr;
}

Value value_from_json(const nlohmann::json& json) {
  if (json.is_boolean()) return Value(json.get<bool>());
  if (json.is_number_integer()) return Value(json.get<std::int64_t>());
  if (json.is_number()) return Value(json.get<double>());
  if (json.is_string()) return Value(json.get<std::string>());
  throw ModelError(fmt::format("parameter value {} is not a number, bool or string", json.dump()));
}

std::optional<CounterFamily> family_from_string(std::string_view text) {
  for (CounterFamily family : {CounterFamily::PreVolta, CounterFamily::VoltaPlus, CounterFamily::Ktt}) {
    if (text == to_string(family)) return family;
  }
  return std::nullopt;
}

// The fitted tree's mean absolute and root mean squared error on `rows`.
std::pair<double, double> tree_errors(const model::RegressionTree& tree, const TrainingSet& data,
                                      std::span<const std::size_t> rows, std::size_t k) {
  double absolute = 0, squared = 0;
  for (std::size_t r : rows) {
    const double error = tree.predict(std::span<const double>(data.features[r])) - data.targets[r][k];
    absolute += std::abs(error);
    squared += error * error;
  }
  const auto n = static_cast<double>(std::max<std::size_t>(rows.size(), 1));
  return {absolute / n, std::sqrt(squared / n)};
}

model::RegressionTree fit_tree(const TrainingSet& data, std::span<const std::size_t> rows, std::size_t k,
                               const model::RegressionTreeOptions& options) {
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (std::size_t r : rows) {
    x.push_back(data.features[r]);
    y.push_back(data.targets[r][k]);
  }
  return model::RegressionTree::fit(x, y, options);
}

}  // namespace

struct CounterModel::Impl {
  ModelKind kind = ModelKind::LeastSquares;
  std::vector<Parameter> parameters;
  std::vector<std::string> counters;
  ModelProvenance provenance;
  RecordedRuntimes recorded;
  std::optional<model::LeastSquaresModel> least_squares;
  std::vector<std::vector<model::RegressionTree>> trees;  // [counter][tree]; one tree each for Tree

  void predict(std::span<const double> features, std::span<double> out, std::vector<double>& scratch) const {
    if (least_squares) {
      least_squares->predict(features, out, scratch);
    } else {
      for (std::size_t k = 0; k < counters.size(); ++k) {
        double sum = 0;
        for (const model::RegressionTree& tree : trees[k]) sum += tree.predict(features);
        out[k] = sum / static_cast<double>(trees[k].size());
      }
    }
    for (double& value : out) value = std::max(0.0, value);
  }
};

CounterModel::CounterModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CounterModel::CounterModel(const CounterModel& other) : impl_(std::make_unique<Impl>(*other.impl_)) {}
CounterModel::CounterModel(CounterModel&&) noexcept = default;
CounterModel& CounterModel::operator=(CounterModel&&) noexcept = default;
CounterModel::~CounterModel() = default;

ModelKind CounterModel::kind() const noexcept { return impl_->kind; }
const std::vector<Parameter>& CounterModel::parameters() const noexcept { return impl_->parameters; }
const std::vector<std::string>& CounterModel::counters() const noexcept { return impl_->counters; }
const ModelProvenance& CounterModel::provenance() const noexcept { return impl_->provenance; }
const RecordedRuntimes& CounterModel::recorded_runtimes() const noexcept { return impl_->recorded; }

CounterModel CounterModel::train(const TrainingSet& data, const TrainOptions& options) {
  if (data.rows() == 0) throw ModelError("cannot train a counter model on no rows");
  if (data.counters.empty()) throw ModelError("cannot train a counter model without counters");
  if (options.tree_splits < 1 || options.forest_trees < 1 || options.min_samples_leaf < 1 ||
      options.lsq_interaction_order < 1 || !(options.ridge >= 0)) {
    throw ModelError(
        "train: tree_splits, forest_trees, min_samples_leaf and lsq_interaction_order must be >= 1, ridge >= 0");
  }
  auto impl = std::make_unique<Impl>();
  impl->kind = options.kind;
  impl->parameters = data.parameters;
  impl->counters = data.counters;
  impl->provenance = data.provenance;
  impl->provenance.rows = data.rows();
  impl->recorded = data.runtimes;
  Draws draws(options.seed);
  model::RegressionTreeOptions tree_options;
  tree_options.min_samples_leaf = options.min_samples_leaf;
  std::vector<std::size_t> all(data.rows());
  std::iota(all.begin(), all.end(), std::size_t{0});

  switch (options.kind) {
    case ModelKind::LeastSquares:
      impl->least_squares = model::LeastSquaresModel::fit(data.features, data.targets,
                                                           {options.ridge, options.lsq_logarithmic, options.lsq_interaction_order});
      break;
    case ModelKind::Tree:
      // Per counter, the best of several trees each grown on a random half and judged on the
      // other half (method.md §5.2); with fewer than 4 rows there is no half to judge on.
      for (std::size_t k = 0; k < data.counters.size(); ++k) {
        if (data.rows() < 4) {
          impl->trees.push_back({fit_tree(data, all, k, tree_options)});
          continue;
        }
        std::optional<model::RegressionTree> best;
        std::pair<double, double> best_errors{INFINITY, INFINITY};
        for (int split = 0; split < options.tree_splits; ++split) {
          const std::vector<std::size_t> order = draws.permutation(data.rows());
          const std::size_t half = order.size() / 2;
          std::span<const std::size_t> train(order.data(), half), test(order.data() + half, order.size() - half);
          model::RegressionTree tree = fit_tree(data, train, k, tree_options);
          const std::pair<double, double> errors = tree_errors(tree, data, test, k);
          if (!best || errors < best_errors) {
            best = std::move(tree);
            best_errors = errors;
          }
        }
        impl->trees.push_back({std::move(*best)});
      }
      break;
    case ModelKind::Forest:
      for (std::size_t k = 0; k < data.counters.size(); ++k) {
        std::vector<model::RegressionTree> forest;
        for (int t = 0; t < options.forest_trees; ++t) {
          std::vector<std::size_t> bootstrap(data.rows());
          for (std::size_t& row : bootstrap) row = draws.below(data.rows());
          forest.push_back(fit_tree(data, bootstrap, k, tree_options));
        }
        impl->trees.push_back(std::move(forest));
      }
      break;
  }
  return CounterModel(std::move(impl));
}

std::vector<double> CounterModel::predict(std::span<const double> features) const {
  if (features.size() != impl_->parameters.size()) {
    throw ModelError(fmt::format("predict: {} features given, the model has {} parameters", features.size(),
                                 impl_->parameters.size()));
  }
  std::vector<double> out(impl_->counters.size()), scratch;
  impl_->predict(features, out, scratch);
  return out;
}

PredictedCounters CounterModel::predict(const Space& space) const {
  // Per model parameter, the feature of each value index of the matching space parameter.
  const std::size_t n = impl_->parameters.size();
  std::vector<std::optional<std::size_t>> space_parameter(n);
  std::vector<std::vector<double>> feature_of_value(n);
  for (std::size_t p = 0; p < n; ++p) {
    const Parameter& parameter = impl_->parameters[p];
    space_parameter[p] = space.find_parameter(parameter.name);
    if (!space_parameter[p]) {
      // A parameter the model saw with one value only is constant: nothing depends on it.
      if (parameter.values.size() == 1) {
        const Value& v = parameter.values[0];
        feature_of_value[p] = {v.is_numeric() ? v.as_double() : 0.0};
        continue;
      }
      throw ModelError(fmt::format("the model's parameter '{}' is not in the space (model trained on {} from {})",
                                   parameter.name, impl_->provenance.kernel, impl_->provenance.source));
    }
    for (const Value& value : space.parameters()[*space_parameter[p]].values) {
      if (value.is_numeric()) {
        feature_of_value[p].push_back(value.as_double());
        continue;
      }
      auto known = std::find(parameter.values.begin(), parameter.values.end(), value);
      if (known == parameter.values.end()) {
        throw ModelError(fmt::format("the space's value '{}' of parameter '{}' is unknown to the model",
                                     value.to_string(), parameter.name));
      }
      feature_of_value[p].push_back(static_cast<double>(known - parameter.values.begin()));
    }
  }

  PredictedCounters out;
  out.counters = impl_->counters;
  out.configs = space.size();
  out.values.assign(impl_->counters.size(), std::vector<float>(space.size()));
  ValueIndices indices(space.parameters().size());
  std::vector<double> features(n), predicted(impl_->counters.size()), scratch;
  for (ConfigIndex c = 0; c < space.size(); ++c) {
    space.value_indices(c, indices);
    for (std::size_t p = 0; p < n; ++p) {
      features[p] = space_parameter[p] ? feature_of_value[p][indices[*space_parameter[p]]] : feature_of_value[p][0];
    }
    impl_->predict(features, predicted, scratch);
    for (std::size_t k = 0; k < predicted.size(); ++k) out.values[k][c] = static_cast<float>(predicted[k]);
  }
  return out;
}

const float* PredictedCounters::counter(std::string_view name) const {
  for (std::size_t k = 0; k < counters.size(); ++k) {
    if (counters[k] == name) return values[k].data();
  }
  return nullptr;
}

ModelAccuracy CounterModel::accuracy(const TrainingSet& data) const {
  ModelAccuracy accuracy;
  accuracy.rows = data.rows();
  // The data's counters in the model's order; the data may come from another recording.
  for (std::size_t k = 0; k < impl_->counters.size(); ++k) {
    auto found = std::find(data.counters.begin(), data.counters.end(), impl_->counters[k]);
    if (found == data.counters.end()) continue;
    const auto column_of = static_cast<std::size_t>(found - data.counters.begin());
    std::vector<double> errors;
    std::vector<double> predicted(impl_->counters.size()), scratch;
    for (std::size_t r = 0; r < data.rows(); ++r) {
      const double measured = data.targets[r][column_of];
      if (measured == 0 || !std::isfinite(measured)) continue;
      impl_->predict(data.features[r], predicted, scratch);
      errors.push_back(std::abs(predicted[k] - measured) / std::abs(measured));
    }
    accuracy.counters.push_back(impl_->counters[k]);
    accuracy.median_relative_error.push_back(median(std::move(errors)));
  }
  return accuracy;
}

ModelAccuracy held_out_accuracy(const TrainingSet& data, const TrainOptions& options, double holdout) {
  if (!(holdout > 0 && holdout < 1)) throw ModelError(fmt::format("held-out fraction {} not in (0, 1)", holdout));
  if (data.rows() < 2) throw ModelError("held-out accuracy needs at least two rows");
  Draws draws(options.seed ^ 0x9e3779b97f4a7c15ULL);
  const std::vector<std::size_t> order = draws.permutation(data.rows());
  const auto test_rows = std::clamp<std::size_t>(
      static_cast<std::size_t>(std::round(holdout * static_cast<double>(data.rows()))), 1, data.rows() - 1);
  std::span<const std::size_t> test(order.data(), test_rows), train(order.data() + test_rows, order.size() - test_rows);
  return CounterModel::train(data.subset(train), options).accuracy(data.subset(test));
}

// ---- JSON ------------------------------------------------------------------------------

nlohmann::json CounterModel::to_json() const {
  const Impl& m = *impl_;
  nlohmann::json parameters = nlohmann::json::array();
  for (const Parameter& parameter : m.parameters) {
    nlohmann::json values = nlohmann::json::array();
    for (const Value& value : parameter.values) values.push_back(value_json(value));
    parameters.push_back({{"name", parameter.name}, {"values", values}});
  }
  nlohmann::json gpu = {{"device", m.provenance.device}, {"counter_family", to_string(m.provenance.family)}};
  if (m.provenance.device_facts) {
    gpu["sm_count"] = m.provenance.device_facts->sm_count;
    gpu["compute_capability"] = fmt::format("{}.{}", m.provenance.device_facts->compute_capability.major,
                                            m.provenance.device_facts->compute_capability.minor);
  }
  nlohmann::json body;
  if (m.least_squares) {
    body = m.least_squares->to_json();
  } else {
    nlohmann::json per_counter = nlohmann::json::array();
    for (const auto& forest : m.trees) {
      nlohmann::json trees = nlohmann::json::array();
      for (const model::RegressionTree& tree : forest) trees.push_back(tree.to_json());
      per_counter.push_back(std::move(trees));
    }
    body = {{"trees", per_counter}};
  }
  nlohmann::json out = {
      {"format", kFormat},
      {"version", kVersion},
      {"kind", to_string(m.kind)},
      {"parameters", parameters},
      {"counters", m.counters},
      {"gpu", gpu},
      {"training", {{"source", m.provenance.source}, {"kernel", m.provenance.kernel}, {"rows", m.provenance.rows}}},
      {"model", body}};
  if (m.recorded.rows() > 0) {
    // One row per configuration that ran: its value indices, then its runtime in ms.
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t r = 0; r < m.recorded.rows(); ++r) {
      nlohmann::json row(m.recorded.values[r]);
      row.push_back(m.recorded.runtime_ms[r]);
      rows.push_back(std::move(row));
    }
    out["recorded"] = {{"fingerprint", m.recorded.fingerprint}, {"rows", std::move(rows)}};
  }
  return out;
}

CounterModel CounterModel::from_json(const nlohmann::json& json) {
  auto impl = std::make_unique<Impl>();
  try {
    if (json.at("format") != kFormat) throw ModelError(fmt::format("format is not \"{}\"", kFormat));
    if (json.at("version").get<int>() != kVersion) {
      throw ModelError(fmt::format("version {} is not {}", json.at("version").dump(), kVersion));
    }
    const auto kind = model_kind_from_string(json.at("kind").get<std::string>());
    if (!kind) throw ModelError(fmt::format("kind {} is not lsq, tree or forest", json.at("kind").dump()));
    impl->kind = *kind;
    for (const auto& entry : json.at("parameters")) {
      Parameter parameter;
      parameter.name = entry.at("name").get<std::string>();
      for (const auto& value : entry.at("values")) parameter.values.push_back(value_from_json(value));
      if (parameter.values.empty()) throw ModelError(fmt::format("parameter '{}' has no values", parameter.name));
      parameter.type = parameter.values[0].type();
      impl->parameters.push_back(std::move(parameter));
    }
    impl->counters = json.at("counters").get<std::vector<std::string>>();
    if (impl->counters.empty()) throw ModelError("no counters");
    const auto& gpu = json.at("gpu");
    impl->provenance.device = gpu.at("device").get<std::string>();
    const auto family = family_from_string(gpu.at("counter_family").get<std::string>());
    if (!family) throw ModelError(fmt::format("unknown counter family {}", gpu.at("counter_family").dump()));
    impl->provenance.family = *family;
    if (gpu.contains("sm_count")) {
      DeviceFacts facts;
      facts.sm_count = gpu.at("sm_count").get<int>();
      const std::string cc = gpu.at("compute_capability").get<std::string>();
      if (std::sscanf(cc.c_str(), "%d.%d", &facts.compute_capability.major, &facts.compute_capability.minor) != 2) {
        throw ModelError(fmt::format("compute_capability '{}' is not MAJOR.MINOR", cc));
      }
      facts.family = *family;
      impl->provenance.device_facts = facts;
    }
    const auto& training = json.at("training");
    impl->provenance.source = training.at("source").get<std::string>();
    impl->provenance.kernel = training.at("kernel").get<std::string>();
    impl->provenance.rows = training.at("rows").get<std::uint64_t>();
    if (json.contains("recorded")) {
      const auto& recorded = json.at("recorded");
      impl->recorded.fingerprint = recorded.at("fingerprint").get<std::string>();
      for (const auto& row : recorded.at("rows")) {
        if (!row.is_array() || row.size() != impl->parameters.size() + 1) {
          throw ModelError(fmt::format("recorded row {} is not {} value indices and a runtime", row.dump(),
                                       impl->parameters.size()));
        }
        std::vector<std::uint32_t> values;
        for (std::size_t p = 0; p < impl->parameters.size(); ++p) {
          const auto index = row[p].get<std::uint32_t>();
          if (index >= impl->parameters[p].values.size()) {
            throw ModelError(fmt::format("recorded row {}: parameter '{}' has no value {}", row.dump(),
                                         impl->parameters[p].name, index));
          }
          values.push_back(index);
        }
        const double runtime = row.back().get<double>();
        if (!(runtime >= 0) || !std::isfinite(runtime)) {
          throw ModelError(fmt::format("recorded row {}: runtime is not a finite number >= 0", row.dump()));
        }
        impl->recorded.values.push_back(std::move(values));
        impl->recorded.runtime_ms.push_back(runtime);
      }
    }
    const auto& body = json.at("model");
    if (impl->kind == ModelKind::LeastSquares) {
      impl->least_squares =
          model::LeastSquaresModel::from_json(body, impl->parameters.size(), impl->counters.size());
    } else {
      const auto& per_counter = body.at("trees");
      if (per_counter.size() != impl->counters.size()) throw ModelError("not one tree list per counter");
      for (const auto& trees : per_counter) {
        std::vector<model::RegressionTree> forest;
        for (const auto& tree : trees) {
          forest.push_back(model::RegressionTree::from_json(tree));
          if (forest.back().max_feature() > impl->parameters.size()) {
            throw ModelError("a tree splits on a parameter the model does not have");
          }
        }
        if (forest.empty()) throw ModelError("a counter without trees");
        impl->trees.push_back(std::move(forest));
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw ModelError(fmt::format("malformed counter model: {}", e.what()));
  } catch (const ModelError& e) {
    throw ModelError(fmt::format("malformed counter model: {}", e.what()));
  } catch (const Error& e) {
    throw ModelError(fmt::format("malformed counter model: {}", e.what()));
  }
  return CounterModel(std::move(impl));
}

CounterModel CounterModel::load(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw ModelError(fmt::format("cannot open the model file '{}'", file.string()));
  try {
    return from_json(nlohmann::json::parse(in));
  } catch (const nlohmann::json::exception& e) {
    throw ModelError(fmt::format("{}: not JSON: {}", file.string(), e.what()));
  } catch (const ModelError& e) {
    throw ModelError(fmt::format("{}: {}", file.string(), e.what()));
  }
}

void CounterModel::save(const std::filesystem::path& file) const {
  std::ofstream out(file);
  if (!out) throw ModelError(fmt::format("cannot write the model file '{}'", file.string()));
  out << to_json().dump() << '\n';
  if (!out.flush()) throw ModelError(fmt::format("cannot write the model file '{}'", file.string()));
}

}  // namespace steer
