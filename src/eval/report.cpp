// Reports: the data behind every plot of a recorded space and of a simulation as CSV,
// summary tables, index.html, and the plots, drawn by scripts/report/plot_report.py (C++
// computes everything; the script only draws). docs/report.md.
#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "recording/csv.hpp"
#include "steer/error.hpp"
#include "steer/eval.hpp"

extern char** environ;

namespace steer {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

std::string html(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    switch (c) {
      case '&':
        escaped += "&amp;";
        break;
      case '<':
        escaped += "&lt;";
        break;
      case '>':
        escaped += "&gt;";
        break;
      case '"':
        escaped += "&quot;";
        break;
      default:
        escaped += c;
    }
  }
  return escaped;
}

// Recordings that do not name their kernel or device (T4 files may not) still read well.
std::string named(const std::string& name, const char* what) {
  return name.empty() ? fmt::format("(unnamed {})", what) : name;
}

std::string cell(double value, int decimals) {
  return std::isnan(value) ? std::string("–") : fmt::format("{:.{}f}", value, decimals);
}

struct Plot {
  std::string name, kind, csv, title, xlabel, ylabel, caption;
  Json extra = Json::object();
};

struct Section {
  std::string heading;
  std::string html;  // facts and tables
  std::vector<Plot> plots;
};

void write_score(const Evaluation& e, const fs::path& out, Section& section);

void write_simulation(const SimulationReport& simulation, const fs::path& out, Section& section) {
  const Evaluation& e = simulation.evaluation;
  {
    csv::File csv(out / "summary.csv",
                "searcher,runs,failed_runs,mean_tests,median_tests,p90_tests,mean_time_s,ratio_to_random");
    for (const SearcherEvaluation& s : e.searchers) {
      csv.row(csv::field(s.name), s.runs, s.failed_runs, csv::number(s.mean_tests), csv::number(s.median_tests),
              csv::number(s.p90_tests), csv::number(s.mean_time_s), csv::number(s.ratio_to_random.value_or(NAN)));
    }
    csv.close();
  }
  {
    std::ofstream md(out / "summary.md");
    md << fmt::format(
        "{} on {} (`{}`): {} configurations, {} valid; best {:.4g} ms, target {:.4g} ms ({}x the best); "
        "{} runs per searcher.\n\n",
        named(simulation.kernel, "kernel"), named(simulation.device, "device"), simulation.data, e.configs, e.valid, e.best_ms, e.target_ms,
        simulation.target, e.searchers.empty() ? 0 : e.searchers.front().runs);
    md << "| searcher | runs | mean tests | median | p90 | failed runs | vs random | mean time (s) |\n"
       << "|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const SearcherEvaluation& s : e.searchers) {
      md << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", s.name, s.runs, cell(s.mean_tests, 1),
                        cell(s.median_tests, 1), cell(s.p90_tests, 0), s.failed_runs,
                        cell(s.ratio_to_random.value_or(NAN), 3), cell(s.mean_time_s, 3));
    }
    if (!md.flush()) throw Error(fmt::format("cannot write '{}'", (out / "summary.md").string()));
  }
  {
    csv::File csv(out / "convergence.csv", "searcher,axis,x,runs_with_valid,mean_best_ms,std_best_ms");
    for (const SearcherEvaluation& s : e.searchers) {
      for (const auto& [axis, curve] : {std::pair{"tests", &s.by_test}, std::pair{"time_s", &s.by_time}}) {
        for (const CurvePoint& p : *curve) {
          const bool any = p.runs_with_valid > 0;
          csv.row(csv::field(s.name), axis, csv::number(p.x), p.runs_with_valid, any ? csv::number(p.mean_best_ms) : "",
                  any ? csv::number(p.std_best_ms) : "");
        }
      }
    }
    csv.close();
  }
  {
    csv::File csv(out / "tests_to_target.csv", "searcher,run,tests_to_target,tests,time_s");
    for (const SearcherEvaluation& s : e.searchers) {
      for (std::size_t r = 0; r < s.per_run.size(); ++r) {
        const RunSummary& run = s.per_run[r];
        csv.row(csv::field(s.name), r, run.tests_to_target ? std::to_string(*run.tests_to_target) : std::string(),
                run.tests, csv::number(run.time_s));
      }
    }
    csv.close();
  }

  std::uint64_t runs = e.searchers.empty() ? 0 : e.searchers.front().runs;
  section.heading = "Simulated tuning";
  section.html += fmt::format(
      "<p>{} on {} (<code>{}</code>): {} configurations, {} valid; best {:.4g} ms; target {:.4g} ms ({}× the best). "
      "{} runs per searcher; tests to the target over the runs that reached it.</p>\n",
      html(named(simulation.kernel, "kernel")), html(named(simulation.device, "device")), html(simulation.data), e.configs, e.valid, e.best_ms,
      e.target_ms, simulation.target, runs);
  section.html +=
      "<table><tr><th>searcher</th><th>runs</th><th>mean tests</th><th>median</th><th>p90</th><th>failed runs</th>"
      "<th>vs random</th><th>mean time (s)</th></tr>\n";
  for (const SearcherEvaluation& s : e.searchers) {
    section.html += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        html(s.name), s.runs, cell(s.mean_tests, 1), cell(s.median_tests, 1), cell(s.p90_tests, 0), s.failed_runs,
        cell(s.ratio_to_random.value_or(NAN), 3), cell(s.mean_time_s, 3));
  }
  section.html +=
      "</table>\n<p>Data: <a href=\"summary.csv\">summary.csv</a>, <a href=\"summary.md\">summary.md</a></p>\n";

  section.plots.push_back({"convergence_tests", "convergence", "convergence.csv",
                           "Best runtime found vs tests (mean ± 1 std over runs)", "tests", "best runtime (ms)",
                           "Mean over the runs that have a valid test by then, with a ±1 standard deviation band; "
                           "a run that reached the target keeps its best.",
                           Json{{"axis", "tests"}, {"best_ms", e.best_ms}, {"target_ms", e.target_ms}}});
  section.plots.push_back({"convergence_time", "convergence", "convergence.csv",
                           "Best runtime found vs simulated tuning time (mean ± 1 std over runs)",
                           "simulated tuning time (s)", "best runtime (ms)",
                           simulation.compile_times == "mean"
                               ? "Simulated time: compile time (each test charged the recording's mean compile) plus "
                                 "the runtime of every test (docs/simulate.md)."
                               : "Simulated time: compile time plus the runtime of every test (docs/simulate.md).",
                           Json{{"axis", "time_s"}, {"best_ms", e.best_ms}, {"target_ms", e.target_ms}}});
  section.plots.push_back({"tests_to_target", "tests_to_target", "tests_to_target.csv",
                           "Tests to a well-performing configuration, per searcher", "tests to target", "",
                           "Left: distribution over the runs that reached the target (box: quartiles, whiskers: "
                           "5th–95th percentile); right: the fraction of runs that reached it within n tests.",
                           Json{{"target", simulation.target}}});
  if (e.score) write_score(e, out, section);
}

