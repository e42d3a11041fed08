// The Tuner façade: a kernel, the application's own memory, a reference and comparisons in
// code, run and tuned through the same loop as `steer tune`. The fake backend's kernel
// doubles its input; a configuration it is told to get wrong adds one to element 3.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "steer/embed.hpp"
#include "steer/store.hpp"
#include "tuner/fake_backend.hpp"

namespace steer {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::FakeBackend;

constexpr const char* kSource = "__kernel void twice(__global const float* in, __global float* out) {}";

struct Fixture {
  std::vector<float> in = std::vector<float>(64);
  std::vector<float> out = std::vector<float>(64, -1.0f);
  FakeBackend* fake = nullptr;

  Tuner make() {
    std::iota(in.begin(), in.end(), 1.0f);
    auto backend = std::make_unique<FakeBackend>();
    fake = backend.get();
    Tuner tuner(Kernel::from_source(Language::Cuda, kSource, "twice"), std::move(backend));
    tuner.parameter("BLOCK", {16, 32, 64}).parameter("ITEMS", "[1, 2, 4]").constraint("BLOCK * ITEMS <= 128");
    tuner.size("N", 64);
    tuner.input("in", in).output("out", out);
    tuner.launch({"cdiv(N, BLOCK * ITEMS)"}, {"BLOCK"});
    tuner.options().run.repetitions = 2;
    return tuner;
  }
};

// The expected outputs, computed from the inputs the kernel saw.
void doubled(const ReferenceInput& input, ReferenceOutputs& outputs) {
  const std::vector<float> in = input.buffer<float>("in", 64);
  for (std::size_t i = 0; i < in.size(); ++i) {
    const float value = 2 * in[i];
    std::memcpy(outputs[0].data() + i * sizeof(float), &value, sizeof value);
  }
}

TEST(TunerFacade, AnInstanceHasTheDefinitionsAndTheGeometryOfItsConfiguration) {
  Fixture f;
  Tuner tuner = f.make();
  const KernelInstance instance = tuner.instance({{"BLOCK", 32}, {"ITEMS", 2}});
  EXPECT_EQ(instance.defines, (std::vector<std::pair<std::string, std::string>>{{"BLOCK", "32"}, {"ITEMS", "2"}}));
  EXPECT_EQ(instance.grid[0], 1u);  // cdiv(64, 64)
  EXPECT_EQ(instance.block[0], 32u);
  EXPECT_THAT([&] { tuner.instance({{"BLOCK", 64}, {"ITEMS", 4}}); },
              ::testing::ThrowsMessage<Error>(HasSubstr("'BLOCK=64 ITEMS=4' is not a configuration of the space")));
}

TEST(TunerFacade, GeometryFromAFunctionOfTheConfiguration) {
  Fixture f;
  Tuner tuner = f.make();
  tuner.launch([](const Configuration& configuration, KernelInstance& instance) {
    const std::int64_t block = configuration[0].second.as_int();
    instance.block = {static_cast<std::uint64_t>(block), 2, 1};
    instance.grid = {7, 1, 1};
  });
  const KernelInstance instance = tuner.instance({{"BLOCK", 16}, {"ITEMS", 1}});
  EXPECT_EQ(instance.block, (std::array<std::uint64_t, 3>{16, 2, 1}));
  EXPECT_EQ(instance.grid, (std::array<std::uint64_t, 3>{7, 1, 1}));
}

TEST(TunerFacade, RunWritesTheOutputsIntoTheApplicationsMemoryAndReturnsThem) {
  Fixture f;
  Tuner tuner = f.make();
  tuner.reference(doubled);
  const RunOutput output = tuner.run({{"BLOCK", 16}, {"ITEMS", 1}});
  EXPECT_TRUE(output.result.ok()) << output.result.message;
  EXPECT_EQ(output.result.time.samples_ms.size(), 2u);
  ASSERT_EQ(output.outputs.size(), 1u);
  EXPECT_EQ(output.output<float>("out")[5], 12.0f);
  EXPECT_EQ(f.out[5], 12.0f);
  EXPECT_THROW(output.output<double>("out"), Error);
  // The memory is read when a run starts: new inputs, new outputs.
  f.in[5] = 100;
  tuner.run({{"BLOCK", 16}, {"ITEMS", 1}});
  EXPECT_EQ(f.out[5], 200.0f);
}

TEST(TunerFacade, AWrongOutputIsTheResultsStatusNamingTheOutput) {
  Fixture f;
  Tuner tuner = f.make();
  tuner.reference(doubled);
  f.fake->wrong_output = [](const KernelInstance& instance) { return instance.defines[1].second == "4"; };
  const RunOutput output = tuner.run({{"BLOCK", 16}, {"ITEMS", 4}});
  EXPECT_EQ(output.result.status, Status::InvalidOutput);
  EXPECT_THAT(output.result.message, HasSubstr("output 'out': 1 of 64 elements differ"));
  // Ignored, the same output passes; compared element by element in code, it fails there.
  tuner.compare("out", compare::ignore());
  EXPECT_TRUE(tuner.run({{"BLOCK", 16}, {"ITEMS", 4}}).result.ok());
  tuner.compare("out", compare::elements<float>([](float actual, float expected) { return actual == expected; }));
  const RunOutput checked = tuner.run({{"BLOCK", 16}, {"ITEMS", 4}});
  EXPECT_EQ(checked.result.status, Status::InvalidOutput);
  EXPECT_THAT(checked.result.message, HasSubstr("rejected by the comparison function at index 3"));
}

TEST(TunerFacade, TuneRunsTheLoopAndResumesFromItsStore) {
  Fixture f;
  Tuner tuner = f.make();
  tuner.reference(doubled);
  f.fake->runtime_ms = [](const KernelInstance& instance) { return instance.block[0] == 32 ? 0.5 : 1.0; };
  f.fake->wrong_output = [](const KernelInstance& instance) { return instance.defines[0].second == "64"; };
  const fs::path db = fs::temp_directory_path() / ("steer_facade_" + std::to_string(getpid()) + ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
  tuner.searcher("exhaustive").store(db);
  const TuneSummary summary = tuner.tune({});
  EXPECT_EQ(summary.tests, 8u);  // 9 configurations, BLOCK=64 ITEMS=4 left out by the constraint
  EXPECT_EQ(summary.failed, 2u);  // BLOCK=64 gets the output wrong
  ASSERT_TRUE(summary.best);
  EXPECT_EQ(summary.best->configuration[0].second, Value(32));
  EXPECT_EQ(summary.problem_size, "N=64");

  const int runs = f.fake->runs;
  const TuneSummary resumed = tuner.tune({});
  EXPECT_EQ(resumed.resumed, 8u);
  EXPECT_EQ(f.fake->runs - runs, 5 * 3) << "only the final check runs again: the best 5, 3 rounds";
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
}

TEST(TunerFacade, ChangedExpectedOutputsStartANewTuningThatSaysWhy) {
  Fixture f;
  Tuner tuner = f.make();
  const std::string pid = std::to_string(getpid());
  const fs::path expected = fs::temp_directory_path() / ("steer_facade_expected_" + pid + ".raw");
  const auto write_expected = [&](float offset) {
    std::vector<float> values(f.in.size());
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = 2 * f.in[i] + offset;
    std::ofstream(expected, std::ios::binary)
        .write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
  };
  const fs::path db = fs::temp_directory_path() / ("steer_facade_expected_" + pid + ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
  tuner.reference(std::map<std::string, fs::path>{{"out", expected}}).searcher("exhaustive").store(db);
  tuner.options().final_check = 0;
  write_expected(0);
  const TuneSummary first = tuner.tune({});
  EXPECT_EQ(first.valid, 8u);
  EXPECT_EQ(tuner.tune({}).resumed, 8u) << "the same files: the same tuning";

  write_expected(1);  // other expected values: the stored validations no longer hold
  const TuneSummary changed = tuner.tune({});
  EXPECT_TRUE(changed.new_tuning);
  EXPECT_NE(changed.tuning, first.tuning);
  EXPECT_EQ(changed.resumed, 0u);
  EXPECT_EQ(changed.valid, 0u);
  EXPECT_THAT(changed.warnings, ::testing::Contains(HasSubstr("reference file out changed")));
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
  fs::remove(expected);
}

TEST(TunerFacade, TheStoreKeepsTuningsOfDifferentSizesApart) {
  Fixture f;
  Tuner tuner = f.make();
  const std::string first = tuner.spec().hash;
  tuner.size("N", 64);
  EXPECT_EQ(tuner.spec().hash, first) << "the size's value is the problem size, not the spec";
  EXPECT_EQ(tuner.spec().sizes.front().name, "N=64");
  tuner.parameter("EXTRA", {0, 1});
  EXPECT_NE(tuner.spec().hash, first);
}

TEST(TunerFacade, ExpectedOutputsAreGivenForOutputArgumentsOnly) {
  Fixture f;
  Tuner tuner = f.make();
  tuner.reference(std::map<std::string, fs::path>{{"in", "in.npy"}});
  EXPECT_THAT([&] { tuner.spec(); }, ::testing::ThrowsMessage<Error>(HasSubstr("'in', which is no output argument")));
}

TEST(TunerFacade, AWisdomFileGivesTheConfigurationForThisDeviceAndSize) {
  Fixture f;
  Tuner tuner = f.make();
  const Wisdom wisdom = Wisdom::parse(R"({"format": "steer-wisdom", "version": 1, "kernel": "twice", "entries": [
    {"device": "Fake Device", "backend": "fake", "problem_size": "N=256", "time_ms": 1,
     "configuration": {"BLOCK": 32, "ITEMS": 4}},
    {"device": "Other", "backend": "fake", "problem_size": "N=64", "time_ms": 1,
     "configuration": {"BLOCK": 16, "ITEMS": 1}}]})");
  EXPECT_EQ(tuner.configuration_from(wisdom), (Configuration{{"BLOCK", 32}, {"ITEMS", 4}})) << "the nearest size";
  const RunOutput output = tuner.run(*tuner.configuration_from(wisdom));
  EXPECT_EQ(output.result.configuration, (Configuration{{"BLOCK", 32}, {"ITEMS", 4}}));
  EXPECT_EQ(tuner.configuration_from(Wisdom::parse(R"({"format": "steer-wisdom", "version": 1, "kernel": "twice",
    "entries": []})")), std::nullopt);
  const Wisdom foreign = Wisdom::parse(R"({"format": "steer-wisdom", "version": 1, "kernel": "twice", "entries": [
    {"device": "Fake Device", "backend": "fake", "problem_size": "N=64", "time_ms": 1, "configuration": {"TILE": 8}}]})");
  EXPECT_THAT([&] { tuner.configuration_from(foreign); },
              ::testing::ThrowsMessage<Error>(HasSubstr("'TILE=8' is not a configuration of the space")));
}

