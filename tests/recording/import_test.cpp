// Importers against the real recordings in data/recordings (see data/recordings/PROVENANCE.md).
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "steer/counters.hpp"
#include "steer/recording.hpp"
#include "steer/store.hpp"
#include "store/store_test_support.hpp"

namespace steer {
namespace {

using testing::ScratchDir;

const std::filesystem::path kData = std::filesystem::path(STEER_DATA_DIR) / "recordings";

// What the KTT importer adds besides the profiling counters.
const std::set<std::string> kKttExtras{"threads",           "RegistersCount",     "LocalMemorySize",
                                       "PrivateMemorySize", "ConstantMemorySize", "MaxWorkGroupSize"};

std::size_t profiling_counters(const Result& result) {
  return static_cast<std::size_t>(std::count_if(result.counters.begin(), result.counters.end(),
                                                [](const auto& counter) { return !kKttExtras.contains(counter.first); }));
}

std::size_t count_status(const ImportedRecording& recording, Status status) {
  return static_cast<std::size_t>(std::count_if(recording.results.begin(), recording.results.end(),
                                                [&](const Result& r) { return r.status == status; }));
}

std::vector<Value> values_of(const ImportedRecording& recording, const std::string& name) {
  for (const RecordedParameter& parameter : recording.parameters) {
    if (parameter.name == name) return parameter.values;
  }
  return {};
}

std::vector<Value> ints(std::initializer_list<int> list) { return std::vector<Value>(list.begin(), list.end()); }

std::string value_of(const Result& result, const std::string& name) {
  for (const auto& [parameter, value] : result.configuration) {
    if (parameter == name) return value.to_string();
  }
  return "(absent)";
}

std::string import_error(const std::filesystem::path& file) {
  try {
    import_recording(file);
  } catch (const StoreError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ImportKtt, CoulombRtx2080) {
  ImportedRecording rec = import_recording(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  EXPECT_EQ(rec.format, RecordingFormat::Ktt);
  EXPECT_EQ(rec.device, "NVIDIA GeForce RTX 2080 Ti");
  EXPECT_EQ(rec.backend, "cuda");
  EXPECT_EQ(rec.kernel, "directCoulombSum_kernel");
  ASSERT_EQ(rec.results.size(), 210u);
  EXPECT_EQ(count_status(rec, Status::Ok), 210u);
  for (const Result& r : rec.results) {
    EXPECT_EQ(profiling_counters(r), 33u) << r.key();
    for (const std::string& extra : kKttExtras) EXPECT_TRUE(r.counters.contains(extra)) << extra;
  }

  const Result& first = rec.results.front();
  EXPECT_EQ(first.key(),
            "WORK_GROUP_SIZE_X=16,WORK_GROUP_SIZE_Y=4,INNER_UNROLL_FACTOR=0,Z_ITERATIONS=1,USE_CONSTANT_MEMORY=0,"
            "USE_SOA=0,VECTOR_SIZE=1,WORK_GROUP_SIZE_Z=1");
  EXPECT_TRUE(first.configuration[0].second.is_int());
  EXPECT_DOUBLE_EQ(first.time.mean_ms, 3.037408);  // Duration 3037.408 us
  EXPECT_EQ(first.time.samples_ms.size(), 1u);
  EXPECT_EQ(first.time.repetitions, 1);
  EXPECT_EQ(first.counters.at("dram__sectors_read.sum"), 2100194.0);
  EXPECT_EQ(first.counters.at("dram__throughput.avg.pct_of_peak_sustained_elapsed"), 6.515303129123792);
  EXPECT_EQ(first.counters.at("threads"), 256.0 * 256 * 256);  // grid 16x64x256 blocks of 16x4x1
  EXPECT_EQ(first.counters.at("RegistersCount"), 66.0);
  EXPECT_DOUBLE_EQ(first.validation_ms, 0.010363);
  // TotalOverhead 1112883.958 us less ValidationOverhead 10.363 and the profiling Overhead
  // 28046.229 of its one kernel.
  EXPECT_DOUBLE_EQ(first.profiling_ms, 28.046229);
  EXPECT_NEAR(first.overhead_ms, 1112.883958 - 0.010363 - 28.046229, 1e-9);
  EXPECT_EQ(first.compile_ms, 0.0);  // KTT 2.1 records no compile time
  EXPECT_EQ(first.timestamp, "2024-08-12T11:26:23Z");
  EXPECT_EQ(first.device, rec.device);
  EXPECT_DOUBLE_EQ(rec.results.back().time.mean_ms, 2.279584);

  ASSERT_EQ(rec.parameters.size(), 8u);
  EXPECT_EQ(rec.parameters[0].name, "WORK_GROUP_SIZE_X");
  EXPECT_EQ(values_of(rec, "INNER_UNROLL_FACTOR"), ints({0, 1, 2, 4, 8, 16}));
  EXPECT_EQ(values_of(rec, "WORK_GROUP_SIZE_Y"), ints({2, 4, 8}));
}

TEST(ImportKtt, PnpolyRtx2080Ti) {
  ImportedRecording rec = import_recording(kData / "ktt/pnpoly_rtx2080ti.ktt.json.gz");
  ASSERT_EQ(rec.results.size(), 4092u);
  EXPECT_EQ(count_status(rec, Status::Ok), 3815u);
  EXPECT_EQ(count_status(rec, Status::LaunchError), 277u);
  for (const Result& r : rec.results) {
    if (r.ok()) {
      EXPECT_EQ(profiling_counters(r), 33u) << r.key();
    } else {
      EXPECT_TRUE(r.counters.empty());
      EXPECT_TRUE(r.time.samples_ms.empty());
      EXPECT_EQ(r.message, "ComputationFailed");
    }
  }
  EXPECT_EQ(rec.results[307].status, Status::LaunchError);  // the first failure in the file
  EXPECT_EQ(value_of(rec.results[307], "BLOCK_SIZE_X"), "928");

  auto best = std::min_element(rec.results.begin(), rec.results.end(), [](const Result& a, const Result& b) {
    return (a.ok() ? a.time.mean_ms : 1e300) < (b.ok() ? b.time.mean_ms : 1e300);
  });
  EXPECT_DOUBLE_EQ(best->time.mean_ms, 8.023776);
  EXPECT_EQ(best->key(), "VERTICES=600,BLOCK_SIZE_X=128,TILE_SIZE=20,BETWEEN_METHOD=0,USE_METHOD=2");

  // The space of benchmark_hub's kernels/pnpoly.json.
  std::vector<Value> block_sizes;
  for (int i = 1; i <= 31; ++i) block_sizes.emplace_back(32 * i);
  EXPECT_EQ(values_of(rec, "BLOCK_SIZE_X"), block_sizes);
  EXPECT_EQ(values_of(rec, "TILE_SIZE"), ints({1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20}));
  EXPECT_EQ(values_of(rec, "BETWEEN_METHOD"), ints({0, 1, 2, 3}));
  EXPECT_EQ(values_of(rec, "USE_METHOD"), ints({0, 1, 2}));
  EXPECT_EQ(rec.results.front().counters.at("threads"), 20'000'000.0);  // 625000 blocks of 32
}

TEST(ImportKtt, CoulombGtx1070PreVoltaCounters) {
  ImportedRecording rec = import_recording(kData / "ktt/coulomb_gtx1070.ktt.json.gz");
  EXPECT_EQ(rec.device, "GeForce GTX 1070");
  ASSERT_EQ(rec.results.size(), 475u);
  std::size_t with_counters = 0;
  for (const Result& r : rec.results) {
    std::size_t n = profiling_counters(r);
    EXPECT_TRUE(n == 0 || n == 38) << n;
    with_counters += n > 0;
  }
  EXPECT_EQ(with_counters, 67u);
  const Result& first_profiled = rec.results[6];
  EXPECT_EQ(first_profiled.counters.at("dram_utilization"), 2.0);
  EXPECT_EQ(first_profiled.counters.at("dram_read_transactions"), 2389929.0);
  EXPECT_EQ(first_profiled.counters.at("achieved_occupancy"), 0.6097747789232306);
  EXPECT_EQ(rec.results.front().timestamp, "2022-06-01T13:55:07Z");  // "13:55:7 UTC" in the file
}

TEST(ImportKtt, RepeatedTestsMergeWithoutLosingCounters) {
  // The profile-based searcher's recording tests 210 configurations 475 times; every
  // profiled run repeats a configuration timed earlier.
  ImportedRecording rec = import_recording(kData / "ktt/coulomb_gtx1070.ktt.json.gz");
  std::vector<Result> merged = merge_repeated_tests(rec.results);
  ASSERT_EQ(merged.size(), 210u);
  std::size_t with_counters = 0;
  for (const Result& r : merged) with_counters += profiling_counters(r) == 38;
  EXPECT_EQ(with_counters, 67u);
  // Results[0] and [1] are one configuration: two samples, statistics over both.
  EXPECT_EQ(merged[0].key(), rec.results[1].key());
  EXPECT_EQ(merged[0].time.repetitions, 2);
  EXPECT_DOUBLE_EQ(merged[0].time.samples_ms[0], 109.44);
  EXPECT_DOUBLE_EQ(merged[0].time.samples_ms[1], 107.776032);
  EXPECT_DOUBLE_EQ(merged[0].time.min_ms, 107.776032);
  // Results[6] profiled the configuration of Results[3]: merged[2] has its counters.
  EXPECT_EQ(merged[2].key(), rec.results[3].key());
  EXPECT_EQ(merged[2].counters.at("dram_utilization"), 2.0);
  EXPECT_EQ(merged[2].time.repetitions, 2);

  // Tested once: unchanged.
  ImportedRecording once = import_recording(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  std::vector<Result> same = merge_repeated_tests(once.results);
  ASSERT_EQ(same.size(), once.results.size());
  for (std::size_t i = 0; i < same.size(); ++i) testing::expect_same_result(once.results[i], same[i]);
}

TEST(ImportKtt, MergeKeepsTheValidRunOfAConfiguration) {
  Result failed;
  failed.configuration = {{"A", Value(1)}};
  failed.status = Status::LaunchError;
  Result valid = failed;
  valid.status = Status::Ok;
  valid.time = TimingStats::from_samples({2.0});
  std::vector<Result> runs{failed, valid, failed};
  std::vector<Result> merged = merge_repeated_tests(runs);
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].status, Status::Ok);
  EXPECT_EQ(merged[0].time.samples_ms, std::vector<double>{2.0});
}

TEST(ImportKernelTuner, ConvolutionA100Cache) {
  ImportedRecording rec = import_recording(kData / "kerneltuner/convolution_milo_a100.kt.json.gz");
  EXPECT_EQ(rec.format, RecordingFormat::KernelTunerCache);
  EXPECT_EQ(rec.device, "NVIDIA A100-PCIE-40GB");
  EXPECT_EQ(rec.kernel, "convolution_kernel");
  EXPECT_EQ(rec.problem_size, "4096x4096");
  ASSERT_EQ(rec.results.size(), 4362u);
  EXPECT_EQ(count_status(rec, Status::Ok), 4201u);
  EXPECT_EQ(count_status(rec, Status::LaunchError), 155u);
  EXPECT_EQ(count_status(rec, Status::CompileError), 6u);

  ASSERT_EQ(rec.parameters.size(), 10u);
  EXPECT_EQ(rec.parameters[0].name, "block_size_x");
  EXPECT_EQ(rec.parameters[0].values.size(), 16u);
  EXPECT_EQ(values_of(rec, "block_size_y"), ints({1, 2, 4, 8, 16}));
  EXPECT_EQ(values_of(rec, "use_cmem"), ints({1}));

  const Result& first = rec.results.front();
  EXPECT_EQ(first.key(),
            "block_size_x=16,block_size_y=1,tile_size_x=1,tile_size_y=1,read_only=0,use_padding=0,use_shmem=0,"
            "use_cmem=1,filter_height=15,filter_width=15");
  EXPECT_EQ(first.status, Status::Ok);
  EXPECT_EQ(first.time.mean_ms, 3.8753279224038124);  // "time", exactly as recorded
  ASSERT_EQ(first.time.samples_ms.size(), 32u);
  EXPECT_EQ(first.time.repetitions, 32);
  EXPECT_EQ(first.time.samples_ms[0], 3.976191997528076);
  EXPECT_EQ(first.time.median_ms, 3.87174391746521);
  EXPECT_EQ(first.time.min_ms, 3.8696959018707275);
  EXPECT_EQ(first.time.max_ms, 3.976191997528076);
  EXPECT_NEAR(first.time.stddev_ms, 0.01847417436942412, 1e-12);
  EXPECT_EQ(first.compile_ms, 918.5990339610726);
  EXPECT_EQ(first.overhead_ms, 105.24242906831205);
  EXPECT_EQ(first.counters, (std::map<std::string, double>{{"GFLOP/s", 1948.1569950129526}}));
  EXPECT_EQ(first.timestamp, "2023-12-22T09:54:05.502007Z");
  EXPECT_EQ(first.problem_size, "4096x4096");

  const Result& runtime_failure = rec.results[766];
  EXPECT_EQ(runtime_failure.key().substr(0, 55), "block_size_x=32,block_size_y=16,tile_size_x=2,tile_size");
  EXPECT_EQ(runtime_failure.status, Status::LaunchError);
  EXPECT_EQ(runtime_failure.message, "RuntimeFailedConfig");
  EXPECT_EQ(runtime_failure.compile_ms, 3055.960983969271);
  EXPECT_TRUE(runtime_failure.time.samples_ms.empty());
  EXPECT_EQ(rec.results[1932].status, Status::CompileError);

  auto best = std::min_element(rec.results.begin(), rec.results.end(), [](const Result& a, const Result& b) {
    return (a.ok() ? a.time.mean_ms : 1e300) < (b.ok() ? b.time.mean_ms : 1e300);
  });
  EXPECT_EQ(best->time.mean_ms, 0.5536000076681376);
  EXPECT_EQ(best->counters.at("GFLOP/s"), 13637.548944048769);
}

TEST(ImportT4, ConvolutionA100MatchesTheCache) {
  ImportedRecording t4 = import_recording(kData / "kerneltuner/convolution_milo_a100.t4.json.gz");
  ImportedRecording cache = import_recording(kData / "kerneltuner/convolution_milo_a100.kt.json.gz");
  EXPECT_EQ(t4.format, RecordingFormat::T4);
  ASSERT_EQ(t4.results.size(), 4362u);
  EXPECT_EQ(count_status(t4, Status::Ok), 4201u);
  EXPECT_EQ(count_status(t4, Status::LaunchError), 155u);
  EXPECT_EQ(count_status(t4, Status::CompileError), 6u);
  // The same measurements in two formats: every time and status agrees exactly.
  for (std::size_t i = 0; i < t4.results.size(); ++i) {
    const Result& a = t4.results[i];
    const Result& b = cache.results[i];
    ASSERT_EQ(a.key(), b.key()) << i;
    EXPECT_EQ(a.status, b.status) << a.key();
    EXPECT_EQ(a.time.samples_ms, b.time.samples_ms) << a.key();
    EXPECT_EQ(a.time.mean_ms, b.time.mean_ms) << a.key();
    EXPECT_EQ(a.time.median_ms, b.time.median_ms) << a.key();
    EXPECT_EQ(a.compile_ms, b.compile_ms) << a.key();
    EXPECT_EQ(a.overhead_ms, b.overhead_ms) << a.key();
    EXPECT_EQ(a.timestamp, b.timestamp) << a.key();
    EXPECT_TRUE(a.counters.empty()) << a.key();  // the file's only measurement is the time
  }
  EXPECT_EQ(t4.results.front().time.mean_ms, 3.8753279224038124);
  EXPECT_EQ(t4.results.front().message, "");
  EXPECT_EQ(t4.results[766].message, "runtime");
  EXPECT_EQ(values_of(t4, "tile_size_x"), ints({1, 2, 3, 4}));
}

TEST(ImportT4, KttsStringValuesReadAsNumbersAndItsProfilingAsProfiling) {
  // KTT 2.2 writes T4 with every value a string and the profiling passes inside
  // "framework" (the layout of KTT's Examples/CoulombSum3d T4 output).
  ScratchDir dir;
  std::filesystem::path file = dir / "ktt.t4.json";
  auto result = [](const char* unroll, const char* ratio, const char* mode, double us, bool profiled) {
    std::string counters = profiled ? R"(, {"name": "smsp__inst_executed.sum", "type": "Double", "unit": "", "value": 341311488.0})" : "";
    return fmt::format(R"({{"configuration": {{"INNER_UNROLL_FACTOR": "{}", "RATIO": "{}", "MODE": "{}"}},
      "correctness": 1, "invalidity": "correct", "objectives": ["time"],
      "measurements": [{{"name": "time", "unit": "", "value": {}}}{}],
      "compilation_data": {{"constant_memory_size": 0, "global_size": {{"x": 16, "y": 64, "z": 256}}, "local_memory_size": 0,
        "local_size": {{"x": 16, "y": 4, "z": 1}}, "max_work_group_size": 1024, "private_memory_size": 0, "registers": 44}},
      "times": {{"compilation_time": 14958.313, "data": 79109.886, "framework": 298309.184, "kernel_overhead": 59740.158,
                "profiling_overhead": {}, "profiling_runs": {}, "runtimes": [{}], "search_algorithm": 44.101,
                "validation": 21.809}}, "timestamp": "2026-03-05 08:58:2 UTC"}})",
                       unroll, ratio, mode, us, counters, profiled ? 65245.883 : 0.0, profiled ? 94213.257 : 0.0, us);
  };
  std::ofstream(file) << R"({"metadata": {"autotuner": "KTT", "autotuner_version": "2.2.0", "compute_api": "CUDA",
    "device": "NVIDIA RTX 500 Ada Generation Laptop GPU", "platform": "NVIDIA CUDA", "timeunit": "microseconds"}, "results": [)"
                      << result("0", "0.500000", "a", 4164.159, true) << ",\n"
                      << result("16", "2.000000", "b", 2065.599, false) << "]}";
  ImportedRecording rec = import_recording(file);
  ASSERT_EQ(rec.results.size(), 2u);
  EXPECT_EQ(values_of(rec, "INNER_UNROLL_FACTOR"), ints({0, 16}));
  EXPECT_EQ(values_of(rec, "RATIO"), (std::vector<Value>{0.5, 2.0}));
  EXPECT_TRUE(values_of(rec, "RATIO")[1].is_float());  // a float parameter's integral values stay floats
  EXPECT_EQ(values_of(rec, "MODE"), (std::vector<Value>{"a", "b"}));
  const Result& profiled = rec.results[0];
  EXPECT_DOUBLE_EQ(profiled.time.mean_ms, 4.164159);
  EXPECT_DOUBLE_EQ(profiled.profiling_ms, 65.245883 + 94.213257);
  EXPECT_DOUBLE_EQ(profiled.overhead_ms, 298.309184 - 65.245883 - 94.213257);  // framework less profiling
  EXPECT_EQ(profiled.counters.at("smsp__inst_executed.sum"), 341311488.0);
  // Its compilation data as KTT's JSON import names it; CUDA's grid is in blocks.
  EXPECT_EQ(profiled.counters.at("RegistersCount"), 44.0);
  EXPECT_EQ(profiled.counters.at("threads"), 256.0 * 256 * 256);
  EXPECT_EQ(rec.results[1].profiling_ms, 0.0);
  EXPECT_FALSE(rec.results[1].counters.contains("smsp__inst_executed.sum"));

  // A file Steer wrote keeps its types: its strings are a spec's string values.
  std::filesystem::path steer_file = dir / "steer.t4.json";
  std::ofstream(steer_file) << R"({"metadata": {"generator": "steer", "timeunit": "milliseconds"}, "results": [
    {"configuration": {"V": "1"}, "invalidity": "correct", "times": {"runtimes": [1.0]}, "measurements": []},
    {"configuration": {"V": "2"}, "invalidity": "correct", "times": {"runtimes": [2.0]}, "measurements": []}]})";
  EXPECT_EQ(values_of(import_recording(steer_file), "V"), (std::vector<Value>{"1", "2"}));
}