// The performance score: P over both axes per searcher, the methodology's plot.
void write_score(const Evaluation& e, const fs::path& out, Section& section) {
  csv::File csv(out / "score.csv", "searcher,axis,x,score");
  for (const SearcherEvaluation& s : e.searchers) {
    for (std::size_t i = 0; i < s.score.fevals_x.size(); ++i) {
      csv.row(csv::field(s.name), "tests", csv::number(s.score.fevals_x[i]), csv::number(s.score.fevals_curve[i]));
    }
    for (std::size_t i = 0; i < s.score.time_x.size(); ++i) {
      csv.row(csv::field(s.name), "time_s", csv::number(s.score.time_x[i]), csv::number(s.score.time_curve[i]));
    }
  }
  csv.close();
  const ScoreCutoffs& cutoffs = *e.score;
  section.html += fmt::format(
      "<p>Performance score P (0: random search, 1: the optimum) from {} to {} tests and from {:.4g} to {:.4g} s "
      "of simulated time ({:.4g} ms a test on average):</p>\n<table><tr><th>searcher</th><th>P tests</th>"
      "<th>P time</th></tr>\n",
      cutoffs.start_tests, cutoffs.end_tests, cutoffs.start_s, cutoffs.end_s, cutoffs.test_cost_ms);
  for (const SearcherEvaluation& s : e.searchers) {
    section.html += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n", html(s.name), cell(s.score.fevals, 3),
                                cell(s.score.time, 3));
  }
  section.html += "</table>\n<p>Data: <a href=\"score.csv\">score.csv</a></p>\n";
  const char* caption =
      "P(x) = (baseline - best found) / (baseline - optimum) against the calculated random-search baseline, "
      "between the methodology's cut-offs (docs/simulate.md).";
  section.plots.push_back({"score_tests", "score", "score.csv", "Performance score P vs tests", "tests", "P",
                           caption, Json{{"axis", "tests"}}});
  section.plots.push_back({"score_time", "score", "score.csv", "Performance score P vs simulated tuning time",
                           "simulated tuning time (s)", "P", caption, Json{{"axis", "time_s"}}});
}

