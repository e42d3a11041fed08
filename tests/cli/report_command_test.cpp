// `steer report`, run as a user runs it: plots (PNG, SVG), index.html and the CSV data behind
// them, on a recording of another tool and on a hand-made results store whose numbers are worked out
// by hand below; and its errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "steer/result.hpp"
#include "steer/store.hpp"
#include "recording_files.hpp"
#include "steer_cli_runner.hpp"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

using steer::test_support::run_steer;
using Outcome = steer::test_support::CliOutcome;

// A fresh folder per test, removed when it ends.
class Scratch {
 public:
  Scratch()
      : path_(fs::temp_directory_path() / ("steer_report_" + std::to_string(getpid()) + "_" +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~Scratch() { fs::remove_all(path_); }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

std::string read_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Rows of a CSV file without quoted commas, the header first.
std::vector<std::vector<std::string>> read_csv(const fs::path& file) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::stringstream split(line);
    for (std::string cell; std::getline(split, cell, ',');) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    rows.push_back(cells);
  }
  return rows;
}

void expect_plot(const fs::path& folder, const std::string& name) {
  const std::string png = read_file(folder / (name + ".png"));
  ASSERT_GT(png.size(), 1000u) << name << ".png";
  EXPECT_EQ(png.substr(1, 3), "PNG") << name << ".png is not a PNG";
  EXPECT_THAT(read_file(folder / (name + ".svg")), HasSubstr("<svg")) << name << ".svg";
  const std::string index = read_file(folder / "index.html");
  EXPECT_THAT(index, HasSubstr("src=\"" + name + ".png\""));
  EXPECT_THAT(index, HasSubstr("href=\"" + name + ".svg\""));
}

const std::string kCoulomb = STEER_DATA_DIR "/recordings/ktt/coulomb_rtx2080.ktt.json.gz";

TEST(ReportCommand, DrawsEveryPlotOfARecordingAndItsSimulation) {
  Scratch scratch;
  const fs::path out = scratch / "report";
  Outcome outcome = run_steer("report --db '" + kCoulomb +
                              "' --searcher random,exhaustive --runs 20 --threads 2 --out '" + out.string() + "'");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_THAT(outcome.output, HasSubstr("wrote 5 plots"));
  for (const char* plot :
       {"convergence_tests", "convergence_time", "tests_to_target", "runtime_histogram", "recorded_order"}) {
    expect_plot(out, plot);
  }
  EXPECT_FALSE(fs::exists(out / "pareto.png")) << "KTT recordings carry no energy";
  const std::string index = read_file(out / "index.html");
  EXPECT_THAT(index, HasSubstr("<html"));
  EXPECT_THAT(index, HasSubstr("210 configurations"));

  auto summary = read_csv(out / "summary.csv");
  ASSERT_EQ(summary.size(), 3u);
  EXPECT_EQ(summary[0][0], "searcher");
  EXPECT_EQ(summary[1][0], "random");
  EXPECT_EQ(summary[1][1], "20");
  EXPECT_EQ(summary[2][0], "exhaustive");
  auto runs = read_csv(out / "tests_to_target.csv");
  EXPECT_EQ(runs.size(), 1u + 2 * 20) << "one row per run and searcher";
  auto histogram = read_csv(out / "runtime_histogram.csv");
  ASSERT_GT(histogram.size(), 1u);
  int counted = 0;
  for (std::size_t i = 1; i < histogram.size(); ++i) counted += std::stoi(histogram[i][2]);
  EXPECT_EQ(counted, 210) << "every valid configuration in one bin";
  EXPECT_EQ(read_csv(out / "space_runtimes.csv").size(), 1u + 210);
  EXPECT_EQ(read_csv(out / "convergence.csv")[0],
            (std::vector<std::string>{"searcher", "axis", "x", "runs_with_valid", "mean_best_ms", "std_best_ms"}));
}

TEST(ReportCommand, PlotsTheDetailedOutputOfSteerSimulate) {
  Scratch scratch;
  Outcome simulated = run_steer(
      "simulate --data '" + kCoulomb + "' --searcher random,ils --runs 30 --threads 2 --json --details", false);
  ASSERT_EQ(simulated.exit_code, 0) << simulated.output;
  const nlohmann::json json = nlohmann::json::parse(simulated.output);
  ASSERT_EQ(json["searchers"][1]["run_tests_to_target"].size(), 30u);
  EXPECT_EQ(json["kernel"], "directCoulombSum_kernel");
  EXPECT_EQ(json["device"], "NVIDIA GeForce RTX 2080 Ti");
  std::ofstream(scratch / "simulation.json") << simulated.output;

  const fs::path out = scratch / "report";
  Outcome outcome =
      run_steer("report --simulation '" + (scratch / "simulation.json").string() + "' --out '" + out.string() + "'");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  for (const char* plot : {"convergence_tests", "convergence_time", "tests_to_target"}) expect_plot(out, plot);
  EXPECT_FALSE(fs::exists(out / "runtime_histogram.csv")) << "no recording was given";
  auto summary = read_csv(out / "summary.csv");
  ASSERT_EQ(summary.size(), 3u);
  EXPECT_EQ(summary[2][0], "ils");
  EXPECT_DOUBLE_EQ(std::stod(summary[2][3]), json["searchers"][1]["mean_tests"].get<double>());
  // The distribution holds each run's tests to target, as simulate reported it.
  auto runs = read_csv(out / "tests_to_target.csv");
  ASSERT_EQ(runs.size(), 61u);
  for (std::size_t r = 0; r < 30; ++r) {
    EXPECT_EQ(runs[31 + r][0], "ils");
    EXPECT_EQ(std::stoull(runs[31 + r][2]), json["searchers"][1]["run_tests_to_target"][r].get<std::uint64_t>());
  }
  EXPECT_THAT(read_file(out / "summary.md"), HasSubstr("| ils | 30 |"));
}

// X = 1..6, appended in the order 3, 1, 5, 2, 4, 6; each compiled in 10 ms.
//   X:        1    2              3    4    5    6
//   runtime:  4    compile error  2    1    8    2    (ms)
//   energy:   2    -              3    5    1    4    (J per launch)
void write_hand_made_store(const fs::path& file) {
  const double runtime[] = {4, NAN, 2, 1, 8, 2};
  const double energy[] = {2, NAN, 3, 5, 1, 4};
  steer::Store store = steer::Store::open(file);
  const std::int64_t tuning = store.tuning({"hand", "", "Hand-made GPU", "cuda", "N=1"});
  for (int x : {3, 1, 5, 2, 4, 6}) {
    steer::Result result;
    result.configuration = {{"X", x}};
    result.config_index = static_cast<std::uint64_t>(x - 1);
    result.compile_ms = 10;
    if (std::isnan(runtime[x - 1])) {
      result.status = steer::Status::CompileError;
      result.message = "error: hand-made";
    } else {
      result.status = steer::Status::Ok;
      result.time = steer::TimingStats::from_samples({runtime[x - 1]});
      result.energy = steer::EnergyStats{.joules_per_launch = energy[x - 1]};
    }
    store.append(tuning, result);
  }
}

void gzip(const fs::path& from, const fs::path& to) {
  const std::string bytes = read_file(from);
  gzFile out = gzopen(to.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(gzwrite(out, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  gzclose(out);
}

TEST(ReportCommand, StatisticsOfAHandMadeStoreAreTheHandComputedOnes) {
  Scratch scratch;
  write_hand_made_store(scratch / "hand.db");
  gzip(scratch / "hand.db", scratch / "hand.db.gz");  // as data/h200/*.db.gz are kept
  const fs::path out = scratch / "report";
  Outcome outcome = run_steer("report --db '" + (scratch / "hand.db.gz").string() +
                              "' --bins 7 --searcher exhaustive --runs 3 --no-searcher-time --no-plots --out '" + out.string() + "'");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_FALSE(fs::exists(out / "runtime_histogram.png")) << "--no-plots draws nothing";
  EXPECT_THAT(read_file(out / "index.html"), HasSubstr("runtime_histogram.csv"));

  // Valid runtimes 4, 2, 1, 8, 2: from 1 to 8 (less than 10x: equal widths), 7 bins of 1 ms:
  // [1,2) holds 1; [2,3) 2 and 2; [4,5) 4; the last, [7,8], holds the maximum 8.
  auto histogram = read_csv(out / "runtime_histogram.csv");
  ASSERT_EQ(histogram.size(), 8u);
  const int counts[] = {1, 2, 0, 1, 0, 0, 1};
  for (int b = 0; b < 7; ++b) {
    EXPECT_NEAR(std::stod(histogram[b + 1][0]), 1 + b, 1e-12);
    EXPECT_NEAR(std::stod(histogram[b + 1][1]), 2 + b, 1e-12);
    EXPECT_EQ(std::stoi(histogram[b + 1][2]), counts[b]) << "bin " << b;
  }

  // Pareto front of (runtime, energy): (1,5), (2,3), (4,2), (8,1); X=6's (2,4) is beaten by X=3's (2,3).
  auto pareto = read_csv(out / "pareto.csv");
  ASSERT_EQ(pareto.size(), 6u) << "the five valid configurations";
  EXPECT_EQ(pareto[0], (std::vector<std::string>{"config", "runtime_ms", "energy_j", "on_front"}));
  const std::vector<std::vector<std::string>> expected_pareto = {{"X=1", "4", "2", "1"},
                                                                 {"X=3", "2", "3", "1"},
                                                                 {"X=4", "1", "5", "1"},
                                                                 {"X=5", "8", "1", "1"},
                                                                 {"X=6", "2", "4", "0"}};
  for (std::size_t i = 0; i < expected_pareto.size(); ++i) EXPECT_EQ(pareto[i + 1], expected_pareto[i]);

  // In the order appended (X = 3, 1, 5, 2, 4, 6) the best so far is 2, 2, 2, 2, 1, 1.
  auto order = read_csv(out / "recorded_order.csv");
  ASSERT_EQ(order.size(), 7u);
  const char* best[] = {"2", "2", "2", "2", "1", "1"};
  for (int t = 0; t < 6; ++t) EXPECT_EQ(order[t + 1][3], best[t]) << "test " << t + 1;
  EXPECT_EQ(order[4][1], "compile_error");
  EXPECT_EQ(order[4][2], "") << "a failed test has no runtime";

  // Exhaustive search (index order X = 1, 2, 3, 4) reaches 1.1 x 1 ms at X=4, the 4th test,
  // in every run. The one modelled compile stream compiles one configuration after another
  // while the device runs, 10 ms each, so X=4's compile is done at 40 ms; then its framework
  // time (the typical 0.2 ms: the store records none) and its run of 1 ms: 0.0412 s.
  auto summary = read_csv(out / "summary.csv");
  ASSERT_EQ(summary.size(), 2u);
  EXPECT_EQ(summary[1][0], "exhaustive");
  EXPECT_EQ(summary[1][1], "3");  // runs
  EXPECT_EQ(summary[1][2], "0");  // failed
  EXPECT_EQ(summary[1][3], "4");  // mean
  EXPECT_EQ(summary[1][4], "4");  // median
  EXPECT_EQ(summary[1][5], "4");  // p90
  EXPECT_NEAR(std::stod(summary[1][6]), 0.0412, 1e-12);
  auto runs = read_csv(out / "tests_to_target.csv");
  ASSERT_EQ(runs.size(), 4u);
  for (int r = 0; r < 3; ++r) {
    ASSERT_EQ(runs[r + 1].size(), 5u);
    EXPECT_EQ(std::vector<std::string>(runs[r + 1].begin(), runs[r + 1].begin() + 4),
              (std::vector<std::string>{"exhaustive", std::to_string(r), "4", "4"}));
    EXPECT_NEAR(std::stod(runs[r + 1][4]), 0.0412, 1e-12);
  }
  // Best so far after tests 1..4: 4, 4 (compile error), 2, 1; every run alike, so no spread.
  auto curves = read_csv(out / "convergence.csv");
  const char* mean[] = {"4", "4", "2", "1"};
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(curves[t + 1],
              (std::vector<std::string>{"exhaustive", "tests", std::to_string(t + 1), "3", mean[t], "0"}));
  }
}

TEST(ReportCommand, DrawsTheParetoPlotWhenEnergyWasRecorded) {
  Scratch scratch;
  write_hand_made_store(scratch / "hand.db");
  const fs::path out = scratch / "report";
  Outcome outcome = run_steer("report --db '" + (scratch / "hand.db").string() + "' --out '" + out.string() + "'");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_THAT(outcome.output, HasSubstr("wrote 3 plots"));
  for (const char* plot : {"runtime_histogram", "recorded_order", "pareto"}) expect_plot(out, plot);
  EXPECT_THAT(read_file(out / "index.html"), HasSubstr("4 on the Pareto front"));
}

TEST(ReportCommand, WritesTheDataOfEveryRecordingOfOtherToolsAndOurStores) {
  Scratch scratch;
  std::vector<fs::path> recordings = steer::test_support::committed_recordings();
  EXPECT_GE(recordings.size(), 6u) << "the recordings of data/recordings were not found";
  for (const fs::path& file : steer::test_support::benchmark_hub_recordings()) recordings.push_back(file);
  recordings.push_back(STEER_DATA_DIR "/h200/coulomb_h200.db.gz");
  for (const fs::path& recording : recordings) {
    const fs::path out = scratch / recording.filename().string();
    Outcome outcome = run_steer("report --db '" + recording.string() +
                                "' --searcher random --runs 5 --no-plots --out '" + out.string() + "'");
    ASSERT_EQ(outcome.exit_code, 0) << recording << ": " << outcome.output;
    EXPECT_GT(read_csv(out / "runtime_histogram.csv").size(), 1u) << recording;
    EXPECT_EQ(read_csv(out / "tests_to_target.csv").size(), 6u) << recording;
    EXPECT_GT(read_csv(out / "convergence.csv").size(), 1u) << recording;
  }
}

TEST(ReportCommand, SaysWhichCompileTimesTheSimulationCharged) {
  Scratch scratch;
  // The index.html of a report that simulates random search on transpose_h200 with `extra`.
  const auto page = [&](const std::string& name, const std::string& extra) {
    Outcome outcome = run_steer("report --db '" STEER_DATA_DIR "/h200/transpose_h200.db.gz' --searcher random --runs 3 "
                                "--no-plots" + extra + " --out '" + (scratch / name).string() + "'");
    EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
    return read_file(scratch / name / "index.html");
  };
  EXPECT_THAT(page("mean", " --compile-times mean"), HasSubstr("each test charged the recording's mean compile"));
  EXPECT_THAT(page("recorded", ""), Not(HasSubstr("the recording's mean compile")));
}

TEST(ReportCommand, DrawsThePerformanceScorePerSpaceAndOverSpaces) {
  Scratch scratch;
  const std::string pnpoly = STEER_DATA_DIR "/recordings/ktt/pnpoly_rtx2080ti.ktt.json.gz";
  Outcome one = run_steer("report --db '" + kCoulomb + "' --searcher random,genetic --runs 5 --score --no-plots --out '" +
                          (scratch / "one").string() + "'");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  auto score = read_csv(scratch / "one" / "score.csv");
  ASSERT_GT(score.size(), 1u);
  EXPECT_EQ(score[0], (std::vector<std::string>{"searcher", "axis", "x", "score"}));
  EXPECT_THAT(read_file(scratch / "one" / "index.html"), HasSubstr("Performance score P vs tests"));

  Outcome both = run_steer("simulate --data '" + kCoulomb + "," + pnpoly +
                               "' --searcher random,genetic --runs 5 --score --json --details",
                           false);
  ASSERT_EQ(both.exit_code, 0) << both.output;
  std::ofstream(scratch / "both.json") << both.output;
  Outcome report = run_steer("report --simulation '" + (scratch / "both.json").string() + "' --no-plots --out '" +
                             (scratch / "both").string() + "'");
  ASSERT_EQ(report.exit_code, 0) << report.output;
  auto aggregate = read_csv(scratch / "both" / "aggregate_score.csv");
  ASSERT_EQ(aggregate.size(), 1u + 2 * 2 * 100) << "2 searchers, 2 axes, 100 fractions of the budget";
  EXPECT_EQ(aggregate[1][2], "0");
  EXPECT_THAT(read_file(scratch / "both" / "index.html"), HasSubstr("Performance score over 2 spaces"));
}

TEST(ReportCommand, DrawsWhatTheCountersDecided) {
  // What `steer tune --explain-to` writes: two profiled tests, each followed by the tests its
  // analysis proposed (test 3 failed to compile).
  Scratch scratch;
  std::ofstream(scratch / "explained.json") << R"({"kernel": "gemm", "searcher": "profile-based", "tests": [
    {"test": 1, "config": "A=1", "status": "ok", "runtime_ms": 5.0, "profiled": true, "elapsed_s": 0.2},
    {"test": 2, "config": "A=2", "status": "ok", "runtime_ms": 3.0, "profiled": false, "elapsed_s": 0.3},
    {"test": 3, "config": "A=3", "status": "compile_error", "runtime_ms": null, "profiled": false, "elapsed_s": 0.4},
    {"test": 4, "config": "A=4", "status": "ok", "runtime_ms": 2.0, "profiled": true, "elapsed_s": 0.5},
    {"test": 5, "config": "A=5", "status": "ok", "runtime_ms": 1.5, "profiled": false, "elapsed_s": 0.6}],
   "explanations": [
    {"after_test": 1, "profiled": "A=1", "reused": false, "bottlenecks": [["shr_load", 0.8], ["dram_read", 0.3]],
     "changes": [["SHR_LT", -0.6]], "next": ["A=2", "A=3"]},
    {"after_test": 4, "profiled": "A=4", "reused": false, "bottlenecks": [["inst_f32", 0.7]],
     "changes": [["INST_F32", -0.2], ["SM_E", 0.1]], "next": ["A=5"]}]})";
  const fs::path out = scratch / "report";
  Outcome outcome =
      run_steer("report --explain '" + (scratch / "explained.json").string() + "' --out '" + out.string() + "'");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  expect_plot(out, "explain");
  const auto rows = read_csv(out / "explain_tests.csv");
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"test", "runtime_ms", "profiled", "proposed_by", "explanation", "label"}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"1", "5", "1", "", "1", "#1 shr_load → SHR_LT -0.60"}));
  EXPECT_EQ(rows[3], (std::vector<std::string>{"3", "", "0", "1", "", ""})) << "proposed by the first analysis";
  EXPECT_EQ(rows[5], (std::vector<std::string>{"5", "1.5", "0", "2", "", ""}));
  EXPECT_THAT(read_file(out / "index.html"), HasSubstr("INST_F32 -0.20, SM_E +0.10"));

  std::ofstream(scratch / "other.json") << R"({"best_time": 1})";
  Outcome other = run_steer("report --explain '" + (scratch / "other.json").string() + "' --out '" + out.string() + "'");
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_THAT(other.output, HasSubstr("is not what steer tune --explain-to writes"));
}