TEST(ImportKttCsv, VectorAddRtx2080) {
  // KTT 2.x CSV: parameters, the 33 Nsight Compute metrics, then the compilation data.
  ImportedRecording rec = import_recording(kData / "ktt/vectoradd_rtx2080.ktt.csv");
  EXPECT_EQ(rec.format, RecordingFormat::KttCsv);
  EXPECT_EQ(rec.kernel, "vectorAddition_kernel");
  EXPECT_EQ(rec.device, "");  // KTT's CSV does not name it: `steer import --device`
  ASSERT_EQ(rec.results.size(), 4u);
  ASSERT_EQ(rec.parameters.size(), 1u);
  EXPECT_EQ(values_of(rec, "multiply_block_size"), ints({32, 64, 128, 256}));
  const Result& first = rec.results[0];
  EXPECT_EQ(first.status, Status::Ok);
  EXPECT_DOUBLE_EQ(first.time.median_ms, 0.077408);
  EXPECT_EQ(first.counters.at("smsp__inst_executed.sum"), 458752.0);
  EXPECT_EQ(first.counters.at("RegistersCount"), 12.0);
  EXPECT_EQ(first.counters.at("threads"), 1048576.0);
  EXPECT_EQ(profiling_counters(first), 33u);
  EXPECT_EQ(detect_counter_family(first.counters), CounterFamily::Ktt);  // KTT's own 33 metrics
}