// The score over several spaces: mean and spread per searcher, and the mean P curve over
// the fraction of each space's budget.
void write_aggregate(const std::vector<SimulationReport>& spaces, const fs::path& out, Section& section) {
  std::vector<const Evaluation*> evaluations;
  for (const SimulationReport& space : spaces) evaluations.push_back(&space.evaluation);
  const std::vector<AggregateScore> scores = aggregate_scores(evaluations);
  csv::File csv(out / "aggregate_score.csv", "searcher,axis,x,score");
  for (const AggregateScore& score : scores) {
    for (const auto& [axis, curve] : {std::pair{"tests", &score.fevals_curve}, std::pair{"time_s", &score.time_curve}}) {
      for (std::size_t i = 0; i < curve->size(); ++i) {
        const double fraction = curve->size() == 1 ? 0 : static_cast<double>(i) / static_cast<double>(curve->size() - 1);
        csv.row(csv::field(score.name), axis, csv::number(fraction), csv::number((*curve)[i]));
      }
    }
  }
  csv.close();
  section.heading = fmt::format("Performance score over {} spaces", spaces.size());
  section.html += "<p>Spaces:";
  for (const SimulationReport& space : spaces) section.html += fmt::format(" <code>{}</code>", html(space.data));
  section.html +=
      ".</p>\n<table><tr><th>searcher</th><th>P tests (mean ± sd over spaces)</th><th>P time (mean ± sd)</th>"
      "</tr>\n";
  for (const AggregateScore& score : scores) {
    section.html += fmt::format("<tr><td>{}</td><td>{} ± {}</td><td>{} ± {}</td></tr>\n", html(score.name),
                                cell(score.fevals, 3), cell(score.fevals_spread, 3), cell(score.time, 3),
                                cell(score.time_spread, 3));
  }
  section.html += "</table>\n<p>Data: <a href=\"aggregate_score.csv\">aggregate_score.csv</a></p>\n";
  const char* caption = "The mean over spaces of P at each fraction of the space's budget, from its start to its "
                        "end cut-off (docs/simulate.md).";
  section.plots.push_back({"aggregate_score_time", "score", "aggregate_score.csv",
                           "Performance score P over the time budget, mean over spaces", "fraction of the time budget",
                           "P", caption, Json{{"axis", "time_s"}}});
  section.plots.push_back({"aggregate_score_tests", "score", "aggregate_score.csv",
                           "Performance score P over the test budget, mean over spaces", "fraction of the test budget",
                           "P", caption, Json{{"axis", "tests"}}});
}

