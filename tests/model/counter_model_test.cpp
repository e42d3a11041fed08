// Counter models: least squares recovers polynomials per binary subspace, trees recover
// trees, forests predict as well, files round-trip, and predictions over a space match
// parameters by name.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "steer/model.hpp"
#include "steer/recording.hpp"

namespace steer {
namespace {

const std::filesystem::path kData = STEER_DATA_DIR "/recordings";

// Rows over A in {1..5}, B in {2, 4, 8, 16}, C in {0, 1}, with counters computed by `f`.
template <typename F>
TrainingSet synthetic(F f, const std::vector<std::string>& counters = {"DRAM_RT", "INST_F32"}) {
  TrainingSet data;
  data.parameters = {{"A", ValueType::Int, {1, 2, 3, 4, 5}},
                     {"B", ValueType::Int, {2, 4, 8, 16}},
                     {"C", ValueType::Int, {0, 1}}};
  data.counters = counters;
  for (double a : {1, 2, 3, 4, 5}) {
    for (double b : {2, 4, 8, 16}) {
      for (double c : {0, 1}) {
        data.features.push_back({a, b, c});
        data.targets.push_back(f(a, b, c));
      }
    }
  }
  data.provenance.source = "synthetic";
  data.provenance.kernel = "test";
  data.provenance.device = "NVIDIA GeForce RTX 2080 Ti";
  data.provenance.family = CounterFamily::Ktt;
  data.provenance.device_facts = known_device_facts(data.provenance.device);
  data.provenance.rows = data.features.size();
  return data;
}

// A quadratic with an interaction, different in each subspace of the binary C.
std::vector<double> quadratic(double a, double b, double c) {
  if (c == 0) return {100 + 3 * a - 2 * b + 0.5 * a * b + a * a, 50 + 0.25 * b * b};
  return {400 - a + 4 * b - 0.1 * a * b + 2 * b * b, 7 + 2 * a};
}

std::filesystem::path temp_file(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("steer_model_test_" + std::to_string(getpid()) + "_" + name);
}

constexpr TrainOptions kRawPolynomial{.kind = ModelKind::LeastSquares, .lsq_logarithmic = false};

TEST(LeastSquaresModel, RecoversAPolynomialPerSubspaceOfTheBinaryParameter) {
  CounterModel model = CounterModel::train(synthetic(quadratic), kRawPolynomial);
  for (double a : {1.0, 2.5, 5.0}) {
    for (double b : {2.0, 6.0, 16.0}) {
      for (double c : {0.0, 1.0}) {
        const std::vector<double> expected = quadratic(a, b, c);
        const std::vector<double> predicted = model.predict(std::vector<double>{a, b, c});
        EXPECT_NEAR(predicted[0], expected[0], 1e-6 * std::abs(expected[0])) << a << " " << b << " " << c;
        EXPECT_NEAR(predicted[1], expected[1], 1e-6 * std::abs(expected[1])) << a << " " << b << " " << c;
      }
    }
  }
}

TEST(LeastSquaresModel, SolvesASingularSubspaceWithRidgeInsteadOfFailing) {
  // Only two rows per subspace for six terms: the system is singular.
  TrainingSet data = synthetic(quadratic);
  TrainingSet few = data.subset(std::vector<std::size_t>{0, 1, 38, 39});
  CounterModel model = CounterModel::train(few, kRawPolynomial);
  for (std::size_t r = 0; r < few.rows(); ++r) {
    const std::vector<double> predicted = model.predict(few.features[r]);
    EXPECT_TRUE(std::isfinite(predicted[0]));
    EXPECT_NEAR(predicted[0], few.targets[r][0], 1e-3 * std::abs(few.targets[r][0])) << "the rows it saw";
  }
}

TEST(LeastSquaresModel, LogarithmicFitRecoversProductsAndQuotientsOfParameters) {
  // log(1 + y) = log 100 + log A - log B: linear in the log2-coded A (1..5) and B (2..16).
  auto product = [](double a, double b, double c) { return std::vector<double>{100 * a / b - 1, 7 + c}; };
  CounterModel model = CounterModel::train(synthetic(product), {.kind = ModelKind::LeastSquares});
  for (double a : {1.0, 1.5, 3.0, 5.0}) {
    for (double b : {2.0, 3.0, 16.0}) {
      const double expected = 100 * a / b - 1;
      EXPECT_NEAR(model.predict(std::vector<double>{a, b, 1})[0], expected, 1e-6 * expected) << a << " " << b;
    }
  }
}

TEST(LeastSquaresModel, NeverPredictsNegativeCounters) {
  auto dipping = [](double a, double, double) { return std::vector<double>{(a - 3) * (a - 3) - 0.5, 1.0}; };
  CounterModel model = CounterModel::train(synthetic(dipping), kRawPolynomial);
  EXPECT_EQ(model.predict(std::vector<double>{3, 4, 0})[0], 0.0) << "-0.5 is clamped";
  EXPECT_NEAR(model.predict(std::vector<double>{5, 4, 0})[0], 3.5, 1e-9);
}

// A tree: A <= 2 -> 10; otherwise B <= 4 -> 20, else 30 (and C does nothing).
std::vector<double> stepped(double a, double b, double) { return {a <= 2 ? 10.0 : (b <= 4 ? 20.0 : 30.0)}; }

TEST(TreeModel, RecoversAKnownTree) {
  TrainingSet data = synthetic(stepped, {"DRAM_RT"});
  CounterModel model = CounterModel::train(data, {.kind = ModelKind::Tree, .seed = 3});
  for (double a : {1, 2, 3, 5}) {
    for (double b : {2, 4, 8, 16}) {
      EXPECT_DOUBLE_EQ(model.predict(std::vector<double>{a, b, 1})[0], stepped(a, b, 1)[0]) << a << " " << b;
    }
  }
}

TEST(ForestModel, PredictsAKnownTreeAsWell) {
  TrainingSet data = synthetic(stepped, {"DRAM_RT"});
  CounterModel model = CounterModel::train(data, {.kind = ModelKind::Forest, .seed = 3});
  ModelAccuracy accuracy = model.accuracy(data);
  ASSERT_EQ(accuracy.counters, std::vector<std::string>{"DRAM_RT"});
  EXPECT_LT(accuracy.median_relative_error[0], 0.01);
}

TEST(TreeModel, IsDeterministicUnderASeed) {
  auto noisy = [](double a, double b, double c) { return std::vector<double>{a * b + c * 3 + std::fmod(a * 7 + b, 3)}; };
  TrainingSet data = synthetic(noisy, {"DRAM_RT"});
  for (ModelKind kind : {ModelKind::Tree, ModelKind::Forest}) {
    CounterModel a = CounterModel::train(data, {.kind = kind, .seed = 5});
    CounterModel b = CounterModel::train(data, {.kind = kind, .seed = 5});
    EXPECT_EQ(a.to_json(), b.to_json()) << to_string(kind);
  }
}

TEST(CounterModelFile, RoundTripsEveryKindWithItsProvenance) {
  TrainingSet data = synthetic(quadratic);
  for (ModelKind kind : {ModelKind::LeastSquares, ModelKind::Tree, ModelKind::Forest}) {
    CounterModel model = CounterModel::train(data, {.kind = kind});
    const auto file = temp_file(std::string(to_string(kind)) + ".json");
    model.save(file);
    CounterModel loaded = CounterModel::load(file);
    std::filesystem::remove(file);
    EXPECT_EQ(loaded.kind(), kind);
    EXPECT_EQ(loaded.counters(), data.counters);
    ASSERT_EQ(loaded.parameters().size(), 3u);
    EXPECT_EQ(loaded.parameters()[1].name, "B");
    EXPECT_EQ(loaded.parameters()[1].values, data.parameters[1].values);
    EXPECT_EQ(loaded.provenance().source, "synthetic");
    EXPECT_EQ(loaded.provenance().device, "NVIDIA GeForce RTX 2080 Ti");
    EXPECT_EQ(loaded.provenance().family, CounterFamily::Ktt);
    ASSERT_TRUE(loaded.provenance().device_facts);
    EXPECT_EQ(loaded.provenance().device_facts->sm_count, 68);
    EXPECT_EQ(loaded.provenance().device_facts->compute_capability, (ComputeCapability{7, 5}));
    for (const auto& row : data.features) EXPECT_EQ(loaded.predict(row), model.predict(row)) << to_string(kind);
  }
}

TEST(CounterModelFile, MalformedFilesAreModelErrorsNamingTheFile) {
  const auto file = temp_file("bad.json");
  std::ofstream(file) << "{\"format\": \"something else\"}";
  try {
    CounterModel::load(file);
    ADD_FAILURE() << "loaded a file of another format";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
  }
  std::ofstream(file) << "not json";
  EXPECT_THROW(CounterModel::load(file), ModelError);
  std::filesystem::remove(file);
  EXPECT_THROW(CounterModel::load(file), ModelError) << "missing file";

  nlohmann::json json = CounterModel::train(synthetic(stepped, {"DRAM_RT"}), {.kind = ModelKind::Tree}).to_json();
  json["model"]["trees"][0][0]["left"][0] = 0;  // a cycle: the root's child is the root
  json["model"]["trees"][0][0]["feature"][0] = 0;
  EXPECT_THROW(CounterModel::from_json(json), ModelError);
}

TEST(CounterModelPrediction, MatchesParametersByNameInAnotherSpace) {
  CounterModel model = CounterModel::train(synthetic(quadratic), kRawPolynomial);
  // Another order, another range of A, and a parameter the model does not know.
  SpaceDefinition def;
  def.add_parameter("C", std::vector<Value>{0, 1});
  def.add_parameter("EXTRA", std::vector<Value>{"x", "y"});
  def.add_parameter("B", std::vector<Value>{2, 16});
  def.add_parameter("A", std::vector<Value>{1, 3, 6});
  Space space = Space::build(def);
  PredictedCounters predicted = model.predict(space);
  ASSERT_EQ(predicted.configs, space.size());
  const float* dram = predicted.counter("DRAM_RT");
  ASSERT_NE(dram, nullptr);
  EXPECT_EQ(predicted.counter("L2_RT"), nullptr);
  for (ConfigIndex c = 0; c < space.size(); ++c) {
    const double a = space.value(c, 3).as_double(), b = space.value(c, 2).as_double(), cc = space.value(c, 0).as_double();
    EXPECT_NEAR(dram[c], quadratic(a, b, cc)[0], 1e-3 * quadratic(a, b, cc)[0]) << space.key(c);
  }
}

TEST(CounterModelPrediction, ASpaceWithoutAVaryingModelParameterIsAnError) {
  CounterModel model = CounterModel::train(synthetic(quadratic), {.kind = ModelKind::Tree});
  SpaceDefinition def;
  def.add_parameter("A", std::vector<Value>{1, 2});
  def.add_parameter("C", std::vector<Value>{0, 1});
  try {
    model.predict(Space::build(def));
    ADD_FAILURE() << "predicted without B";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("'B'"), std::string::npos) << e.what();
  }
}

TEST(CounterModelPrediction, StringValuesAreMatchedByValue) {
  TrainingSet data;
  data.parameters = {{"METHOD", ValueType::String, {"plain", "tiled", "vector"}}};
  data.counters = {"DRAM_RT"};
  for (double m : {0, 1, 2}) {
    data.features.push_back({m});
    data.targets.push_back({10 * (m + 1)});
  }
  CounterModel model = CounterModel::train(data, {.kind = ModelKind::Tree});
  SpaceDefinition def;
  def.add_parameter("METHOD", std::vector<Value>{"vector", "plain"});
  Space space = Space::build(def);
  PredictedCounters predicted = model.predict(space);
  EXPECT_FLOAT_EQ(predicted.counter("DRAM_RT")[0], 30);
  EXPECT_FLOAT_EQ(predicted.counter("DRAM_RT")[1], 10);
  SpaceDefinition unknown;
  unknown.add_parameter("METHOD", std::vector<Value>{"plain", "unrolled"});
  EXPECT_THROW(model.predict(Space::build(unknown)), ModelError);
}

TEST(TrainingSetOfARecording, HoldsEveryProfiledConfigurationWithCanonicalCounters) {
  Recording recording = Recording::load(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  TrainingSet data = training_set(recording, "coulomb_rtx2080");
  EXPECT_EQ(data.rows(), 210u);
  EXPECT_EQ(data.provenance.family, CounterFamily::Ktt);
  ASSERT_TRUE(data.provenance.device_facts);
  EXPECT_EQ(data.provenance.device_facts->sm_count, 68);
  for (const char* counter : {"DRAM_RT", "L2_RT", "INST_F32", "SM_E", "threads"}) {
    EXPECT_NE(std::find(data.counters.begin(), data.counters.end(), counter), data.counters.end()) << counter;
  }
  for (ModelKind kind : {ModelKind::LeastSquares, ModelKind::Tree, ModelKind::Forest}) {
    ModelAccuracy accuracy = held_out_accuracy(data, {.kind = kind});
    EXPECT_EQ(accuracy.rows, 42u);
    const auto threads = std::find(accuracy.counters.begin(), accuracy.counters.end(), "threads");
    ASSERT_NE(threads, accuracy.counters.end());
    const double error = accuracy.median_relative_error[static_cast<std::size_t>(threads - accuracy.counters.begin())];
    if (kind == ModelKind::LeastSquares) {
      EXPECT_TRUE(std::isfinite(error)) << "threads fall as 1/Z_ITERATIONS: no polynomial, but an estimate";
    } else {
      EXPECT_LT(error, 0.05) << to_string(kind) << ": the thread count is a function of the parameters";
    }
  }
}

// A model carries what its training recording measured (guided's source when no other is
// named): the runtime of every configuration that ran, and a fingerprint by which a replay of
// those very measurements is told apart from another GPU's.
TEST(TrainingSetOfARecording, CarriesTheRuntimesOfEveryConfigurationThatRanThroughTheModelFile) {
  const Recording recording = Recording::load(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  const RecordedRuntimes runtimes = recorded_runtimes(recording);
  std::size_t ran = 0;
  for (ConfigIndex c = 0; c < recording.space().size(); ++c) {
    ran += recording.present(c) && recording.status(c) == Status::Ok;
  }
  ASSERT_EQ(runtimes.rows(), ran);
  for (std::size_t r = 0; r < runtimes.rows(); ++r) {
    const std::optional<ConfigIndex> c = recording.space().index_of(runtimes.values[r]);
    ASSERT_TRUE(c);
    EXPECT_EQ(runtimes.runtime_ms[r], recording.runtime_ms(*c));
  }
  EXPECT_EQ(runtimes.fingerprint.size(), 32u);
  EXPECT_EQ(recorded_runtimes(Recording::load(kData / "ktt/coulomb_rtx2080.ktt.json.gz")).fingerprint,
            runtimes.fingerprint);
  EXPECT_NE(recorded_runtimes(Recording::load(kData / "ktt/coulomb_gtx1070.ktt.json.gz")).fingerprint,
            runtimes.fingerprint)
      << "the same space on another GPU";

  // Of the measurements, not of the file's order: the parameters' values and the results
  // reversed.
  ImportedRecording reordered = import_recording(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  for (RecordedParameter& parameter : reordered.parameters) std::reverse(parameter.values.begin(), parameter.values.end());
  std::reverse(reordered.results.begin(), reordered.results.end());
  EXPECT_EQ(recorded_runtimes(Recording::from_import(reordered)).fingerprint, runtimes.fingerprint);
  // ... and through a Kernel Tuner cache file.
  const auto exported = temp_file("recorded.kt.json");
  {
    std::ofstream out(exported);
    std::vector<Result> results;
    for (ConfigIndex c = 0; c < recording.space().size(); ++c) {
      if (recording.present(c)) results.push_back(*recording.recorded(c));
    }
    export_kernel_tuner(out, TuningKey{.spec_name = "coulomb", .spec_hash = {}, .device = recording.device()}, results);
  }
  EXPECT_EQ(recorded_runtimes(Recording::load(exported)).fingerprint, runtimes.fingerprint);
  std::filesystem::remove(exported);

  const auto file = temp_file("recorded.json");
  CounterModel::train(training_set(recording, "coulomb_rtx2080"), {.kind = ModelKind::Tree}).save(file);
  const CounterModel loaded = CounterModel::load(file);
  std::filesystem::remove(file);
  EXPECT_EQ(loaded.recorded_runtimes().values, runtimes.values);
  EXPECT_EQ(loaded.recorded_runtimes().runtime_ms, runtimes.runtime_ms);
  EXPECT_EQ(loaded.recorded_runtimes().fingerprint, runtimes.fingerprint);

  // A replay of these measurements, or of a part of them, is told apart from another GPU's.
  EXPECT_TRUE(replays_training_measurements(recording, loaded));
  EXPECT_TRUE(replays_training_measurements(Recording::from_import(reordered), loaded));
  ImportedRecording part = reordered;
  part.results.resize(part.results.size() / 3);
  EXPECT_TRUE(replays_training_measurements(Recording::from_import(part), loaded));
  EXPECT_FALSE(replays_training_measurements(Recording::load(kData / "ktt/coulomb_gtx1070.ktt.json.gz"), loaded));

  nlohmann::json json = loaded.to_json();
  json["recorded"]["rows"][3][0] = 1000;  // no such value of the first parameter
  EXPECT_THROW(CounterModel::from_json(json), ModelError);
  json.erase("recorded");
  EXPECT_EQ(CounterModel::from_json(json).recorded_runtimes().rows(), 0u) << "a model file without them";
  EXPECT_FALSE(replays_training_measurements(recording, CounterModel::from_json(json)));
}

TEST(TrainingSetOfARecording, ARecordingWithoutCountersIsAnError) {
  Recording recording = Recording::load(kData / "ktt/pnpoly_rtx3090.ktt.json.gz");
  try {
    (void)training_set(recording, "pnpoly_rtx3090");
    ADD_FAILURE() << "expected a ModelError";
  } catch (const ModelError& e) {
    // Its threads and registers are the launch's and the binary's, not a profiler's.
    EXPECT_NE(std::string(e.what()).find("no configuration that ran carries hardware counters"), std::string::npos)
        << e.what();
  }
}

// AMD's profiler (rocprof, as KTT records it on ROCm) names its counters its own way: the
// error says the recording has counters, names some, and says which sets Steer reads.
TEST(TrainingSetOfARecording, CountersOfNoSetSteerReadsAreAnErrorNamingThem) {
  nlohmann::json results = nlohmann::json::array();
  for (int x : {1, 2}) {
    nlohmann::json counters = nlohmann::json::array();
    for (const char* name : {"VALUBusy", "MemUnitBusy", "FETCH_SIZE", "WRITE_SIZE", "L2CacheHit"}) {
      counters.push_back({{"Name", name}, {"Type", "Double"}, {"Value", 10.0 * x}});
    }
    results.push_back(
        {{"ComputationResults",
          {{{"Duration", 100.0 * x},
            {"GlobalSize", {{"X", 1024}, {"Y", 1}, {"Z", 1}}},
            {"LocalSize", {{"X", 64}, {"Y", 1}, {"Z", 1}}},
            {"KernelFunction", "scale"},
            {"ProfilingData", {{"Counters", counters}, {"RemainingProfilingRuns", 0}}}}}},
         {"Configuration", {{{"Name", "X"}, {"Value", x}, {"ValueType", "UnsignedInt"}}}},
         {"KernelName", "scale"},
         {"Status", "Ok"},
         {"TotalDuration", 100.0 * x}});
  }
  const nlohmann::json recording = {
      {"Metadata",
       {{"ComputeApi", "OpenCL"}, {"Device", "AMD Instinct MI100"}, {"KttVersion", "2.1.0"}, {"TimeUnit", "Microseconds"}}},
      {"Results", results}};
  const std::filesystem::path file = temp_file("amd.ktt.json");
  std::ofstream(file) << recording.dump();
  try {
    (void)training_set(Recording::load(file), "amd");
    ADD_FAILURE() << "expected a ModelError";
  } catch (const ModelError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("FETCH_SIZE, L2CacheHit, MemUnitBusy, VALUBusy and 1 more"), std::string::npos) << what;
    EXPECT_NE(what.find("none of the NVIDIA counter sets Steer reads"), std::string::npos) << what;
  }
  std::filesystem::remove(file);
}

// KTT records each kernel of a composition with its own counters ("<kernel>/<metric>" once
// imported); the analysis reads one kernel's, and the error says so.
TEST(TrainingSetOfARecording, CountersOfAKernelCompositionAreAnErrorNamingItsKernels) {
  nlohmann::json results = nlohmann::json::array();
  for (int x : {1, 2}) {
    nlohmann::json computations = nlohmann::json::array();
    for (const char* kernel : {"bicgKernel1", "bicgKernel2"}) {
      nlohmann::json counters = nlohmann::json::array();
      for (const char* name : {"dram__sectors_read.sum", "dram__sectors_write.sum", "smsp__inst_executed.sum"}) {
        counters.push_back({{"Name", name}, {"Type", "Double"}, {"Value", 10.0 * x}});
      }
      computations.push_back({{"Duration", 100.0 * x},
                              {"GlobalSize", {{"X", 1024}, {"Y", 1}, {"Z", 1}}},
                              {"LocalSize", {{"X", 64}, {"Y", 1}, {"Z", 1}}},
                              {"KernelFunction", kernel},
                              {"CompilationData", {{"RegistersCount", 32}}},
                              {"ProfilingData", {{"Counters", counters}, {"RemainingProfilingRuns", 0}}}});
    }
    results.push_back({{"ComputationResults", computations},
                       {"Configuration", {{{"Name", "X"}, {"Value", x}, {"ValueType", "UnsignedInt"}}}},
                       {"KernelName", "bicg"},
                       {"Status", "Ok"},
                       {"TotalDuration", 200.0 * x}});
  }
  const nlohmann::json recording = {
      {"Metadata", {{"ComputeApi", "CUDA"}, {"Device", "NVIDIA GeForce RTX 2080 Ti"}, {"TimeUnit", "Microseconds"}}},
      {"Results", results}};
  const std::filesystem::path file = temp_file("composition.ktt.json");
  std::ofstream(file) << recording.dump();
  try {
    (void)training_set(Recording::load(file), "bicg");
    ADD_FAILURE() << "expected a ModelError";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("each kernel of a composition (bicgKernel1, bicgKernel2)"), std::string::npos)
        << e.what();
  }
  std::filesystem::remove(file);
}

TEST(KnownDevices, LongerNamesWinOverTheirPrefixes) {
  EXPECT_EQ(known_device_facts("NVIDIA GeForce RTX 2080 Ti")->sm_count, 68);
  EXPECT_EQ(known_device_facts("NVIDIA GeForce RTX 2080")->sm_count, 46);
  EXPECT_EQ(known_device_facts("GeForce GTX 1070")->family, CounterFamily::PreVolta);
  EXPECT_EQ(known_device_facts("NVIDIA H200")->compute_capability, (ComputeCapability{9, 0}));
  EXPECT_EQ(known_device_facts("NVIDIA GeForce RTX 4070 Ti SUPER")->sm_count, 66);
  EXPECT_EQ(known_device_facts("NVIDIA GeForce RTX 4070 Ti")->sm_count, 60);
  EXPECT_EQ(known_device_facts("NVIDIA A100-SXM4-80GB")->sm_count, 108);
  EXPECT_EQ(known_device_facts("NVIDIA A10G")->sm_count, 80);
  EXPECT_EQ(known_device_facts("NVIDIA L40S")->sm_count, 142);
  EXPECT_EQ(known_device_facts("NVIDIA L4")->sm_count, 58);
  EXPECT_EQ(known_device_facts("NVIDIA GeForce RTX 5050")->compute_capability, (ComputeCapability{12, 0}));
  EXPECT_FALSE(known_device_facts("Some Future GPU"));
}

}  // namespace
}  // namespace steer

