// Recordings, replays, simulations and the performance score, reports, the results store,
// counter models, counters and energy, from Python.
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "convert.hpp"
#include "space_handle.hpp"
#include "steer/counters.hpp"
#include "steer/eval.hpp"
#include "steer/model.hpp"
#include "steer/objective.hpp"
#include "steer/recording.hpp"
#include "steer/store.hpp"

namespace steer::python {
namespace {

struct PyRecording {
  std::string source;
  std::unique_ptr<ImportedRecording> imported;
  std::unique_ptr<Recording> recording;
};

PyRecording load_recording(const std::filesystem::path& path, std::optional<std::int64_t> tuning, bool only_with_counters,
                           bool only_with_energy) {
  return without_gil([&] {
    PyRecording out;
    out.source = path.string();
    out.imported = std::make_unique<ImportedRecording>(import_recording(path, tuning));
    if (only_with_counters || only_with_energy) {
      Recording::LoadOptions options{.tuning = tuning, .only_with_counters = only_with_counters,
                                     .only_with_energy = only_with_energy};
      out.recording = std::make_unique<Recording>(Recording::load(path, options));
    } else {
      out.recording = std::make_unique<Recording>(Recording::from_import(*out.imported));
    }
    return out;
  });
}

nb::dict from_key(const TuningKey& key) {
  nb::dict out;
  out["spec_name"] = key.spec_name;
  out["spec_hash"] = key.spec_hash;
  out["device"] = key.device;
  out["backend"] = key.backend;
  out["problem_size"] = key.problem_size;
  return out;
}

TuningKey tuning_key_of(const Store& store, std::optional<std::int64_t> tuning) {
  if (tuning) return store.tuning_key(*tuning);
  const auto tunings = store.tunings();
  if (tunings.size() != 1) {
    throw Error(store.path().string() + " holds " + std::to_string(tunings.size()) + " tunings: name one (tunings() lists them)");
  }
  return tunings.front().second;
}

std::int64_t tuning_id_of(const Store& store, std::optional<std::int64_t> tuning) {
  if (tuning) return *tuning;
  tuning_key_of(store, tuning);  // throws unless there is exactly one
  return store.tunings().front().first;
}

nb::dict from_evaluation(const Evaluation& evaluation) {
  nb::dict out;
  out["best"] = evaluation.best_ms;
  out["target"] = evaluation.target_ms;
  out["objective"] = evaluation.objective;
  out["configs"] = evaluation.configs;
  out["valid"] = evaluation.valid;
  nb::list searchers;
  for (const SearcherEvaluation& s : evaluation.searchers) {
    nb::dict entry;
    entry["name"] = s.name;
    entry["runs"] = s.runs;
    entry["failed_runs"] = s.failed_runs;
    entry["mean_tests"] = s.mean_tests;
    entry["median_tests"] = s.median_tests;
    entry["p90_tests"] = s.p90_tests;
    entry["mean_time_s"] = s.mean_time_s;
    entry["ratio_to_random"] = s.ratio_to_random ? nb::cast(*s.ratio_to_random) : nb::none();
    entry["score_fevals"] = s.score.fevals;
    entry["score_time"] = s.score.time;
    nb::list tests_to_target;
    for (const RunSummary& run : s.per_run) {
      tests_to_target.append(run.tests_to_target ? nb::cast(*run.tests_to_target) : nb::none());
    }
    entry["tests_to_target"] = tests_to_target;
    searchers.append(entry);
  }
  out["searchers"] = searchers;
  return out;
}

struct SimulateArguments {
  std::vector<std::string> searchers;
  std::uint64_t runs;
  double target;
  std::optional<std::uint64_t> budget;
  std::uint64_t seed;
  unsigned threads;
  bool score;
  std::map<std::string, std::string> settings;
  std::string model;
  std::string objective;
};

SimulationReport simulate_one(const std::string& data, const SimulateArguments& a) {
  const Recording recording = Recording::load(data);
  EvaluationOptions options;
  options.simulation.target = a.target;
  options.simulation.budget = a.budget;
  options.simulation.objective = Objective::parse(a.objective);
  options.runs = a.runs;
  options.seed = a.seed;
  options.threads = a.threads > 0 ? a.threads : std::max(1u, std::thread::hardware_concurrency());
  options.score = a.score;
  options.settings = a.settings;
  options.model_path = a.model;
  SimulationReport report;
  report.data = data;
  report.kernel = recording.kernel();
  report.device = recording.device();
  report.target = a.target;
  report.runs = a.runs;
  report.seed = a.seed;
  report.budget = a.budget;
  report.evaluation = evaluate(recording, a.searchers, options);
  return report;
}

// Replays a recording with a searcher through the tuning loop (a ReplayExecutor on a simulated
// clock), calling `on_test(result, progress)` after every test when given.
nb::dict replay(PyRecording& data, const std::string& searcher_name, std::uint64_t seed,
                std::optional<std::uint64_t> tests, std::map<std::string, std::string> settings, nb::object on_test) {
  std::unique_ptr<Searcher> searcher = make_searcher(searcher_name, SearcherOptions{.seed = seed, .settings = std::move(settings)});
  ReplayExecutor executor(*data.recording);
  TuneOptions options;
  options.stop.tests = tests;
  std::optional<nb::python_error> failure;
  std::atomic<bool> interrupt{false};
  options.interrupt = &interrupt;
  if (!on_test.is_none()) {
    options.on_test = [&](const Result& result, const TuneProgress& progress) {
      nb::gil_scoped_acquire gil;
      try {
        on_test(from_result(result), from_progress(progress));
      } catch (nb::python_error& error) {
        if (!failure) failure.emplace(std::move(error));
        interrupt.store(true);
      }
    };
  }
  const TuneSummary summary =
      without_gil([&] { return tune(data.recording->space(), executor, *searcher, nullptr, options); });
  if (failure) {
    nb::python_error error = std::move(*failure);
    failure.reset();
    throw error;
  }
  return from_summary(summary);
}

nb::dict from_accuracy(const ModelAccuracy& accuracy) {
  nb::dict out;
  for (std::size_t c = 0; c < accuracy.counters.size(); ++c) out[accuracy.counters[c].c_str()] = accuracy.median_relative_error[c];
  return out;
}

class PyModel {
 public:
  explicit PyModel(CounterModel model) : model_(std::move(model)) {}
  std::string kind() const { return to_string(model_.kind()); }
  std::vector<std::string> counters() const { return model_.counters(); }
  std::vector<std::string> parameters() const {
    std::vector<std::string> names;
    for (const Parameter& p : model_.parameters()) names.push_back(p.name);
    return names;
  }
  nb::dict provenance() const {
    const ModelProvenance& p = model_.provenance();
    nb::dict out;
    out["source"] = p.source;
    out["kernel"] = p.kernel;
    out["device"] = p.device;
    out["rows"] = p.rows;
    // configurations whose runtimes the model carries (guided's source; docs/models.md)
    out["recorded"] = model_.recorded_runtimes().rows();
    return out;
  }
  void save(const std::filesystem::path& path) const { model_.save(path); }
  nb::dict predict(const SpaceHandle& space) const {
    const PredictedCounters predicted = without_gil([&] { return model_.predict(space.get()); });
    nb::dict out;
    for (std::size_t c = 0; c < predicted.counters.size(); ++c) {
      out[predicted.counters[c].c_str()] = to_numpy(std::span<const float>(predicted.values[c]));
    }
    return out;
  }
  nb::dict accuracy(const std::filesystem::path& data) const {
    const Recording recording = Recording::load(data);
    return from_accuracy(model_.accuracy(training_set(recording, data.string())));
  }