void write_space(const ImportedRecording& imported, const Recording& recording, const std::string& source,
                 std::optional<std::size_t> bins, const fs::path& out, Section& section) {
  const Space& space = recording.space();
  std::vector<double> runtimes, energies;
  std::vector<std::string> keys;
  std::map<std::string, std::uint64_t> statuses;
  {
    csv::File csv(out / "space_runtimes.csv", "config,status,runtime_ms,energy_j");
    for (ConfigIndex c = 0; c < space.size(); ++c) {
      if (!recording.present(c)) continue;
      const Result* result = recording.recorded(c);
      ++statuses[to_string(recording.status(c))];
      csv.row(csv::field(result->key()), to_string(recording.status(c)), csv::number(recording.runtime_ms(c)),
              csv::number(recording.energy_joules(c)));
      if (recording.status(c) == Status::Ok && !std::isnan(recording.runtime_ms(c))) {
        runtimes.push_back(recording.runtime_ms(c));
        energies.push_back(recording.energy_joules(c));
        keys.push_back(result->key());
      }
    }
    csv.close();
  }

  section.heading = "The recorded space";
  section.html +=
      fmt::format("<p>{} on {} (<code>{}</code>{}): {} configurations recorded ({} tests in the file).",
                  html(named(recording.kernel(), "kernel")), html(named(recording.device(), "device")), html(source),
                  imported.problem_size.empty() ? "" : ", size " + html(imported.problem_size),
                  recording.present_count(), imported.results.size());
  if (auto best = recording.best_runtime_ms()) section.html += fmt::format(" Best valid runtime {:.4g} ms.", *best);
  section.html += "</p>\n<table><tr><th>status</th><th>configurations</th></tr>\n";
  for (const auto& [status, count] : statuses)
    section.html += fmt::format("<tr><td>{}</td><td>{}</td></tr>\n", status, count);
  section.html += "</table>\n<p>Data: <a href=\"space_runtimes.csv\">space_runtimes.csv</a></p>\n";

  if (!runtimes.empty()) {
    Histogram histogram = runtime_histogram(runtimes, bins);
    csv::File csv(out / "runtime_histogram.csv", "bin_low_ms,bin_high_ms,count");
    for (std::size_t b = 0; b < histogram.counts.size(); ++b) {
      csv.row(csv::number(histogram.edges[b]), csv::number(histogram.edges[b + 1]), histogram.counts[b]);
    }
    csv.close();
    section.plots.push_back(
        {"runtime_histogram", "histogram", "runtime_histogram.csv",
         fmt::format("Runtimes of the {} valid configurations", runtimes.size()), "runtime (ms)", "configurations",
         histogram.logarithmic ? "Logarithmic bins: the runtimes span more than a factor of 10." : "Equal-width bins.",
         Json{{"log_x", histogram.logarithmic}}});
  }

  {  // best so far in the order the tests were recorded (the tuning run itself, for a store)
    csv::File csv(out / "recorded_order.csv", "test,status,runtime_ms,best_ms");
    double best = NAN;
    std::uint64_t test = 0;
    for (const Result& result : imported.results) {
      const double runtime = result.ok() ? recorded_runtime_ms(result) : NAN;
      if (!std::isnan(runtime) && (std::isnan(best) || runtime < best)) best = runtime;
      csv.row(++test, to_string(result.status), csv::number(runtime), csv::number(best));
    }
    csv.close();
    section.plots.push_back({"recorded_order", "order", "recorded_order.csv",
                             "Best runtime so far, in the order the tests were recorded", "test", "runtime (ms)",
                             "For a results store: the tuning run as it happened. For a file of another tool: the "
                             "order of its results.",
                             Json::object()});
  }

  std::vector<double> pareto_runtimes, pareto_energies;
  std::vector<std::string> pareto_keys;
  for (std::size_t i = 0; i < runtimes.size(); ++i) {
    if (std::isnan(energies[i])) continue;
    pareto_runtimes.push_back(runtimes[i]);
    pareto_energies.push_back(energies[i]);
    pareto_keys.push_back(keys[i]);
  }
  if (!pareto_runtimes.empty()) {
    std::vector<bool> front = pareto_optimal(pareto_runtimes, pareto_energies);
    csv::File csv(out / "pareto.csv", "config,runtime_ms,energy_j,on_front");
    std::size_t on_front = 0;
    for (std::size_t i = 0; i < pareto_runtimes.size(); ++i) {
      csv.row(csv::field(pareto_keys[i]), csv::number(pareto_runtimes[i]), csv::number(pareto_energies[i]),
              front[i] ? 1 : 0);
      on_front += front[i] ? 1 : 0;
    }
    csv.close();
    section.plots.push_back({"pareto", "pareto", "pareto.csv", "Runtime and energy per launch", "runtime (ms)",
                             "energy per launch (J)",
                             fmt::format("{} valid configurations with energy; {} on the Pareto front (no other is "
                                         "both faster and more frugal).",
                                         pareto_runtimes.size(), on_front),
                             Json::object()});
  }
}

