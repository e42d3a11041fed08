// Export formats: Steer JSON round trips, T4 is valid and imports back to the same
// times, CSV parses back; and the steer import / export commands.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "steer/recording.hpp"
#include "steer/store.hpp"
#include "store/store_test_support.hpp"

namespace steer {
namespace {

using testing::expect_same_result;
using testing::full_result;
using testing::ScratchDir;

const std::filesystem::path kData = std::filesystem::path(STEER_DATA_DIR) / "recordings";
const TuningKey kKey{"conv", "f00d", "NVIDIA A100-PCIE-40GB", "cuda", "4096x4096"};

void write(const std::filesystem::path& file, const std::string& text) { std::ofstream(file, std::ios::binary) << text; }

std::vector<Result> varied_results() {
  std::vector<Result> results{full_result(1), full_result(2)};
  results[1].energy.reset();
  results[1].counters.clear();
  results[1].status = Status::Ok;
  Result failed;
  failed.configuration = {{"TILE", Value(3)}, {"RATIO", Value(0.25)}, {"SCALE", Value(1.0)},
                          {"USE_SHMEM", Value(false)}, {"LAYOUT", Value("col")}};
  failed.status = Status::CompileError;
  failed.message = "error: identifier \"x\" is undefined";
  failed.compile_ms = 120.5;
  results.push_back(failed);
  return results;
}

TEST(ExportSteerJson, RoundTripsEveryField) {
  ScratchDir dir;
  std::vector<Result> results = varied_results();
  std::ostringstream out;
  export_steer_json(out, kKey, results);
  write(dir / "results.json", out.str());

  ImportedRecording back = import_recording(dir / "results.json");
  EXPECT_EQ(back.format, RecordingFormat::Steer);
  EXPECT_EQ(back.kernel, kKey.spec_name);
  EXPECT_EQ(back.spec_hash, kKey.spec_hash);
  EXPECT_EQ(back.device, kKey.device);
  EXPECT_EQ(back.backend, kKey.backend);
  EXPECT_EQ(back.problem_size, kKey.problem_size);
  ASSERT_EQ(back.results.size(), results.size());
  for (std::size_t i = 0; i < results.size(); ++i) expect_same_result(results[i], back.results[i]);
}

TEST(ExportSteerJson, StoreToFileToStoreIsLossless) {
  ScratchDir dir;
  ImportedRecording ktt = import_recording(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  Store store = Store::open(dir / "a.db");
  std::int64_t tuning = store.tuning(kKey);
  ASSERT_EQ(store.append(tuning, ktt.results), 210u);
  std::ostringstream out;
  export_steer_json(out, store.tuning_key(tuning), store.results(tuning));
  write(dir / "coulomb.json", out.str());
  ImportedRecording back = import_recording(dir / "coulomb.json");
  ASSERT_EQ(back.results.size(), 210u);
  for (std::size_t i = 0; i < 210; ++i) expect_same_result(ktt.results[i], back.results[i]);
}

TEST(ExportT4, IsValidT4) {
  std::ostringstream out;
  const std::vector<Result> results = varied_results();
  export_t4(out, kKey, results);
  nlohmann::json t4 = nlohmann::json::parse(out.str());
  EXPECT_EQ(t4["schema_version"], "1.0.0");
  EXPECT_EQ(t4["metadata"]["timeunit"], "milliseconds");
  ASSERT_EQ(t4["results"].size(), 3u);
  const std::set<std::string> invalidities{"timeout", "compile", "runtime", "correctness", "constraints", "correct"};
  for (std::size_t i = 0; i < t4["results"].size(); ++i) {
    const auto& result = t4["results"][i];
    for (const char* required : {"configuration", "times", "invalidity", "correctness"}) {
      EXPECT_TRUE(result.contains(required)) << required;
    }
    EXPECT_TRUE(result["configuration"].is_object());
    EXPECT_TRUE(invalidities.contains(result["invalidity"].get<std::string>()));
    EXPECT_TRUE(result["correctness"].is_number());
    for (const char* time : {"compilation", "framework", "search_algorithm", "validation"}) {
      EXPECT_TRUE(result["times"][time].is_number()) << time;
    }
    EXPECT_TRUE(result["times"]["runtimes"].is_array());
    for (const auto& measurement : result["measurements"]) {
      if (measurement["name"] == "time") {
        EXPECT_EQ(measurement["value"].get<double>(), results[i].time.median_ms)
            << "the statistic Steer ranks by";
      }
      EXPECT_TRUE(measurement["name"].is_string());
      EXPECT_TRUE(measurement["value"].is_number());
      EXPECT_TRUE(measurement["unit"].is_string());
    }
  }
  EXPECT_EQ(t4["results"][0]["invalidity"], "correctness");  // InvalidOutput
  EXPECT_EQ(t4["results"][1]["invalidity"], "correct");
  EXPECT_EQ(t4["results"][1]["correctness"], 1);
  EXPECT_EQ(t4["results"][2]["invalidity"], "compile");
  EXPECT_EQ(t4["results"][0]["configuration"]["LAYOUT"], "row, \"major\"");
}

TEST(ExportT4, ImportsBackWithTheSameTimes) {
  ScratchDir dir;
  ImportedRecording original = import_recording(kData / "kerneltuner/convolution_milo_a100.kt.json.gz");
  std::ostringstream out;
  export_t4(out, kKey, original.results);
  write(dir / "conv.t4.json", out.str());

  ImportedRecording back = import_recording(dir / "conv.t4.json");
  EXPECT_EQ(back.format, RecordingFormat::T4);
  EXPECT_EQ(back.device, kKey.device);
  EXPECT_EQ(back.kernel, kKey.spec_name);
  EXPECT_EQ(back.problem_size, kKey.problem_size);
  ASSERT_EQ(back.results.size(), original.results.size());
  for (std::size_t i = 0; i < back.results.size(); ++i) {
    const Result& a = original.results[i];
    const Result& b = back.results[i];
    ASSERT_EQ(a.key(), b.key());
    EXPECT_EQ(a.status, b.status) << a.key();
    EXPECT_EQ(a.time.samples_ms, b.time.samples_ms) << a.key();
    // "time" carries the median, the statistic Steer ranks a store's tests by; read back, it
    // is the recorded objective.
    EXPECT_EQ(b.time.mean_ms, a.time.median_ms) << a.key();
    EXPECT_EQ(a.time.median_ms, b.time.median_ms) << a.key();
    EXPECT_EQ(a.time.stddev_ms, b.time.stddev_ms) << a.key();
    EXPECT_EQ(a.compile_ms, b.compile_ms) << a.key();
    EXPECT_EQ(a.validation_ms, b.validation_ms) << a.key();
    EXPECT_EQ(a.overhead_ms, b.overhead_ms) << a.key();
    EXPECT_EQ(a.counters, b.counters) << a.key();  // GFLOP/s went out as a measurement
    EXPECT_EQ(a.timestamp, b.timestamp) << a.key();
  }
}

// What Kernel Tuner's process_cache and read_cache need (kernel_tuner/util.py): the header
// fields, tune_params_keys in configuration order with their value lists, and a cache of
// entries keyed by ",".join(str(value)), each with its parameters, time and timings.
TEST(ExportKernelTuner, IsAKernelTunerCacheFile) {
  std::vector<Result> results = varied_results();
  results[1].status = Status::Ok;
  std::ostringstream out;
  export_kernel_tuner(out, kKey, results);
  const std::string text = out.str();
  // read_cache treats a file that does not end so as cut short, and closes it again.
  EXPECT_EQ(text.substr(text.size() - 4), "}\n}\n");
  nlohmann::ordered_json cache = nlohmann::ordered_json::parse(text);

  EXPECT_EQ(cache["device_name"], kKey.device);
  EXPECT_EQ(cache["kernel_name"], kKey.spec_name);
  EXPECT_EQ(cache["problem_size"], nlohmann::ordered_json::parse("[4096, 4096]"));
  EXPECT_EQ(cache["objective"], "time");
  EXPECT_EQ(cache["tune_params_keys"],
            nlohmann::ordered_json::parse(R"(["TILE", "RATIO", "SCALE", "USE_SHMEM", "LAYOUT"])"));
  EXPECT_EQ(cache["tune_params"]["TILE"], nlohmann::ordered_json::parse("[1, 2, 3]"));
  EXPECT_EQ(cache["tune_params"]["RATIO"], nlohmann::ordered_json::parse("[0.25, 0.5]"));
  EXPECT_EQ(cache["tune_params"]["USE_SHMEM"], nlohmann::ordered_json::parse("[false, true]"));

  ASSERT_EQ(cache["cache"].size(), 3u);
  std::vector<std::string> keys;
  for (const auto& [key, entry] : cache["cache"].items()) keys.push_back(key);
  // Python's str(): 2.0 keeps its point, booleans are True/False, strings unquoted.
  EXPECT_EQ(keys, (std::vector<std::string>{"1,0.5,2.0,True,row, \"major\"", "2,0.5,2.0,True,row, \"major\"",
                                            "3,0.25,1.0,False,col"}));

  const auto& ok = cache["cache"][keys[1]];
  EXPECT_EQ(ok["TILE"], 2);
  EXPECT_TRUE(ok["SCALE"].is_number_float());
  EXPECT_EQ(ok["USE_SHMEM"], true);
  EXPECT_EQ(ok["time"].get<double>(), results[1].time.median_ms);  // what Steer ranks by
  EXPECT_EQ(ok["times"].get<std::vector<double>>(), results[1].time.samples_ms);
  EXPECT_EQ(ok["compile_time"].get<double>(), results[1].compile_ms);
  EXPECT_EQ(ok["verification_time"].get<double>(), results[1].validation_ms);
  EXPECT_EQ(ok["framework_time"].get<double>(), results[1].overhead_ms);
  EXPECT_EQ(ok["benchmark_time"].get<double>(), 1.25 + 1.0 / 3.0 + 2.5e-7 + 1e30);
  EXPECT_EQ(ok["timestamp"], results[1].timestamp);

  const auto& wrong_output = cache["cache"][keys[0]];
  EXPECT_EQ(wrong_output["time"], "RuntimeFailedConfig");
  EXPECT_FALSE(wrong_output.contains("times"));
  EXPECT_EQ(wrong_output["threads"].get<double>(), 16777216.0);  // counters as observers write them
  EXPECT_EQ(wrong_output["energy"].get<double>(), 0.0123);
  EXPECT_EQ(wrong_output["power"].get<double>(), 310.5);
  EXPECT_EQ(cache["cache"][keys[2]]["time"], "CompilationFailedConfig");
  EXPECT_EQ(cache["cache"][keys[2]]["compile_time"].get<double>(), 120.5);
}

TEST(ExportKernelTuner, ProblemSizesAndSkippedTests) {
  Result skipped;
  skipped.configuration = {{"X", Value(1)}};
  skipped.status = Status::Skipped;
  Result timeout = skipped;
  timeout.configuration = {{"X", Value(2)}};
  timeout.status = Status::Timeout;
  std::vector<Result> results{skipped, timeout, skipped};  // the first test of a configuration wins
  for (const auto& [size, expected] : std::vector<std::pair<std::string, std::string>>{
           {"4096", "4096"}, {"4096x16", "[4096, 16]"}, {"N=4096", "\"N=4096\""}, {"h200", "\"h200\""}}) {
    std::ostringstream out;
    export_kernel_tuner(out, TuningKey{"k", "", "dev", "cuda", size}, results);
    nlohmann::json cache = nlohmann::json::parse(out.str());
    EXPECT_EQ(cache["problem_size"], nlohmann::json::parse(expected)) << size;
    ASSERT_EQ(cache["cache"].size(), 2u);
    EXPECT_EQ(cache["cache"]["1"]["time"], "InvalidConfig");
    EXPECT_EQ(cache["cache"]["2"]["time"], "RuntimeFailedConfig");
  }
}

TEST(ExportKernelTuner, ImportsBackWithTheSameTimes) {
  ScratchDir dir;
  ImportedRecording original = import_recording(kData / "kerneltuner/convolution_milo_a100.kt.json.gz");
  std::ostringstream out;
  export_kernel_tuner(out, kKey, original.results);
  write(dir / "conv.json", out.str());

  ImportedRecording back = import_recording(dir / "conv.json");
  EXPECT_EQ(back.format, RecordingFormat::KernelTunerCache);
  EXPECT_EQ(back.device, kKey.device);
  EXPECT_EQ(back.kernel, kKey.spec_name);
  EXPECT_EQ(back.problem_size, kKey.problem_size);
  ASSERT_EQ(back.parameters.size(), original.parameters.size());
  for (std::size_t p = 0; p < back.parameters.size(); ++p) {
    EXPECT_EQ(back.parameters[p].name, original.parameters[p].name);
  }
  ASSERT_EQ(back.results.size(), original.results.size());
  for (std::size_t i = 0; i < back.results.size(); ++i) {
    const Result& a = original.results[i];
    const Result& b = back.results[i];
    ASSERT_EQ(a.key(), b.key());
    EXPECT_EQ(a.status, b.status) << a.key();
    EXPECT_EQ(a.message, b.message) << a.key();
    EXPECT_EQ(a.time.samples_ms, b.time.samples_ms) << a.key();
    // "time" carries the median, the statistic Steer ranks a store's tests by; read back, it
    // is the recorded objective.
    EXPECT_EQ(b.time.mean_ms, a.time.median_ms) << a.key();
    EXPECT_EQ(a.time.median_ms, b.time.median_ms) << a.key();
    EXPECT_EQ(a.compile_ms, b.compile_ms) << a.key();
    EXPECT_EQ(a.validation_ms, b.validation_ms) << a.key();
    EXPECT_EQ(a.overhead_ms, b.overhead_ms) << a.key();
    EXPECT_EQ(a.counters, b.counters) << a.key();  // GFLOP/s
    EXPECT_EQ(a.timestamp, b.timestamp) << a.key();
  }
}

// Splits CSV text (RFC 4180: quoted fields may hold commas, quotes and line breaks).
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      rows.back().push_back(std::move(field));
      field.clear();
      rows.emplace_back();
    } else {
      field += c;
    }
  }
  rows.pop_back();  // after the last line break
  return rows;
}

