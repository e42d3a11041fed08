// A simulation as files: the JSON steer simulate prints and steer report reads, and the
// CSVs of its curves and routes.
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>

#include "recording/csv.hpp"
#include "steer/error.hpp"
#include "steer/eval.hpp"

namespace steer {
namespace {

using Json = nlohmann::ordered_json;

// NaN (no run reached the target) becomes null, never a number.
Json number_or_null(double value) { return std::isnan(value) ? Json(nullptr) : Json(value); }
double number_of(const Json& value) { return value.is_number() ? value.get<double>() : NAN; }

// A curve as columns: {"x": [...], "runs_with_valid": [...], "mean_best_ms": [...], "std_best_ms": [...]}.
Json curve_json(const std::vector<CurvePoint>& curve) {
  Json x = Json::array(), runs = Json::array(), mean = Json::array(), std = Json::array();
  for (const CurvePoint& point : curve) {
    x.push_back(point.x);
    runs.push_back(point.runs_with_valid);
    mean.push_back(point.runs_with_valid > 0 ? Json(point.mean_best_ms) : nullptr);
    std.push_back(point.runs_with_valid > 0 ? Json(point.std_best_ms) : nullptr);
  }
  return {{"x", x}, {"runs_with_valid", runs}, {"mean_best_ms", mean}, {"std_best_ms", std}};
}

std::vector<CurvePoint> curve_from_json(const Json& curve, const std::string& where) {
  if (!curve.is_object()) throw Error(fmt::format("{}: missing", where));
  for (const char* column : {"x", "runs_with_valid", "mean_best_ms", "std_best_ms"}) {
    if (!curve.contains(column) || !curve[column].is_array()) {
      throw Error(fmt::format("{}: no array '{}'", where, column));
    }
  }
  const std::size_t n = curve["x"].size();
  if (curve["runs_with_valid"].size() != n || curve["mean_best_ms"].size() != n || curve["std_best_ms"].size() != n) {
    throw Error(fmt::format("{}: its columns differ in length", where));
  }
  std::vector<CurvePoint> points(n);
  for (std::size_t i = 0; i < n; ++i) {
    points[i].x = number_of(curve["x"][i]);
    points[i].runs_with_valid = curve["runs_with_valid"][i].get<std::uint64_t>();
    points[i].mean_best_ms = number_of(curve["mean_best_ms"][i]);
    points[i].std_best_ms = number_of(curve["std_best_ms"][i]);
  }
  return points;
}

// A score curve as columns: {"x": [...], "score": [...]}.
Json score_curve_json(const std::vector<double>& x, const std::vector<double>& score) {
  Json xs = Json::array(), scores = Json::array();
  for (double value : x) xs.push_back(value);
  for (double value : score) scores.push_back(number_or_null(value));
  return {{"x", xs}, {"score", scores}};
}

void score_curve_from_json(const Json& curve, const std::string& where, std::vector<double>& x,
                           std::vector<double>& score) {
  if (!curve.is_object() || !curve.contains("x") || !curve["x"].is_array() || !curve.contains("score") ||
      !curve["score"].is_array()) {
    throw Error(fmt::format("{}: no arrays 'x' and 'score'", where));
  }
  if (curve["x"].size() != curve["score"].size()) throw Error(fmt::format("{}: its columns differ in length", where));
  for (const Json& value : curve["x"]) x.push_back(number_of(value));
  for (const Json& value : curve["score"]) score.push_back(number_of(value));
}

Json read_json_file(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw Error(fmt::format("cannot read the simulation '{}': {}", file, std::strerror(errno)));
  try {
    return Json::parse(in);
  } catch (const Json::exception& e) {
    throw Error(fmt::format("the simulation '{}' is not JSON: {}", file, e.what()));
  }
}

SimulationReport parse_simulation(const Json& document, const std::string& file) {
  const std::string hint = "write it with `steer simulate ... --json --details > FILE`";
  if (!document.is_object() || !document.contains("searchers") || !document["searchers"].is_array() ||
      !document.contains("best_time")) {
    throw Error(fmt::format("'{}' is not the output of steer simulate --json: {}", file, hint));
  }
  SimulationReport simulation;
  simulation.data = document.value("data", file);
  simulation.kernel = document.value("kernel", "");
  simulation.device = document.value("device", "");
  simulation.target = document.value("target", 1.1);
  simulation.runs = document.value("runs", std::uint64_t{0});
  simulation.seed = document.value("seed", std::uint64_t{1});
  if (document.contains("budget") && document["budget"].is_number()) simulation.budget = document["budget"].get<std::uint64_t>();
  simulation.repetitions = document.value("repetitions", 1);
  simulation.compile_threads = document.value("compile_threads", 0);
  simulation.guesses = document.value("guesses", std::size_t{0});
  simulation.compile_times = document.value("compile_times", "recorded");
  if (document.contains("left_out_without_counters")) {
    simulation.left_out_without_counters = document["left_out_without_counters"].get<std::size_t>();
  }
  if (document.contains("left_out_without_energy")) {
    simulation.left_out_without_energy = document["left_out_without_energy"].get<std::size_t>();
  }
  Evaluation& e = simulation.evaluation;
  e.objective = document.value("objective", std::string("time"));
  e.best_ms = number_of(document["best_time"]);
  e.target_ms = document.contains("target_time") ? number_of(document["target_time"]) : simulation.target * e.best_ms;
  e.configs = document.value("configs", std::uint64_t{0});
  e.valid = document.value("valid", std::uint64_t{0});
  if (document.contains("score") && document["score"].is_object()) {
    const Json& score = document["score"];
    ScoreCutoffs cutoffs;
    cutoffs.settings.end_percentile = number_of(score.at("end_percentile"));
    cutoffs.settings.start_percentile = number_of(score.at("start_percentile"));
    cutoffs.settings.time_points = score.at("time_points").get<std::size_t>();
    cutoffs.test_cost_ms = number_of(score.at("test_cost_ms"));
    cutoffs.median_test_cost_ms = number_of(score.at("median_test_cost_ms"));
    cutoffs.start_tests = score.at("start_tests").get<std::uint64_t>();
    cutoffs.end_tests = score.at("end_tests").get<std::uint64_t>();
    cutoffs.start_s = number_of(score.at("start_s"));
    cutoffs.end_s = number_of(score.at("end_s"));
    e.score = cutoffs;
  }
  for (const Json& s : document["searchers"]) {
    SearcherEvaluation searcher;
    searcher.name = s.value("name", "");
    const std::string where = fmt::format("{}: searcher '{}'", file, searcher.name);
    if (!s.contains("run_tests_to_target") || !s.contains("curve_by_test") || !s.contains("curve_by_time")) {
      throw Error(fmt::format("{} has no per-run results or curves: {}", where, hint));
    }
    searcher.mean_tests = number_of(s["mean_tests"]);
    searcher.median_tests = number_of(s["median_tests"]);
    searcher.p90_tests = number_of(s["p90_tests"]);
    searcher.failed_runs = s.value("failed_runs", std::uint64_t{0});
    searcher.mean_time_s = number_of(s["mean_time_s"]);
    if (s.contains("ratio_to_random") && s["ratio_to_random"].is_number()) {
      searcher.ratio_to_random = s["ratio_to_random"].get<double>();
    }
    const Json& to_target = s["run_tests_to_target"];
    const Json& tests = s.value("run_tests", Json::array());
    const Json& time_s = s.value("run_time_s", Json::array());
    if (!to_target.is_array() || tests.size() != to_target.size() || time_s.size() != to_target.size()) {
      throw Error(fmt::format("{}: run_tests_to_target, run_tests and run_time_s differ in length", where));
    }
    for (std::size_t r = 0; r < to_target.size(); ++r) {
      RunSummary run;
      if (!to_target[r].is_null()) run.tests_to_target = to_target[r].get<std::uint64_t>();
      run.tests = tests[r].get<std::uint64_t>();
      run.time_s = number_of(time_s[r]);
      searcher.per_run.push_back(run);
    }
    searcher.runs = s.value("runs", static_cast<std::uint64_t>(searcher.per_run.size()));
    searcher.by_test = curve_from_json(s["curve_by_test"], where + ": curve_by_test");
    searcher.by_time = curve_from_json(s["curve_by_time"], where + ": curve_by_time");
    if (s.contains("score_fevals")) searcher.score.fevals = number_of(s["score_fevals"]);
    if (s.contains("score_time")) searcher.score.time = number_of(s["score_time"]);
    if (s.contains("score_curve_fevals")) {
      score_curve_from_json(s["score_curve_fevals"], where + ": score_curve_fevals", searcher.score.fevals_x,
                            searcher.score.fevals_curve);
    }
    if (s.contains("score_curve_time")) {
      score_curve_from_json(s["score_curve_time"], where + ": score_curve_time", searcher.score.time_x,
                            searcher.score.time_curve);
    }
    e.searchers.push_back(std::move(searcher));
  }
  if (e.searchers.empty()) throw Error(fmt::format("the simulation '{}' holds no searcher", file));
  return simulation;
}

}  // namespace

namespace {

Json simulation_json(const SimulationReport& simulation, bool details) {
  const Evaluation& evaluation = simulation.evaluation;
  Json searchers = Json::array();
  for (const SearcherEvaluation& e : evaluation.searchers) {
    Json searcher = {{"name", e.name},
                     {"mean_tests", number_or_null(e.mean_tests)},
                     {"median_tests", number_or_null(e.median_tests)},
                     {"p90_tests", number_or_null(e.p90_tests)},
                     {"failed_runs", e.failed_runs},
                     {"mean_time_s", number_or_null(e.mean_time_s)},
                     {"ratio_to_random", number_or_null(e.ratio_to_random.value_or(NAN))},
                     {"score_fevals", number_or_null(e.score.fevals)},
                     {"score_time", number_or_null(e.score.time)},
                     {"runs", e.runs}};
    if (details) {
      Json to_target = Json::array(), tests = Json::array(), time_s = Json::array();
      for (const RunSummary& run : e.per_run) {
        to_target.push_back(run.tests_to_target ? Json(*run.tests_to_target) : nullptr);
        tests.push_back(run.tests);
        time_s.push_back(run.time_s);
      }
      searcher["run_tests_to_target"] = to_target;
      searcher["run_tests"] = tests;
      searcher["run_time_s"] = time_s;
      searcher["curve_by_test"] = curve_json(e.by_test);
      searcher["curve_by_time"] = curve_json(e.by_time);
      if (!e.score.fevals_x.empty()) {
        searcher["score_curve_fevals"] = score_curve_json(e.score.fevals_x, e.score.fevals_curve);
      }
      if (!e.score.time_x.empty()) searcher["score_curve_time"] = score_curve_json(e.score.time_x, e.score.time_curve);
    }
    searchers.push_back(std::move(searcher));
  }
  Json report = {{"best_time", evaluation.best_ms},
                 {"configs", evaluation.configs},
                 {"valid", evaluation.valid},
                 {"searchers", searchers},
                 {"kernel", simulation.kernel},
                 {"device", simulation.device},
                 {"data", simulation.data},
                 {"target", simulation.target},
                 {"target_time", evaluation.target_ms},
                 {"runs", simulation.runs},
                 {"budget", simulation.budget ? Json(*simulation.budget) : nullptr},
                 {"seed", simulation.seed},
                 {"repetitions", simulation.repetitions},
                 {"compile_threads", simulation.compile_threads},
                 {"guesses", simulation.guesses},
                 {"compile_times", simulation.compile_times}};
  if (simulation.left_out_without_counters) report["left_out_without_counters"] = *simulation.left_out_without_counters;
  // best_time and target_time are of the objective's values (milliseconds for time).
  report["objective"] = evaluation.objective;
  if (simulation.left_out_without_energy) report["left_out_without_energy"] = *simulation.left_out_without_energy;
  if (evaluation.score) {
    const ScoreCutoffs& cutoffs = *evaluation.score;
    report["score"] = {{"end_percentile", cutoffs.settings.end_percentile},
                       {"start_percentile", cutoffs.settings.start_percentile},
                       {"time_points", cutoffs.settings.time_points},
                       {"test_cost_ms", cutoffs.test_cost_ms},
                       {"median_test_cost_ms", cutoffs.median_test_cost_ms},
                       {"start_tests", cutoffs.start_tests},
                       {"end_tests", cutoffs.end_tests},
                       {"start_s", cutoffs.start_s},
                       {"end_s", cutoffs.end_s}};
  } else {
    report["score"] = nullptr;
  }
  return report;
}

Json score_curve_columns(const std::vector<double>& curve) {
  Json values = Json::array();
  for (double value : curve) values.push_back(number_or_null(value));
  return values;
}

}  // namespace

void write_simulation_json(std::ostream& out, const SimulationReport& simulation, bool details) {
  out << simulation_json(simulation, details).dump(2) << '\n';
}

void write_simulations_json(std::ostream& out, const std::vector<SimulationReport>& simulations, bool details) {
  Json spaces = Json::array();
  std::vector<const Evaluation*> evaluations;
  for (const SimulationReport& simulation : simulations) {
    spaces.push_back(simulation_json(simulation, details));
    if (simulation.evaluation.score) evaluations.push_back(&simulation.evaluation);
  }
  Json aggregate = Json::array();
  if (!evaluations.empty() && evaluations.size() == simulations.size()) {
    for (const AggregateScore& score : aggregate_scores(evaluations)) {
      Json entry = {{"name", score.name},
                    {"spaces", score.spaces},
                    {"score_fevals", number_or_null(score.fevals)},
                    {"score_fevals_spread", number_or_null(score.fevals_spread)},
                    {"score_time", number_or_null(score.time)},
                    {"score_time_spread", number_or_null(score.time_spread)}};
      if (details) {
        entry["score_curve_fevals"] = score_curve_columns(score.fevals_curve);
        entry["score_curve_time"] = score_curve_columns(score.time_curve);
      }
      aggregate.push_back(std::move(entry));
    }
  }
  out << Json{{"spaces", spaces}, {"aggregate", aggregate}}.dump(2) << '\n';
}

std::vector<SimulationReport> read_simulations_json(const std::filesystem::path& file) {
  // A value of the wrong type (a string where a count belongs, say) is an error naming the file.
  try {
    const Json document = read_json_file(file.string());
    std::vector<SimulationReport> simulations;
    if (document.is_object() && document.contains("spaces") && document["spaces"].is_array()) {
      for (const Json& space : document["spaces"]) simulations.push_back(parse_simulation(space, file.string()));
      if (simulations.empty()) throw Error(fmt::format("the simulation '{}' holds no space", file.string()));
    } else {
      simulations.push_back(parse_simulation(document, file.string()));
    }
    return simulations;
  } catch (const Json::exception& e) {
    throw Error(fmt::format("the simulation '{}' is not what steer simulate --json --details writes: {}",
                            file.string(), e.what()));
  }
}

SimulationReport read_simulation_json(const std::filesystem::path& file) {
  std::vector<SimulationReport> simulations = read_simulations_json(file);
  if (simulations.size() != 1) {
    throw Error(fmt::format("the simulation '{}' holds {} spaces, not one", file.string(), simulations.size()));
  }
  return std::move(simulations.front());
}

ExternalRuns read_external_runs(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw Error(fmt::format("cannot read the runs '{}': {}", file.string(), std::strerror(errno)));
  const std::string where = fmt::format("the runs '{}'", file.string());
  try {
    const Json document = Json::parse(in);
    if (!document.is_object() || !document.contains("strategies") || !document["strategies"].is_object()) {
      throw Error(fmt::format("{} have no object 'strategies'", where));
    }
    ExternalRuns runs;
    runs.tool = document.value("tool", "external");
    runs.data = document.value("data", "");
    for (const auto& [name, list] : document["strategies"].items()) {
      if (!list.is_array()) throw Error(fmt::format("{}: strategy '{}' is not a list of runs", where, name));
      std::vector<std::vector<ExternalTest>> strategy_runs;
      for (const Json& run : list) {
        if (!run.is_object() || !run.contains("tests") || !run["tests"].is_array()) {
          throw Error(fmt::format("{}: a run of '{}' has no list 'tests'", where, name));
        }
        std::vector<ExternalTest> tests;
        double previous = 0;
        for (const Json& test : run["tests"]) {
          if (!test.is_array() || test.size() != 2 || !test[0].is_number()) {
            throw Error(fmt::format("{}: a test of '{}' is not [seconds, runtime_ms or null]: {}", where, name,
                                    test.dump()));
          }
          ExternalTest t{test[0].get<double>(), test[1].is_number() ? test[1].get<double>() : NAN};
          if (t.time_s < previous) {
            throw Error(fmt::format("{}: the seconds of '{}' go back in time ({} after {})", where, name, t.time_s,
                                    previous));
          }
          previous = t.time_s;
          tests.push_back(t);
        }
        strategy_runs.push_back(std::move(tests));
      }
      runs.strategies.emplace_back(name, std::move(strategy_runs));
    }
    return runs;
  } catch (const Json::exception& e) {
    throw Error(fmt::format("{} are not JSON runs: {}", where, e.what()));
  }
}

void write_convergence_csv(std::ostream& out, const Evaluation& evaluation) {
  out << "searcher,axis,x,runs_with_valid,mean_best_ms,std_best_ms\n";
  for (const SearcherEvaluation& s : evaluation.searchers) {
    for (const auto& [axis, curve] : {std::pair{"tests", &s.by_test}, std::pair{"time_s", &s.by_time}}) {
      for (const CurvePoint& p : *curve) {
        const bool any = p.runs_with_valid > 0;
        out << csv::field(s.name) << ',' << axis << ',' << csv::number(p.x) << ',' << p.runs_with_valid << ','
            << (any ? csv::number(p.mean_best_ms) : "") << ',' << (any ? csv::number(p.std_best_ms) : "") << '\n';
      }
    }
  }
}

void write_trace_csv(std::ostream& out, const Evaluation& evaluation, const Recording& recording,
                     std::uint64_t seed) {
  const Objective objective = Objective::parse(evaluation.objective);
  const bool time = objective.kind() == Objective::Kind::Time;
  const std::vector<double> values = objective_values(recording, objective);
  out << "searcher,run,seed,test,with_counters,status,runtime_ms,objective,well_performing,config,explanation\n";
  for (const SearcherEvaluation& e : evaluation.searchers) {
    for (std::size_t r = 0; r < e.per_run.size(); ++r) {
      const RunSummary& run = e.per_run[r];
      std::size_t next_explanation = 0;
      for (std::size_t t = 0; t < run.tested.size(); ++t) {
        const ConfigIndex config = run.tested[t];
        const double runtime = recording.runtime_ms(config);
        const bool ok = recording.status(config) == Status::Ok;
        std::vector<std::string> explained;
        while (next_explanation < run.explanations.size() && run.explanations[next_explanation].first <= t + 1) {
          explained.push_back(describe(run.explanations[next_explanation++].second, recording.space()));
        }
        const bool scored = ok && !std::isnan(values[config]);
        out << fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", csv::field(e.name), r, seed + r, t + 1,
                           run.with_counters[t] ? 1 : 0, to_string(recording.status(config)),
                           ok ? csv::number(runtime) : std::string(),
                           scored && !time ? csv::number(values[config]) : std::string(),
                           scored && values[config] <= evaluation.target_ms ? 1 : 0,
                           csv::field(recording.space().key(config)), csv::field(fmt::format("{}", fmt::join(explained, " / "))));
      }
    }
  }
}

}  // namespace steer