TEST(ReportCommand, ExplainsWhatIsMissing) {
  Scratch scratch;
  const std::string out = " --out '" + (scratch / "report").string() + "'";
  Outcome nothing = run_steer("report" + out);
  EXPECT_EQ(nothing.exit_code, 1);
  EXPECT_THAT(nothing.output, HasSubstr("give --db FILE"));

  Outcome missing = run_steer("report --db /nonexistent/recording.json" + out);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.output, HasSubstr("/nonexistent/recording.json"));

  // The summary that `steer simulate --json` prints without --details has no runs to plot.
  Outcome plain = run_steer("simulate --data '" + kCoulomb + "' --searcher random --runs 5 --json", false);
  ASSERT_EQ(plain.exit_code, 0);
  std::ofstream(scratch / "plain.json") << plain.output;
  Outcome without_details = run_steer("report --simulation '" + (scratch / "plain.json").string() + "'" + out);
  EXPECT_EQ(without_details.exit_code, 1);
  EXPECT_THAT(without_details.output, HasSubstr("--details"));

  std::ofstream(scratch / "broken.json") << "{\"best_time\": 1, \"searchers\": [";
  Outcome broken = run_steer("report --simulation '" + (scratch / "broken.json").string() + "'" + out);
  EXPECT_EQ(broken.exit_code, 1);
  EXPECT_THAT(broken.output, HasSubstr("broken.json' is not JSON"));

  Outcome no_python = run_steer("report --db '" + kCoulomb + "' --python /nonexistent/python3" + out);
  EXPECT_EQ(no_python.exit_code, 1);
  EXPECT_THAT(no_python.output, HasSubstr("/nonexistent/python3: not found"));
  EXPECT_THAT(no_python.output, HasSubstr("scripts/setup"));
  EXPECT_THAT(no_python.output, HasSubstr("--no-plots"));

  // An interpreter that cannot import matplotlib (here: one that fails whatever it is asked).
  Outcome no_matplotlib = run_steer("report --db '" + kCoulomb + "' --python /bin/false" + out);
  EXPECT_EQ(no_matplotlib.exit_code, 1);
  EXPECT_THAT(no_matplotlib.output, HasSubstr("/bin/false: cannot import matplotlib"));

  Outcome both = run_steer("report --db '" + kCoulomb + "' --searcher random --simulation x.json" + out);
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_THAT(both.output, HasSubstr("choose one"));
}

}  // namespace