// The tests of a tuning run and the searcher's explanations (steer tune --explain-to): a
// table of the explanations, and per test which explanation proposed it, for the plot.
std::string write_explanations(const fs::path& file, const fs::path& out, Section& section) {
  std::ifstream in(file);
  if (!in) throw Error(fmt::format("cannot read the explanations '{}'", file.string()));
  Json document;
  try {
    document = Json::parse(in);
    if (!document.contains("tests") || !document.contains("explanations")) throw Error("no \"tests\" or \"explanations\"");
  } catch (const std::exception& e) {
    throw Error(fmt::format("'{}' is not what steer tune --explain-to writes: {}", file.string(), e.what()));
  }
  const Json& tests = document["tests"];
  const Json& explanations = document["explanations"];
  // Which explanation (its number, from 1) led to each configuration: the first that listed it.
  std::map<std::string, std::size_t> proposed_by;
  for (std::size_t i = 0; i < explanations.size(); ++i) {
    for (const Json& key : explanations[i].value("next", Json::array())) proposed_by.emplace(key.get<std::string>(), i + 1);
  }
  csv::File csv(out / "explain_tests.csv", "test,runtime_ms,profiled,proposed_by,explanation,label");
  std::map<std::size_t, std::size_t> explained_after;  // test -> explanation number
  for (std::size_t i = 0; i < explanations.size(); ++i) explained_after.emplace(explanations[i].value("after_test", 0), i + 1);
  for (const Json& test : tests) {
    const std::size_t number = test.value("test", 0);
    const std::string key = test.value("config", "");
    const double runtime = test["runtime_ms"].is_number() ? test["runtime_ms"].get<double>() : NAN;
    const auto by = proposed_by.find(key);
    const auto after = explained_after.find(number);
    std::string label;
    if (after != explained_after.end()) {
      const Json& e = explanations[after->second - 1];
      const Json& b = e.value("bottlenecks", Json::array());
      const Json& c = e.value("changes", Json::array());
      const bool analysed = e.value("missing_inputs", Json::array()).empty();
      label = fmt::format("#{} {}{}", after->second,
                          !analysed ? std::string("no analysis") : b.empty() ? std::string("no bottleneck") : b[0][0].get<std::string>(),
                          c.empty() ? std::string() : fmt::format(" → {} {:+.2f}", c[0][0].get<std::string>(), c[0][1].get<double>()));
    }
    csv.row(number, csv::number(runtime), test.value("profiled", false) ? 1 : 0,
            by == proposed_by.end() ? std::string() : std::to_string(by->second),
            after == explained_after.end() ? std::string() : std::to_string(after->second), csv::field(label));
  }
  csv.close();
  section.html += fmt::format("<p>{} tests by <code>{}</code>; {} explanations (<code>{}</code>).</p>\n", tests.size(),
                              html(document.value("searcher", "")), explanations.size(), html(file.string()));
  section.html += "<table><tr><th>#</th><th>after test</th><th>profiled</th><th>bottlenecks</th><th>asks</th><th>next</th></tr>\n";
  for (std::size_t i = 0; i < explanations.size(); ++i) {
    const Json& e = explanations[i];
    const auto list = [](const Json& pairs, const char* format) {
      std::vector<std::string> parts;
      for (std::size_t k = 0; k < std::min<std::size_t>(pairs.size(), 4); ++k) {
        parts.push_back(fmt::format(fmt::runtime(format), pairs[k][0].get<std::string>(), pairs[k][1].get<double>()));
      }
      return fmt::format("{}", fmt::join(parts, ", "));
    };
    section.html += fmt::format("<tr><td>{}</td><td>{}</td><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", i + 1,
                                e.value("after_test", 0), html(e.value("profiled", "")), e.value("reused", false) ? " (again)" : "",
                                html(list(e.value("bottlenecks", Json::array()), "{} {:.2f}")),
                                html(list(e.value("changes", Json::array()), "{} {:+.2f}")), e.value("next", Json::array()).size());
  }
  section.html += "</table>\n<p>Data: <a href=\"explain_tests.csv\">explain_tests.csv</a></p>\n";
  section.plots.push_back({"explain", "explain", "explain_tests.csv", "What the counters decided", "test", "runtime (ms)",
                           "Every test of the run; each profiled test is marked with the bottleneck the expert system "
                           "found first and the counter change it asked for most, and the tests its analysis "
                           "proposed share its colour.",
                           Json::object()});
  return document.value("kernel", "");
}