namespace steer {
namespace {

TEST(CounterModelPrediction, OverASpaceEqualsRowByRowPrediction) {
  Recording recording = Recording::load(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  TrainingSet data = training_set(recording, "coulomb_rtx2080");
  for (ModelKind kind : {ModelKind::LeastSquares, ModelKind::Tree}) {
    CounterModel model = CounterModel::train(data, {.kind = kind});
    PredictedCounters predicted = model.predict(recording.space());
    for (ConfigIndex c = 0; c < recording.space().size(); ++c) {
      std::vector<double> features;
      for (std::size_t p = 0; p < recording.space().parameters().size(); ++p) {
        features.push_back(recording.space().value(c, p).as_double());
      }
      const std::vector<double> row = model.predict(features);
      for (std::size_t k = 0; k < row.size(); ++k) {
        ASSERT_FLOAT_EQ(predicted.values[k][c], static_cast<float>(row[k])) << to_string(kind) << " " << c;
      }
    }
  }
}

}  // namespace
}  // namespace steer

namespace steer {
namespace {

TEST(LeastSquaresModel, HigherInteractionOrdersRecoverAThreeWayInteraction) {
  TrainingSet data;
  data.parameters = {{"A", ValueType::Int, {1, 2, 3}}, {"B", ValueType::Int, {1, 2, 3}}, {"D", ValueType::Int, {1, 2, 3}}};
  data.counters = {"DRAM_RT"};
  for (double a : {1, 2, 3}) {
    for (double b : {1, 2, 3}) {
      for (double d : {1, 2, 3}) {
        data.features.push_back({a, b, d});
        data.targets.push_back({10 + a * b * d});
      }
    }
  }
  TrainOptions pairwise{.kind = ModelKind::LeastSquares, .lsq_logarithmic = false};
  TrainOptions three_way = pairwise;
  three_way.lsq_interaction_order = 3;
  const CounterModel second = CounterModel::train(data, pairwise);
  const CounterModel third = CounterModel::train(data, three_way);
  EXPECT_NEAR(third.predict(std::vector<double>{3, 3, 3})[0], 37, 1e-6);
  EXPECT_GT(std::abs(second.predict(std::vector<double>{3, 3, 3})[0] - 37), 0.1) << "a*b*d is not pairwise";
  EXPECT_NEAR(CounterModel::from_json(third.to_json()).predict(std::vector<double>{3, 3, 3})[0], 37, 1e-6)
      << "the terms travel in the file";
}

}  // namespace
}  // namespace steer