 private:
  CounterModel model_;
};

TrainOptions train_options(const std::string& kind, std::uint64_t seed) {
  const std::optional<ModelKind> parsed = model_kind_from_string(kind);
  if (!parsed) throw nb::value_error(("model kind '" + kind + "': lsq, tree or forest").c_str());
  return TrainOptions{.kind = *parsed, .seed = seed};
}

}  // namespace

void bind_data(nb::module_& m) {
  nb::class_<PyRecording>(m, "Recording",
                          "A recording (KTT, Kernel Tuner cache, T4, Steer JSON, or a results store) laid over its "
                          "own space: one value per configuration.")
      .def_static("load", &load_recording, nb::arg("path"), nb::arg("tuning") = nb::none(),
                  nb::arg("only_with_counters") = false, nb::arg("only_with_energy") = false)
      .def_prop_ro("source", [](const PyRecording& r) { return r.source; })
      .def_prop_ro("format", [](const PyRecording& r) { return std::string(to_string(r.imported->format)); })
      .def_prop_ro("device", [](const PyRecording& r) { return r.recording->device(); })
      .def_prop_ro("kernel", [](const PyRecording& r) { return r.recording->kernel(); })
      .def_prop_ro("present", [](const PyRecording& r) { return r.recording->present_count(); })
      .def_prop_ro("valid", [](const PyRecording& r) { return r.recording->valid_count(); })
      .def_prop_ro("best_runtime_ms", [](const PyRecording& r) { return r.recording->best_runtime_ms(); })
      .def_prop_ro("counter_names", [](const PyRecording& r) { return r.recording->counter_names(); })
      .def_prop_ro("space", [](nb::handle self) { return SpaceHandle(nb::cast<PyRecording&>(self).recording->space(), nb::borrow(self)); })
      .def("runtimes", [](const PyRecording& r) {
        std::vector<double> values(r.recording->space().size());
        for (ConfigIndex c = 0; c < values.size(); ++c) values[c] = r.recording->runtime_ms(c);
        return to_numpy(std::move(values));
      }, "The runtime of every configuration of the space, in ms (NaN: none).")
      .def("statuses", [](const PyRecording& r) {
        std::vector<std::string> values(r.recording->space().size());
        for (ConfigIndex c = 0; c < values.size(); ++c) values[c] = to_string(r.recording->status(c));
        return values;
      })
      .def("counter", [](const PyRecording& r, const std::string& name) {
        const auto& names = r.recording->counter_names();
        const auto found = std::find(names.begin(), names.end(), name);
        if (found == names.end()) throw nb::key_error(("no counter '" + name + "' in the recording").c_str());
        std::vector<double> values(r.recording->space().size());
        for (ConfigIndex c = 0; c < values.size(); ++c) values[c] = r.recording->counter(c, found - names.begin());
        return to_numpy(std::move(values));
      })
      .def("result", [](const PyRecording& r, ConfigIndex index) -> nb::object {
        const Result* recorded = r.recording->recorded(index);
        return recorded ? nb::object(from_result(*recorded)) : nb::none();
      })
      .def("results", [](const PyRecording& r) {
        nb::list out;
        for (const Result& result : r.imported->results) out.append(from_result(result));
        return out;
      }, "Every recorded test, in the order of the file.");

  m.def("replay", &replay, nb::arg("recording"), nb::arg("searcher") = "random", nb::arg("seed") = 1,
        nb::arg("tests") = nb::none(), nb::arg("settings") = std::map<std::string, std::string>{},
        nb::arg("on_test") = nb::none(),
        "Tunes over a recording: the loop of a device run, each test answered by the recording on a simulated clock.");

  m.def(
      "simulate",
      [](std::vector<std::filesystem::path> data, std::vector<std::string> searchers, std::uint64_t runs, double target,
         std::optional<std::uint64_t> budget, std::uint64_t seed, unsigned threads, bool score,
         std::map<std::string, std::string> settings, std::filesystem::path model, std::string objective,
         std::filesystem::path json) {
        const SimulateArguments arguments{std::move(searchers), runs, target, budget, seed, threads, score,
                                          std::move(settings), model.string(), std::move(objective)};
        std::vector<SimulationReport> reports = without_gil([&] {
          std::vector<SimulationReport> out;
          for (const std::filesystem::path& file : data) out.push_back(simulate_one(file.string(), arguments));
          return out;
        });
        if (!json.empty()) {
          std::ofstream file(json);
          if (!file) throw Error("cannot write '" + json.string() + "'");
          if (reports.size() == 1) {
            write_simulation_json(file, reports.front(), true);
          } else {
            write_simulations_json(file, reports, true);
          }
        }
        nb::list spaces;
        for (const SimulationReport& report : reports) {
          nb::dict entry = from_evaluation(report.evaluation);
          entry["data"] = report.data;
          entry["kernel"] = report.kernel;
          entry["device"] = report.device;
          spaces.append(entry);
        }
        nb::dict out;
        out["spaces"] = spaces;
        if (score && reports.size() > 1) {
          std::vector<const Evaluation*> evaluations;
          for (const SimulationReport& report : reports) evaluations.push_back(&report.evaluation);
          nb::list aggregate;
          for (const AggregateScore& a : aggregate_scores(evaluations)) {
            nb::dict entry;
            entry["name"] = a.name;
            entry["spaces"] = a.spaces;
            entry["score_fevals"] = a.fevals;
            entry["score_fevals_spread"] = a.fevals_spread;
            entry["score_time"] = a.time;
            entry["score_time_spread"] = a.time_spread;
            aggregate.append(entry);
          }
          out["aggregate"] = aggregate;
        }
        return out;
      },
      nb::arg("data"), nb::arg("searchers"), nb::arg("runs") = 1000, nb::arg("target") = 1.1,
      nb::arg("budget") = nb::none(), nb::arg("seed") = 1, nb::arg("threads") = 0, nb::arg("score") = false,
      nb::arg("settings") = std::map<std::string, std::string>{}, nb::arg("model") = "", nb::arg("objective") = "time",
      nb::arg("json") = "");

  m.def(
      "report",
      [](const std::filesystem::path& out, std::filesystem::path data, std::optional<std::int64_t> tuning,
         std::filesystem::path simulation,
         std::string title, bool plots, std::string python) {
        return without_gil([&] {
          std::optional<ImportedRecording> imported;
          std::optional<Recording> recording;
          std::vector<SimulationReport> spaces;
          std::optional<SimulationReport> single;
          if (!simulation.empty()) {
            spaces = read_simulations_json(simulation);
            if (spaces.size() == 1) {
              single = std::move(spaces.front());
              spaces.clear();
            }
          }
          if (!data.empty()) {
            imported = import_recording(data, tuning);
            recording = Recording::from_import(*imported);
          }
          if (!recording && !single && spaces.empty()) throw Error("nothing to report: give data, simulation or both");
          const ReportInput input{.source = data.string(),
                                  .imported = imported ? &*imported : nullptr,
                                  .recording = recording ? &*recording : nullptr,
                                  .simulation = single ? &*single : nullptr,
                                  .spaces = spaces.empty() ? nullptr : &spaces};
          const ReportOptions options{.out = out, .title = title, .plots = plots, .python = python};
          return write_report(input, options);
        });
      },
      nb::arg("out"), nb::arg("data") = "", nb::arg("tuning") = nb::none(), nb::arg("simulation") = "",
      nb::arg("title") = "", nb::arg("plots") = true, nb::arg("python") = "",
      "Writes plots, CSVs and index.html of a recording and/or a simulation (simulate(json=...)) to `out`.");

  nb::class_<Store>(m, "Store", "The results store: every test of every tuning, in one SQLite file.")
      .def("__init__",
           [](Store* self, const std::filesystem::path& path, bool read_only) {
             new (self) Store(read_only ? Store::open_read_only(path) : Store::open(path));
           },
           nb::arg("path"), nb::arg("read_only") = false)
      .def_prop_ro("path", [](const Store& s) { return s.path().string(); })
      .def("tunings", [](const Store& s) {
        nb::list out;
        for (const auto& [id, key] : s.tunings()) {
          nb::dict entry = from_key(key);
          entry["id"] = id;
          entry["tests"] = s.count(id);
          out.append(entry);
        }
        return out;
      })
      .def("results", [](const Store& s, std::optional<std::int64_t> tuning) {
        nb::list out;
        for (const Result& result : s.results(tuning_id_of(s, tuning))) out.append(from_result(result));
        return out;
      }, nb::arg("tuning") = nb::none())
      .def("export", [](const Store& s, const std::string& format, std::optional<std::int64_t> tuning) {
        const std::optional<ExportFormat> parsed = export_format_from_string(format);
        if (!parsed) throw nb::value_error(("export format '" + format + "': csv, t4, json or kerneltuner").c_str());
        const std::int64_t id = tuning_id_of(s, tuning);
        std::ostringstream out;
        export_results(out, *parsed, s.tuning_key(id), s.results(id));
        return out.str();
      }, nb::arg("format") = "csv", nb::arg("tuning") = nb::none(),
         "The tests of a tuning as text: csv, t4, json (Steer's) or kerneltuner (a Kernel Tuner cache file).")
      .def("best", [](const Store& s, const std::string& kernel) {
        nb::list out;
        for (const TunedConfiguration& tuned : best_configurations(s, kernel)) {
          nb::dict entry = from_key(tuned.tuning);
          entry["best"] = from_result(tuned.best);
          out.append(entry);
        }
        return out;
      }, nb::arg("kernel"), "The best configuration of each tuning of `kernel`: per device, backend and size.")
      .def("export_deployment", [](const Store& s, const std::string& kernel, const std::string& format) {
        const std::vector<TunedConfiguration> best = best_configurations(s, kernel);
        std::ostringstream out;
        if (format == "header") {
          export_header(out, kernel, best);
        } else if (format == "wisdom") {
          export_wisdom(out, kernel, best);
        } else {
          throw nb::value_error("deployment format: header or wisdom");
        }
        return out.str();
      }, nb::arg("kernel"), nb::arg("format") = "wisdom");

  nb::class_<PyModel>(m, "CounterModel", "A model of hardware counters from tuning parameters (docs/models.md).")
      .def_prop_ro("kind", &PyModel::kind)
      .def_prop_ro("counters", &PyModel::counters)
      .def_prop_ro("parameters", &PyModel::parameters)
      .def_prop_ro("provenance", &PyModel::provenance)
      .def("save", &PyModel::save)
      .def("predict", &PyModel::predict, "Every configuration's predicted counters: {counter: array over the space}.")
      .def("accuracy", &PyModel::accuracy, "Median relative error per counter on a recording with counters.");
  m.def("train_model", [](const std::filesystem::path& data, const std::string& kind, std::uint64_t seed) {
    return without_gil([&] {
      const Recording recording = Recording::load(data);
      return PyModel(CounterModel::train(training_set(recording, data.string()), train_options(kind, seed)));
    });
  }, nb::arg("data"), nb::arg("kind") = "lsq", nb::arg("seed") = 1, "Trains a counter model on a recording with counters.");
  m.def("held_out_accuracy", [](const std::filesystem::path& data, const std::string& kind, std::uint64_t seed, double holdout) {
    const Recording recording = Recording::load(data);
    return from_accuracy(held_out_accuracy(training_set(recording, data.string()), train_options(kind, seed), holdout));
  }, nb::arg("data"), nb::arg("kind") = "lsq", nb::arg("seed") = 1, nb::arg("holdout") = 0.2);
  m.def("load_model", [](const std::filesystem::path& path) { return PyModel(CounterModel::load(path)); }, nb::arg("path"));

  m.def("counters", [] {
    nb::list out;
    for (const CounterInfo& info : canonical_counter_infos()) {
      out.append(nb::make_tuple(std::string(info.abbreviation), info.counter_class == CounterClass::Stress ? "stress" : "ops",
                                std::string(info.meaning)));
    }
    return out;
  }, "The canonical counters (docs/counters.md): (abbreviation, class, meaning).");
  m.def("pareto_optimal", &pareto_optimal, nb::arg("runtime_ms"), nb::arg("energy_j"),
        "Which (time, energy) points no other point dominates (both minimised).");
  m.def("objective_name", [](const std::string& text) { return Objective::parse(text).name(); },
        "Checks an objective (time, energy, weighted:ALPHA, edp, gflops-per-watt) and gives its canonical name.");
}

}  // namespace steer::python