TEST(ExportCsv, OneRowPerTestThatParsesBack) {
  std::vector<Result> results = varied_results();
  std::ostringstream out;
  export_csv(out, results);
  auto rows = parse_csv(out.str());
  ASSERT_EQ(rows.size(), 4u);
  const std::vector<std::string>& header = rows[0];
  auto column = [&](const std::string& name) {
    auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << name;
    return static_cast<std::size_t>(it - header.begin());
  };
  EXPECT_EQ(std::vector<std::string>(header.begin(), header.begin() + 6),
            (std::vector<std::string>{"TILE", "RATIO", "SCALE", "USE_SHMEM", "LAYOUT", "status"}));
  for (const auto& row : rows) EXPECT_EQ(row.size(), header.size());

  const auto& first = rows[1];
  EXPECT_EQ(first[column("LAYOUT")], "row, \"major\"");
  EXPECT_EQ(first[column("SCALE")], "2.0");
  EXPECT_EQ(first[column("status")], "invalid_output");
  EXPECT_EQ(std::stod(first[column("median_ms")]), results[0].time.median_ms);
  EXPECT_EQ(std::stod(first[column("mean_ms")]), results[0].time.mean_ms);
  EXPECT_EQ(first[column("repetitions")], "4");
  EXPECT_EQ(first[column("message")], results[0].message);
  EXPECT_EQ(std::stod(first[column("threads")]), 16777216.0);
  EXPECT_EQ(std::stod(first[column("energy_joules_per_launch")]), 0.0123);
  EXPECT_EQ(std::stod(first[column("sm_clock_mhz")]), 1755.0);
  EXPECT_EQ(std::stod(first[column("memory_clock_mhz")]), 3201.0);
  EXPECT_EQ(std::stod(first[column("power_watts")]), 698.5);
  EXPECT_EQ(std::stod(first[column("power_limit_watts")]), 700.0);
  EXPECT_EQ(std::stod(first[column("temperature_c")]), 71.0);
  EXPECT_EQ(first[column("throttle")], "power cap");
  EXPECT_EQ(first[column("other_load")], "") << "not read";

  const auto& failed = rows[3];
  EXPECT_EQ(failed[column("status")], "compile_error");
  EXPECT_EQ(failed[column("median_ms")], "");  // never timed
  EXPECT_EQ(failed[column("threads")], "");     // no counters
  EXPECT_EQ(failed[column("energy_joules_per_launch")], "");
  EXPECT_EQ(failed[column("sm_clock_mhz")], "");
  EXPECT_EQ(failed[column("throttle")], "");
  EXPECT_EQ(failed[column("message")], results[2].message);
  EXPECT_EQ(std::stod(failed[column("compile_ms")]), 120.5);
}