TEST(ImportKttCsv, CoulombAsCsvMatchesItsJson) {
  // The same measurements written as KTT's CSV: parameters, then counters.
  ImportedRecording json = import_recording(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  std::vector<std::string> counters;
  for (const auto& [name, value] : json.results[0].counters) {
    if (name != "threads" && !kKttExtras.contains(name)) counters.push_back(name);
  }
  std::string csv = "Kernel name,Computation duration (us),Global size,Local size";
  for (const auto& [name, value] : json.results[0].configuration) csv += "," + name;
  for (const std::string& name : counters) csv += "," + name;
  csv += "\n";
  for (const Result& result : json.results) {
    csv += fmt::format("directCoulombSum,{},{},{}", result.time.median_ms * 1000, result.counters.at("threads"), 64);
    for (const auto& [name, value] : result.configuration) csv += "," + value.to_string();
    for (const std::string& name : counters) csv += fmt::format(",{}", result.counters.at(name));
    csv += "\n";
  }
  ScratchDir dir;
  std::ofstream(dir / "coulomb.csv") << csv;
  ImportedRecording rec = import_recording(dir / "coulomb.csv");
  ASSERT_EQ(rec.results.size(), json.results.size());
  EXPECT_EQ(rec.parameters.size(), json.parameters.size());
  for (std::size_t i = 0; i < rec.results.size(); ++i) {
    const Result& a = rec.results[i];
    const Result& b = json.results[i];
    ASSERT_EQ(a.key(), b.key()) << i;
    EXPECT_DOUBLE_EQ(a.time.median_ms, b.time.median_ms) << a.key();
    for (const std::string& name : counters) EXPECT_EQ(a.counters.at(name), b.counters.at(name)) << name;
    EXPECT_EQ(a.counters.at("threads"), b.counters.at("threads"));
  }
  for (const RecordedParameter& parameter : rec.parameters) {
    EXPECT_EQ(parameter.values, values_of(json, parameter.name)) << parameter.name;
  }
}

TEST(ImportKttCsv, Ktt1TablesOfValidAndFailedConfigurations) {
  // KTT 1.x: a composition of two kernels (a size pair and counters per kernel), then,
  // after an empty line, the configurations that failed, with KTT's message.
  ScratchDir dir;
  std::filesystem::path file = dir / "ktt1.csv";
  std::ofstream(file) << "Kernel name,Computation duration (ms),Global size 0,Local size 0,Global size 1,Local size 1,"
                         "TILE,RATIO,flop_sp_efficiency first,inst_executed first,inst_executed second\n"
                         "pair,1.5,4096,64,2048,32,4,0.5,12.5,100,200\n"
                         "pair,2.5,4096,128,2048,32,8,1,13.5,110,210\n"
                         "pair,3.5,4096,256,2048,32,8,2\n"  // not profiled: no counters
                         "\n"
                         "Kernel name,Error message,Global size 0,Local size 0,Global size 1,Local size 1,TILE,RATIO\n"
                         "pair,CompilationFailed: ptxas error,4096,64,2048,32,16,0.5\n"
                         "pair,ValidationFailed,4096,64,2048,32,2,2\n"
                         "pair,Kernel launch failed,4096,64,2048,32,32,2\n";
  ImportedRecording rec = import_recording(file);
  ASSERT_EQ(rec.results.size(), 6u);
  EXPECT_EQ(values_of(rec, "TILE"), ints({2, 4, 8, 16, 32}));
  EXPECT_EQ(values_of(rec, "RATIO"), (std::vector<Value>{0.5, 1.0, 2.0}));
  EXPECT_FALSE(rec.results[2].counters.contains("first/inst_executed"));
  EXPECT_EQ(rec.results[2].counters.at("threads"), 4096.0);
  EXPECT_DOUBLE_EQ(rec.results[0].time.median_ms, 1.5);
  ASSERT_EQ(rec.parameters.size(), 2u);  // nvprof's flop_sp_efficiency, unknown to the tables, is a counter
  EXPECT_EQ(rec.results[0].counters.at("first/flop_sp_efficiency"), 12.5);
  EXPECT_EQ(rec.results[0].counters.at("first/inst_executed"), 100.0);
  EXPECT_EQ(rec.results[1].counters.at("second/inst_executed"), 210.0);
  EXPECT_EQ(rec.results[0].counters.at("threads"), 4096.0);  // the first kernel's
  EXPECT_EQ(rec.results[3].status, Status::CompileError);
  EXPECT_EQ(rec.results[3].message, "CompilationFailed: ptxas error");
  EXPECT_EQ(rec.results[4].status, Status::InvalidOutput);
  EXPECT_EQ(rec.results[5].status, Status::LaunchError);
}

TEST(ImportKttCsv, ErrorsNameTheLineAndTheColumn) {
  ScratchDir dir;
  std::ofstream(dir / "bad_value.csv") << "Kernel name,Computation duration (us),Global size,Local size,A\n"
                                          "k,1.0,64,32,1\n"
                                          "k,fast,64,32,2\n";
  std::string message = import_error(dir / "bad_value.csv");
  EXPECT_NE(message.find("bad_value.csv"), std::string::npos) << message;
  EXPECT_NE(message.find("line 3"), std::string::npos) << message;
  EXPECT_NE(message.find("'fast'"), std::string::npos) << message;

  std::ofstream(dir / "short.csv") << "Kernel name,Computation duration (us),Global size,Local size,A\nk,1.0,64,32\n";
  message = import_error(dir / "short.csv");
  EXPECT_NE(message.find("4 values for 5 columns"), std::string::npos) << message;

  std::ofstream(dir / "no_time.csv") << "Kernel name,Global size,Local size,A\nk,64,32,1\n";
  message = import_error(dir / "no_time.csv");
  EXPECT_NE(message.find("no duration column"), std::string::npos) << message;

  std::ofstream(dir / "twice.csv") << "Kernel name,Kernel duration (us),Global size,Local size,A,A\nk,1,64,32,1,2\n";
  message = import_error(dir / "twice.csv");
  EXPECT_NE(message.find("column 'A' twice"), std::string::npos) << message;
}

TEST(Import, ReadsPlainAndGzipAlike) {
  ScratchDir dir;
  std::filesystem::path plain = dir / "coulomb.json";
  {
    gzFile in = gzopen((kData / "ktt/coulomb_rtx2080.ktt.json.gz").c_str(), "rb");
    ASSERT_NE(in, nullptr);
    std::ofstream out(plain, std::ios::binary);
    char buffer[65536];
    int n = 0;
    while ((n = gzread(in, buffer, sizeof buffer)) > 0) out.write(buffer, n);
    gzclose(in);
  }
  ImportedRecording from_plain = import_recording(plain);
  ImportedRecording from_gzip = import_recording(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  ASSERT_EQ(from_plain.results.size(), from_gzip.results.size());
  for (std::size_t i = 0; i < from_plain.results.size(); ++i) {
    testing::expect_same_result(from_gzip.results[i], from_plain.results[i]);
  }
}

TEST(Import, KernelTunerCacheOfAnInterruptedRun) {
  // Kernel Tuner closes the JSON only when tuning ends; old caches store failures as the
  // whole entry, so the configuration comes from the key.
  ScratchDir dir;
  std::filesystem::path file = dir / "open.json";
  std::ofstream(file) << R"({"device_name": "X", "kernel_name": "k", "problem_size": 1024,
"tune_params_keys": ["bx", "vec", "unroll"], "tune_params": {"bx": [32, 64], "vec": [0.5, 1.0], "unroll": [true, false]},
"objective": "time", "cache": {
"32,0.5,True": {"bx": 32, "vec": 0.5, "unroll": true, "time": 1.5, "times": [1.0, 2.0], "compile_time": 10, "energy": 0.25},
"64,1.0,False": "InvalidConfig",
)";
  ImportedRecording rec = import_recording(file);
  EXPECT_EQ(rec.problem_size, "1024");
  ASSERT_EQ(rec.results.size(), 2u);
  EXPECT_EQ(rec.results[0].time.mean_ms, 1.5);
  EXPECT_EQ(rec.results[0].time.median_ms, 1.5);
  EXPECT_EQ(rec.results[0].counters.at("energy"), 0.25);
  EXPECT_EQ(rec.results[1].status, Status::Skipped);
  EXPECT_EQ(rec.results[1].key(), "bx=64,vec=1.0,unroll=0");
  EXPECT_TRUE(rec.results[1].configuration[1].second.is_float());
  EXPECT_TRUE(rec.results[1].configuration[2].second.is_bool());
}

TEST(Import, ErrorsNameTheFileAndThePlace) {
  ScratchDir dir;
  std::string message = import_error(dir / "absent.json");
  EXPECT_NE(message.find("absent.json"), std::string::npos) << message;

  std::ofstream(dir / "broken.json") << "{\"Results\": [\n  {\"Status\": }\n]}";
  message = import_error(dir / "broken.json");
  EXPECT_NE(message.find("broken.json"), std::string::npos) << message;
  EXPECT_NE(message.find("line 2"), std::string::npos) << message;

  std::ofstream(dir / "other.json") << R"({"hello": "world"})";
  message = import_error(dir / "other.json");
  EXPECT_NE(message.find("not a recording"), std::string::npos) << message;

  std::ofstream(dir / "status.json")
      << R"({"Results": [{"Configuration": [{"Name": "A", "Value": 1}], "Status": "Exploded", "ComputationResults": []}]})";
  message = import_error(dir / "status.json");
  EXPECT_NE(message.find("status.json"), std::string::npos) << message;
  EXPECT_NE(message.find("Results[0].Status"), std::string::npos) << message;
  EXPECT_NE(message.find("Exploded"), std::string::npos) << message;

  std::ofstream(dir / "unit.json") << R"({"metadata": {"timeunit": "fortnights"}, "results": []})";
  message = import_error(dir / "unit.json");
  EXPECT_NE(message.find("metadata.timeunit"), std::string::npos) << message;
}

}  // namespace
}  // namespace steer