// Runs `argv` (argv[0] looked up on PATH); stdout and stderr to /dev/null when quiet.
// Returns the exit status, or -errno when it could not be started.
int spawn(const std::vector<std::string>& argv, bool quiet) {
  std::vector<char*> pointers;
  for (const std::string& arg : argv) pointers.push_back(const_cast<char*>(arg.c_str()));
  pointers.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (quiet) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  }
  pid_t pid = 0;
  int error = posix_spawnp(&pid, pointers[0], &actions, nullptr, pointers.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) return -error;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -errno;
  }
  if (WIFEXITED(status)) {
    // posix_spawnp may report a missing program only through the child's exit status 127.
    return WEXITSTATUS(status);
  }
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

// The first interpreter that imports matplotlib: --python, else python3 on PATH, else
// /usr/bin/python3 (Debian's, where scripts/setup installs python3-matplotlib).
std::string find_python(const std::string& requested) {
  std::vector<std::string> candidates;
  if (!requested.empty()) {
    candidates = {requested};
  } else {
    candidates = {"python3", "/usr/bin/python3"};
  }
  std::vector<std::string> tried;
  for (const std::string& python : candidates) {
    int status = spawn({python, "-c", "import matplotlib, numpy"}, true);
    if (status == 0) return python;
    if (status == -ENOENT || status == 127) {
      tried.push_back(fmt::format("{}: not found", python));
    } else if (status < 0) {
      tried.push_back(fmt::format("{}: cannot run it: {}", python, std::strerror(-status)));
    } else {
      tried.push_back(fmt::format("{}: cannot import matplotlib and numpy", python));
    }
  }
  throw Error(fmt::format(
      "steer report draws its plots with Python 3 and matplotlib, and found no interpreter with them ({}); "
      "install them with scripts/setup (Debian packages python3-matplotlib, python3-numpy), name an interpreter "
      "with --python, or write only the data and index.html with --no-plots",
      fmt::join(tried, "; ")));
}

// scripts/report/plot_report.py: STEER_REPORT_SCRIPT, else next to the executable or a
// folder above it (a build folder inside the source tree, or an installed share/steer/),
// else in the source tree this binary was built from.
fs::path find_script() {
  std::vector<fs::path> tried;
  if (const char* set = std::getenv("STEER_REPORT_SCRIPT"); set != nullptr && *set != '\0') {
    if (fs::is_regular_file(set)) return set;
    throw Error(fmt::format("STEER_REPORT_SCRIPT names '{}', which is not a file", set));
  }
  std::error_code error;
  fs::path executable = fs::read_symlink("/proc/self/exe", error);
  if (!error) {
    fs::path dir = executable.parent_path();
    for (int level = 0; level < 4 && !dir.empty(); ++level, dir = dir.parent_path()) {
      for (fs::path candidate : {dir / "scripts/report/plot_report.py", dir / "share/steer/plot_report.py"}) {
        if (fs::is_regular_file(candidate)) return candidate;
        tried.push_back(candidate);
      }
      if (dir == dir.parent_path()) break;
    }
  }
#ifdef STEER_SOURCE_DIR
  fs::path source = fs::path(STEER_SOURCE_DIR) / "scripts/report/plot_report.py";
  if (fs::is_regular_file(source)) return source;
  tried.push_back(source);
#endif
  std::vector<std::string> names;
  for (const fs::path& p : tried) names.push_back(p.string());
  throw Error(fmt::format("cannot find the plotting script plot_report.py (looked at {}); set STEER_REPORT_SCRIPT",
                          fmt::join(names, ", ")));
}