TEST(TunerFacade, ASpecRunsAsLoadedAtTheSizeAsked) {
  const fs::path source = fs::temp_directory_path() / ("steer_facade_" + std::to_string(getpid()) + ".cu");
  std::ofstream(source) << "__global__ void twice(const float* in, float* out) {}";
  const Spec spec = parse_spec(R"json({"name": "twice", "parameters": [{"name": "BLOCK", "values": [16, 32]}],
    "kernel": {"name": "twice", "sources": {"cuda": ")json" + source.string() + R"json("},
      "launch": {"grid": [1], "block": ["BLOCK"]},
      "arguments": [{"name": "in", "type": "float", "size": "N", "init": "iota"},
                    {"name": "out", "type": "float", "size": "N", "output": true}]},
    "sizes": {"small": {"N": 8}, "large": {"N": 64}}})json");
  Tuner tuner = Tuner::from_spec(spec, std::make_unique<FakeBackend>(), "large");
  EXPECT_EQ(tuner.problem_size().name, "large");
  EXPECT_EQ(tuner.spec().hash, spec.hash) << "the spec as loaded, its file's hash with it";
  EXPECT_THAT([&] { tuner.parameter("EXTRA", {1, 2}); },
              ::testing::ThrowsMessage<Error>(HasSubstr("runs spec 'twice' as it was loaded: change the spec instead")));
  const TuneSummary summary = tuner.searcher("exhaustive").tune({});
  EXPECT_EQ(summary.tests, 2u);
  EXPECT_EQ(summary.problem_size, "large");
  EXPECT_EQ(tuner.run({{"BLOCK", 16}}).output<float>("out")[63], 2 * 63.0f);
  EXPECT_THROW(Tuner::from_spec(spec, std::make_unique<FakeBackend>(), "huge"), SpecError);
  fs::remove(source);
}

TEST(TunerFacade, AKernelFileTellsItsLanguageByItsExtension) {
  EXPECT_EQ(Kernel::from_file("k.cl", "k").files().begin()->first, Language::OpenCL);
  EXPECT_EQ(Kernel::from_file("k.cu", "k").files().begin()->first, Language::Cuda);
  EXPECT_THAT([] { Kernel::from_file("k.c", "k"); }, ::testing::ThrowsMessage<Error>(HasSubstr(".cl (OpenCL) or .cu (CUDA)")));
  const Kernel both = Kernel::from_file("k.cl", "k").with_source(Language::Cuda, "__global__ void k() {}");
  EXPECT_EQ(both.files().size(), 1u);
  EXPECT_EQ(both.texts().size(), 1u);
}

}  // namespace
}  // namespace steer
