#pragma once
// Models of performance counters from tuning parameters (method.md §5): trained on any
// recording with counters (another GPU, another input, a sample of the space), they
// predict the canonical counters of every configuration of a space, which the
// profile-based searcher scores against the reaction of the expert system.
//
//   steer::Recording data = steer::Recording::load("coulomb_rtx2080.ktt.json.gz");
//   steer::TrainingSet rows = steer::training_set(data, "coulomb_rtx2080.ktt.json.gz");
//   steer::CounterModel model = steer::CounterModel::train(rows, {.kind = steer::ModelKind::Tree});
//   model.save("coulomb.model.json");
//   steer::PredictedCounters predicted = steer::CounterModel::load("coulomb.model.json").predict(space);
//   const float* dram_reads = predicted.counter("DRAM_RT");  // one value per ConfigIndex
//
// A model names its parameters; predicting for a space matches them by name, so a model
// trained on one GPU or input steers tuning on another.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "steer/counters.hpp"
#include "steer/error.hpp"
#include "steer/expert.hpp"
#include "steer/space.hpp"

namespace steer {

class Recording;  // steer/recording.hpp

// A model file that cannot be read, or a model that does not fit a space (a parameter the
// space lacks, a string value the model never saw).
class ModelError : public Error {
 public:
  using Error::Error;
};

enum class ModelKind {
  LeastSquares,  // polynomial per subspace of the binary parameters (method.md §5.1)
  Tree,          // one CART per counter, best of several random 50/50 splits (§5.2)
  Forest,        // bagged CARTs per counter, predictions averaged (KTT's later ensemble)
};
const char* to_string(ModelKind kind) noexcept;  // "lsq", "tree", "forest"
std::optional<ModelKind> model_kind_from_string(std::string_view text) noexcept;

// Where a model's training data came from.
struct ModelProvenance {
  std::string source;  // the recording's file
  std::string kernel;
  std::string device;
  CounterFamily family = CounterFamily::VoltaPlus;  // the counters' family (units of counts)
  std::optional<DeviceFacts> device_facts;          // when the device is known (known_device_facts)
  std::uint64_t rows = 0;                           // configurations trained on
};

// What the training recording measured: the runtime of every configuration that ran, so
// that a searcher can transfer it (guided's source) where the recording is not at hand.
struct RecordedRuntimes {
  std::vector<std::vector<std::uint32_t>> values;  // [row][parameter]: index into parameters[p].values
  std::vector<double> runtime_ms;                  // [row]
  // Of the measurements (32 hex digits): each configuration's parameter values and runtime
  // (to 6 significant digits), whatever the file's format or order. A replay of the very
  // measurements a model was trained on is told apart by it (SearcherOptions::replayed).
  std::string fingerprint;

  std::size_t rows() const noexcept { return runtime_ms.size(); }
};

// The configurations of `recording` that ran (status ok, finite runtime), with their runtimes.
RecordedRuntimes recorded_runtimes(const Recording& recording);

// Training rows: the tuning parameters of each configuration as numbers (an int, float or
// bool its value; a string its position in the parameter's value list) and its canonical
// counters (every row has every counter).
struct TrainingSet {
  std::vector<Parameter> parameters;            // names and value lists, as recorded
  std::vector<std::string> counters;            // canonical abbreviations
  std::vector<std::vector<double>> features;    // [row][parameter]
  std::vector<std::vector<double>> targets;     // [row][counter]
  ModelProvenance provenance;
  RecordedRuntimes runtimes;                    // every configuration that ran, with or without counters