void draw(const std::vector<Section>& sections, const std::string& title, const fs::path& out,
          const std::string& requested_python) {
  Json plots = Json::array();
  for (const Section& section : sections) {
    for (const Plot& plot : section.plots) {
      Json entry = {{"name", plot.name},   {"kind", plot.kind},     {"csv", plot.csv},
                    {"title", plot.title}, {"xlabel", plot.xlabel}, {"ylabel", plot.ylabel}};
      entry.update(plot.extra);
      plots.push_back(entry);
    }
  }
  {
    std::ofstream manifest(out / "report.json");
    manifest << Json{{"title", title}, {"plots", plots}}.dump(2) << '\n';
    if (!manifest.flush()) throw Error(fmt::format("cannot write '{}'", (out / "report.json").string()));
  }
  if (plots.empty()) return;
  const fs::path script = find_script();
  const std::string python = find_python(requested_python);
  int status = spawn({python, script.string(), out.string()}, false);
  if (status != 0) {
    throw Error(fmt::format("the plotting script {} failed ({} {}; its messages are above)", script.string(),
                            status < 0 ? "could not start it:" : "exit status",
                            status < 0 ? std::strerror(-status) : std::to_string(status)));
  }
  for (const Json& plot : plots) {
    for (const char* extension : {".png", ".svg"}) {
      fs::path file = out / (plot["name"].get<std::string>() + extension);
      std::error_code error;
      if (!fs::is_regular_file(file) || fs::file_size(file, error) == 0) {
        throw Error(fmt::format("the plotting script {} did not write '{}'", script.string(), file.string()));
      }
    }
  }
}

void write_index(const std::vector<Section>& sections, const std::string& title, const fs::path& out, bool plots) {
  std::ofstream index(out / "index.html");
  index << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" << html(title) << "</title>\n"
        << "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
           "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
           "td:first-child,th:first-child{text-align:left}img{max-width:100%}figcaption{color:#555}</style>\n"
        << "</head><body>\n<h1>" << html(title) << "</h1>\n";
  for (const Section& section : sections) {
    index << "<h2>" << html(section.heading) << "</h2>\n" << section.html;
    for (const Plot& plot : section.plots) {
      index << "<figure>\n";
      if (plots) {
        index << fmt::format("<a href=\"{0}.svg\"><img src=\"{0}.png\" alt=\"{1}\"></a>\n", plot.name,
                             html(plot.title));
      }
      index << fmt::format("<figcaption><b>{}</b>. {} ", html(plot.title), html(plot.caption));
      if (plots) index << fmt::format("<a href=\"{0}.png\">PNG</a> · <a href=\"{0}.svg\">SVG</a> · ", plot.name);
      index << fmt::format("data: <a href=\"{0}\">{0}</a></figcaption>\n</figure>\n", plot.csv);
    }
  }
  index << "</body></html>\n";
  if (!index.flush()) throw Error(fmt::format("cannot write '{}'", (out / "index.html").string()));
}

}  // namespace

std::size_t write_report(const ReportInput& input, const ReportOptions& options) {
  if (!input.recording && !input.simulation && !input.spaces && input.explanations.empty()) {
    throw Error("nothing to report: no recording, simulation or explanations");
  }
  std::error_code error;
  fs::create_directories(options.out, error);
  if (error || !fs::is_directory(options.out)) {
    throw Error(fmt::format("cannot create the output folder '{}': {}", options.out.string(),
                            error ? error.message() : "a file of that name exists"));
  }
  const fs::path& out = options.out;
  std::vector<Section> sections;
  std::string title = options.title;
  if (input.recording) {
    Section space;
    write_space(*input.imported, *input.recording, input.source, options.bins, out, space);
    sections.push_back(std::move(space));
    if (title.empty()) {
      title = fmt::format("{} on {}", named(input.recording->kernel(), "kernel"),
                          named(input.recording->device(), "device"));
    }
  }
  if (input.simulation) {
    Section section;
    write_simulation(*input.simulation, out, section);
    sections.insert(sections.begin(), std::move(section));
    if (title.empty()) {
      title = fmt::format("{} on {}", named(input.simulation->kernel, "kernel"), named(input.simulation->device, "device"));
    }
  }
  if (input.spaces) {
    Section section;
    write_aggregate(*input.spaces, out, section);
    sections.insert(sections.begin(), std::move(section));
    if (title.empty()) title = fmt::format("search over {} spaces", input.spaces->size());
  }
  if (!input.explanations.empty()) {
    Section section;
    section.heading = "Explanations";
    const std::string kernel = write_explanations(input.explanations, out, section);
    sections.insert(sections.begin(), std::move(section));
    if (title.empty()) title = fmt::format("explanations of a tuning of {}", named(kernel, "kernel"));
  }
  title = "Steer report: " + title;
  if (options.plots) draw(sections, title, out, options.python);
  write_index(sections, title, out, options.plots);
  std::size_t plots = 0;
  for (const Section& section : sections) plots += section.plots.size();
  return plots;
}

}  // namespace steer