// Runs the steer binary; returns its exit status and what it printed (stdout and stderr).
std::pair<int, std::string> run_steer(const std::string& arguments) {
  std::string command = std::string(STEER_BINARY) + " " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string output;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

TEST(Cli, ExportWritesThroughWhatIsNotARegularFileAndNeverFollowsAPlantedName) {
  ScratchDir dir;
  const std::string db = (dir / "results.db").string();
  auto [status, output] = run_steer("import " + (kData / "ktt/coulomb_rtx2080.ktt.json.gz").string() + " --db " + db);
  ASSERT_EQ(status, 0) << output;
  // A symbolic link is written through, not replaced by a file.
  const std::filesystem::path target = dir / "target.csv", link = dir / "link.csv";
  std::ofstream(target) << "old\n";
  std::filesystem::create_symlink(target, link);
  std::tie(status, output) = run_steer("export --db " + db + " --format csv --out " + link.string());
  ASSERT_EQ(status, 0) << output;
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_GT(std::filesystem::file_size(target), 1000u);
  // A device is written to, never turned into a file; /dev/full says why it failed.
  std::tie(status, output) = run_steer("export --db " + db + " --format csv --out /dev/null");
  EXPECT_EQ(status, 0) << output;
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/null"));
  std::tie(status, output) = run_steer("export --db " + db + " --format csv --out /dev/full");
  EXPECT_EQ(status, 1);
  EXPECT_NE(output.find("No space left on device"), std::string::npos) << output;
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/full"));
  // The old fixed temporary name, planted as a link to a file of the victim's, is left alone.
  const std::filesystem::path victim = dir / "victim.txt", out = dir / "out.csv";
  std::ofstream(victim) << "precious\n";
  std::filesystem::create_symlink(victim, dir / "out.csv.partial");
  std::tie(status, output) = run_steer("export --db " + db + " --format csv --out " + out.string());
  ASSERT_EQ(status, 0) << output;
  std::ifstream in(victim);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "precious");
  EXPECT_TRUE(std::filesystem::is_regular_file(out));
}