  std::size_t rows() const noexcept { return features.size(); }
  // The rows at `which`, in that order (for held-out splits).
  TrainingSet subset(std::span<const std::size_t> which) const;
};

// The configurations of `recording` that ran (status ok) and carry counters, with their
// counters made canonical (family detected from the names). Counters are those of
// canonical_counter_infos() present in at least half of the rows. Throws ModelError when
// no configuration carries counters.
TrainingSet training_set(const Recording& recording, std::string source);

struct TrainOptions {
  ModelKind kind = ModelKind::LeastSquares;
  std::uint64_t seed = 1;
  // lsq: ridge factor, relative to the mean diagonal of XᵀX, used when a subspace's
  // system is singular (fewer distinct rows than terms, or collinear terms).
  double ridge = 1e-6;
  // lsq: fit log(1 + counter) over log2-coded parameters where a parameter's values are
  // positive and span a factor of 4 or more; false: the raw polynomial of method.md §5.1.
  // Counters are mostly products and quotients of parameters, which the logarithms make
  // polynomial (docs/models.md has the accuracy of both).
  bool lsq_logarithmic = true;
  // lsq: highest order of the interactions between distinct parameters (2: pairwise).
  std::size_t lsq_interaction_order = 2;
  // tree: random 50/50 splits tried per counter; the tree of the lowest held-out MAE
  // (ties: RMSE) is kept.
  int tree_splits = 5;
  // forest: trees per counter, each on a bootstrap sample of the rows.
  int forest_trees = 10;
  std::size_t min_samples_leaf = 1;  // trees and forests
};

// Predictions for every configuration of a space, counter-major so that scoring walks
// contiguous memory. Values are >= 0 (counters cannot be negative; a polynomial can dip
// below zero between training points, which would invert eq. 12's ratios).
struct PredictedCounters {
  std::vector<std::string> counters;
  std::vector<std::vector<float>> values;  // [counter][ConfigIndex]
  std::uint64_t configs = 0;

  // The predictions of one counter, or nullptr when the model does not predict it.
  const float* counter(std::string_view name) const;
};

// Median relative error |predicted - measured| / |measured| per counter, over the rows whose
// measured value is non-zero (NaN when there is none).
struct ModelAccuracy {
  std::vector<std::string> counters;
  std::vector<double> median_relative_error;
  std::uint64_t rows = 0;
};

class CounterModel {
 public:
  // Throws ModelError for an empty training set or options out of range.
  static CounterModel train(const TrainingSet& data, const TrainOptions& options);
  // JSON file (format "steer-counter-model", version 1; docs/models.md). Throws ModelError
  // naming the file and what is wrong.
  static CounterModel load(const std::filesystem::path& file);
  void save(const std::filesystem::path& file) const;
  nlohmann::json to_json() const;
  static CounterModel from_json(const nlohmann::json& json);

  CounterModel(const CounterModel&);
  CounterModel(CounterModel&&) noexcept;
  CounterModel& operator=(CounterModel&&) noexcept;
  ~CounterModel();

  ModelKind kind() const noexcept;
  const std::vector<Parameter>& parameters() const noexcept;
  const std::vector<std::string>& counters() const noexcept;
  const ModelProvenance& provenance() const noexcept;
  // What the training recording measured (empty for a model file written before models
  // carried it); its rows index parameters()' value lists.
  const RecordedRuntimes& recorded_runtimes() const noexcept;

  // Counters of one configuration given as features in the model's parameter order (as in
  // TrainingSet::features), in counters() order; clamped at 0.
  std::vector<double> predict(std::span<const double> features) const;
  // Every configuration of `space`; parameters matched by name. Throws ModelError for a
  // model parameter the space lacks (unless the model saw only one value of it), or a
  // string value of the space the model's value list lacks.
  PredictedCounters predict(const Space& space) const;
  ModelAccuracy accuracy(const TrainingSet& data) const;

 private:
  struct Impl;
  explicit CounterModel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Whether `recording` replays measurements `model` was trained on: 90 % or more of its
// configurations that ran are among the model's recorded ones, with the same runtime to 6
// significant digits. So it is when the model was trained on this recording, read from any
// format, or on a superset of it (a replay over the configurations with energy, with
// counters, or laid over a narrower spec). Another GPU's or input's measurements never agree
// so closely. A model without recorded runtimes replays nothing.
bool replays_training_measurements(const Recording& recording, const CounterModel& model);

// Trains on a random (seeded) `1 - holdout` of the rows and measures the accuracy on the rest;
// what `steer model train` prints before it trains the final model on all rows.
ModelAccuracy held_out_accuracy(const TrainingSet& data, const TrainOptions& options, double holdout = 0.2);

}  // namespace steer
