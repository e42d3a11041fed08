// steer model train: a counter model (tuning parameters -> hardware counters) from any
// recording with counters, for the profile-based searcher. docs/models.md.
#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <optional>
#include <string>

#include "commands.hpp"
#include "number_checks.hpp"
#include "steer/error.hpp"
#include "steer/model.hpp"
#include "steer/recording.hpp"
#include "steer/spec.hpp"

namespace steer::cli {
namespace {

struct ModelTrainArgs {
  std::string data;
  std::string spec;
  std::optional<std::int64_t> tuning;
  std::string kind = "tree";  // the most accurate on the recordings (docs/models.md)
  std::string out;
  std::uint64_t seed = 1;
  double holdout = 0.2;
  int tree_splits = 5;
  int forest_trees = 10;
  std::size_t interaction_order = 2;
};

int run_model_train(const ModelTrainArgs& args) {
  std::optional<Spec> spec;
  if (!args.spec.empty()) spec = load_spec(args.spec);
  Recording recording = Recording::load(args.data, {.definition = spec ? &spec->space : nullptr, .tuning = args.tuning, .only_with_counters = false});
  TrainingSet data = training_set(recording, args.data);

  TrainOptions options;
  options.kind = *model_kind_from_string(args.kind);
  options.seed = args.seed;
  options.tree_splits = args.tree_splits;
  options.forest_trees = args.forest_trees;
  options.lsq_interaction_order = args.interaction_order;

  fmt::print("{} on {}: {} configurations with counters ({} family), {} counters\n", data.provenance.kernel,
             data.provenance.device, data.rows(), to_string(data.provenance.family), data.counters.size());
  if (data.rows() >= 5) {
    const ModelAccuracy accuracy = held_out_accuracy(data, options, args.holdout);
    fmt::print("held-out accuracy of a {} model trained on {:.0f}% of them ({} held out): median relative error\n",
               args.kind, 100 * (1 - args.holdout), accuracy.rows);
    for (std::size_t k = 0; k < accuracy.counters.size(); ++k) {
      const double error = accuracy.median_relative_error[k];
      fmt::print("  {:<14} {}\n", accuracy.counters[k],
                 std::isnan(error) ? std::string("- (always 0)") : fmt::format("{:.3f}", error));
    }
  } else {
    fmt::print("too few configurations to hold any out: no accuracy figure\n");
  }
  CounterModel model = CounterModel::train(data, options);
  model.save(args.out);
  fmt::print("wrote {} ({} model on all {} configurations; carries the runtimes of the {} that ran, guided's source)\n",
             args.out, args.kind, data.rows(), data.runtimes.rows());
  return 0;
}

}  // namespace

Runner register_model(CLI::App& app) {
  auto args = std::make_shared<ModelTrainArgs>();
  CLI::App* model = app.add_subcommand("model", "Counter models for the profile-based searcher");
  model->require_subcommand(1);
  CLI::App* train = model->add_subcommand("train", "Train a model of hardware counters from tuning parameters");
  train->add_option("--data", args->data, "Recording with counters: a results store (.db) or any format steer import reads; .gz read")
      ->required();
  train->add_option("--spec", args->spec, "Lay the recording over this spec's space");
  train->add_option("--tuning", args->tuning, "Which tuning of a results store with several");
  train->add_option("--kind", args->kind, "lsq (polynomials per binary subspace), tree or forest")
      ->capture_default_str()
      ->check(CLI::IsMember({"lsq", "tree", "forest"}));
  train->add_option("--out", args->out, "Model file to write (JSON)")->required();
  train->add_option("--seed", args->seed, "Seed of the held-out split and of the trees")->capture_default_str();
  train->add_option("--holdout", args->holdout, "Fraction held out to report the accuracy")
      ->capture_default_str()
      ->check(number_in(0.01, 0.99));
  train->add_option("--tree-splits", args->tree_splits, "tree: random 50/50 splits tried per counter")
      ->capture_default_str()
      ->check(kPositive);
  train->add_option("--forest-trees", args->forest_trees, "forest: trees per counter")
      ->capture_default_str()
      ->check(kPositive);
  train->add_option("--interaction-order", args->interaction_order,
                    "lsq: highest order of interactions between parameters")
      ->capture_default_str()
      ->check(kPositive);
  // The runner is registered for the `model` command; only `train` exists under it.
  return [args] { return run_model_train(*args); };
}

}  // namespace steer::cli