TEST(Cli, ImportThenExport) {
  ScratchDir dir;
  const std::string db = (dir / "results.db").string();
  const std::string cache = (kData / "kerneltuner/convolution_milo_a100.kt.json.gz").string();
  auto [status, output] = run_steer("import " + cache + " --db " + db);
  ASSERT_EQ(status, 0) << output;
  EXPECT_NE(output.find("4362 configurations: 4362 imported, 0 already stored"), std::string::npos) << output;

  std::tie(status, output) = run_steer("import " + cache + " --db " + db);
  ASSERT_EQ(status, 0) << output;
  EXPECT_NE(output.find("4362 configurations: 0 imported, 4362 already stored"), std::string::npos) << output;

  const std::string csv = (dir / "conv.csv").string();
  std::tie(status, output) = run_steer("export --db " + db + " --format csv --out " + csv);
  ASSERT_EQ(status, 0) << output;
  std::ifstream in(csv);
  std::string line;
  std::size_t lines = 0;
  while (std::getline(in, line)) ++lines;
  EXPECT_EQ(lines, 4363u);  // header + one row per test

  // A second tuning: export must now be told which.
  std::tie(status, output) = run_steer("import " + (kData / "ktt/coulomb_rtx2080.ktt.json.gz").string() + " --db " + db);
  ASSERT_EQ(status, 0) << output;
  std::tie(status, output) = run_steer("export --db " + db + " --format json");
  EXPECT_EQ(status, 1);
  EXPECT_NE(output.find("--tuning"), std::string::npos) << output;
  EXPECT_NE(output.find("directCoulombSum_kernel"), std::string::npos) << output;
  EXPECT_NE(output.find("convolution_kernel"), std::string::npos) << output;

  std::tie(status, output) = run_steer("export --db " + db + " --tuning 2 --format t4");
  ASSERT_EQ(status, 0);
  EXPECT_EQ(nlohmann::json::parse(output)["results"].size(), 210u);

  // Kernel Tuner's cache file, imported into a fresh store: the same tests.
  const std::string kt = (dir / "coulomb.json").string();
  std::tie(status, output) = run_steer("export --db " + db + " --tuning 2 --format kerneltuner --out " + kt);
  ASSERT_EQ(status, 0) << output;
  std::tie(status, output) = run_steer("import " + kt + " --db " + (dir / "back.db").string());
  ASSERT_EQ(status, 0) << output;
  EXPECT_NE(output.find("210 configurations: 210 imported"), std::string::npos) << output;

  std::tie(status, output) = run_steer("export --db " + (dir / "none.db").string() + " --format csv");
  EXPECT_EQ(status, 1);
  EXPECT_NE(output.find("none.db"), std::string::npos) << output;
  EXPECT_FALSE(std::filesystem::exists(dir / "none.db"));
}

}  // namespace
// Kernel Tuner compares a cache's problem size with the one tune_kernel is given: the export
// writes numbers when told them (--problem-size) or where to find them (--spec), and warns
// when all it has is a size's name.
TEST(Cli, KernelTunerExportWritesTheProblemSizeKernelTunerIsGiven) {
  ScratchDir dir;
  const std::string db = (dir / "small.db").string();
  {
    Store store = Store::open(db);
    Result result;
    result.configuration = {{"X", Value(1)}};
    result.status = Status::Ok;
    result.time = TimingStats::from_samples({1.0, 1.2});
    store.append(store.tuning(TuningKey{"transpose", "", "GPU", "opencl", "small"}), result);
  }
  const std::string spec = std::string(STEER_SOURCE_DIR) + "/kernels/transpose/spec.json";
  const auto problem_size = [&](const std::string& options) {
    auto [status, output] = run_steer("export --db " + db + " --format kerneltuner " + options + " 2>/dev/null");
    EXPECT_EQ(status, 0) << output;
    return nlohmann::json::parse(output)["problem_size"];
  };
  EXPECT_EQ(problem_size("--spec " + spec), nlohmann::json::parse("[512, 512]")) << "the spec's size 'small'";
  EXPECT_EQ(problem_size("--problem-size 512,512"), nlohmann::json::parse("[512, 512]"));
  EXPECT_EQ(problem_size("--problem-size 4096"), nlohmann::json::parse("4096"));

  auto [status, output] = run_steer("export --db " + db + " --format kerneltuner --out " + (dir / "kt.json").string());
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("warning: the problem size 'small' is written as text"), std::string::npos) << output;
  std::tie(status, output) = run_steer("export --db " + db + " --format kerneltuner --problem-size 4096,x");
  EXPECT_NE(status, 0);
  EXPECT_NE(output.find("--problem-size '4096,x'"), std::string::npos) << output;
  std::tie(status, output) = run_steer("export --db " + db + " --format csv --problem-size 4096");
  EXPECT_NE(status, 0);
  EXPECT_NE(output.find("apply to --format kerneltuner"), std::string::npos) << output;
}

}  // namespace steer
