// The tuning loop, specified against a fake backend.
#include "steer/tuner.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <thread>
#include <utility>

#include "steer/reference.hpp"
#include "steer/store.hpp"
#include "tuner/fake_backend.hpp"
#include "tuner/six_configurations.hpp"

namespace steer {
namespace {

namespace fs = std::filesystem;

void double_input(const ReferenceInput& input, ReferenceOutputs& outputs) {
  const HostArgument& in = input.argument("in");
  const auto* x = reinterpret_cast<const float*>(in.data.data());
  auto* y = reinterpret_cast<float*>(outputs[0].data());
  for (std::size_t i = 0; i < outputs[0].size() / sizeof(float); ++i) y[i] = 2 * x[i];
}
STEER_REGISTER_REFERENCE("tuner_test_double", double_input);

std::atomic<int> g_counted_references{0};
void counted_double_input(const ReferenceInput& input, ReferenceOutputs& outputs) {
  ++g_counted_references;
  double_input(input, outputs);
}
STEER_REGISTER_REFERENCE("tuner_test_counted_double", counted_double_input);

std::int64_t define(const KernelInstance& instance, const std::string& name) {
  for (const auto& [n, v] : instance.defines) {
    if (n == name) return std::stoll(v);
  }
  throw Error("no define " + name);
}

std::int64_t define_of(const Result& result, const std::string& name) {
  for (const auto& [n, v] : result.configuration) {
    if (n == name) return v.as_int();
  }
  throw Error("no parameter " + name);
}

class TunerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("steer_tuner_test_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "kernel.cu") << "extern \"C\" __global__ void k(float* out, const float* in) {}\n";
    spec_.name = "fake";
    spec_.hash = "0123";
    spec_.space.add_parameter("A", std::vector<Value>{1, 2, 3, 4});
    spec_.space.add_parameter("B", std::vector<Value>{1, 2, 4, 8});
    spec_.space.add_constraint("A <= B");
    KernelSpec kernel;
    kernel.name = "k";
    kernel.sources[Language::Cuda] = dir_ / "kernel.cu";
    kernel.launch.grid = {"cdiv(N, B)"};
    kernel.launch.block = {"B"};
    Argument out{.name = "out", .type = ElementType::F32, .size = "N", .output = true};
    Argument in{.name = "in", .type = ElementType::F32, .size = "N"};
    in.init.kind = Initialiser::Kind::Random;
    kernel.arguments = {out, in};
    spec_.kernel = kernel;
    spec_.sizes = {ProblemSize{.name = "small", .variables = {{"N", Value(64)}}}};
    spec_.default_size = "small";
    spec_.reference.kind = Reference::Kind::Cpu;
    spec_.reference.cpu_function = "tuner_test_double";
    spec_.reference.abs_tolerance = 1e-6;
    spec_.reference.rel_tolerance = 0;
    space_.emplace(Space::build(spec_.space));
    // Faster with smaller A, then larger B: the best is A=1, B=8.
    backend_.runtime_ms = [](const KernelInstance& i) { return 10.0 * define(i, "A") - define(i, "B") + 10; };
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The search alone: the final check of the best few (its own tests below) would add launches.
  TuneSummary run(const std::string& searcher_name, TuneOptions options = {}, Store* store = nullptr,
                  std::size_t final_check = 0) {
    auto searcher = make_searcher(searcher_name, SearcherOptions{.seed = 5});
    options.run.repetitions = 3;
    options.final_check = final_check;
    return tune(spec_, *space_, backend_, *searcher, store, options);
  }

  fs::path dir_;
  Spec spec_;
  std::optional<Space> space_;
  testing::FakeBackend backend_;
};

TEST_F(TunerTest, ExhaustiveTestsEveryConfigurationOnceAndFindsTheBest) {
  TuneSummary summary = run("exhaustive");
  EXPECT_EQ(summary.tests, space_->size());
  EXPECT_EQ(summary.valid, space_->size());
  EXPECT_EQ(summary.stop_reason, "space exhausted");
  ASSERT_TRUE(summary.best);
  EXPECT_EQ(summary.best->key(), "A=1,B=8");
  EXPECT_DOUBLE_EQ(summary.best->time.median_ms, 12.0);
  std::set<std::uint64_t> run(backend_.run_order.begin(), backend_.run_order.end());
  EXPECT_EQ(run.size(), backend_.run_order.size()) << "a configuration ran twice";
}

TEST_F(TunerTest, StopsAtTheTestBudgetExactly) {
  TuneOptions options;
  options.stop.tests = 4;
  TuneSummary summary = run("random", options);
  EXPECT_EQ(summary.tests, 4u);
  EXPECT_EQ(backend_.runs.load(), 4);
  EXPECT_EQ(summary.stop_reason, "test budget reached");
}

TEST_F(TunerTest, StopsAtAFractionOfTheSpace) {
  TuneOptions options;
  options.stop.space_fraction = 0.5;  // 11 valid configurations -> ceil(5.5) = 6 tests
  TuneSummary summary = run("random", options);
  EXPECT_EQ(space_->size(), 11u);
  EXPECT_EQ(summary.tests, 6u);
}

TEST_F(TunerTest, StopsOnceTheTargetRuntimeIsReached) {
  TuneOptions options;
  options.stop.target_ms = 12.5;  // only A=1,B=8 (12 ms) qualifies; exhaustive order puts it 4th
  TuneSummary summary = run("exhaustive", options);
  EXPECT_EQ(summary.stop_reason, "target runtime reached");
  ASSERT_TRUE(summary.best);
  EXPECT_EQ(summary.best->key(), "A=1,B=8");
  EXPECT_LT(summary.tests, space_->size());
}

TEST_F(TunerTest, StopsWhenInterrupted) {
  std::atomic<bool> interrupt{false};
  TuneOptions options;
  options.interrupt = &interrupt;
  options.on_test = [&](const Result&, const TuneProgress& p) {
    if (p.tests == 3) interrupt = true;
  };
  TuneSummary summary = run("exhaustive", options);
  EXPECT_TRUE(summary.interrupted);
  EXPECT_EQ(summary.tests, 3u);
}

TEST_F(TunerTest, CompileAndLaunchFailuresAreRecordedAndTuningGoesOn) {
  backend_.compile_fails = [](const KernelInstance& i) { return define(i, "A") == 2; };
  backend_.launch_fails = [](const KernelInstance& i) { return define(i, "A") == 3; };
  TuneSummary summary = run("exhaustive");
  EXPECT_EQ(summary.tests, 11u);
  std::size_t compile_errors = 0, launch_errors = 0;
  for (const Result& r : summary.results) {
    if (r.status == Status::CompileError) {
      ++compile_errors;
      EXPECT_NE(r.message.find("rejected by the test"), std::string::npos) << "the compiler log is kept";
    }
    if (r.status == Status::LaunchError) ++launch_errors;
  }
  EXPECT_EQ(compile_errors, 3u);  // A=2: B in {2,4,8}
  EXPECT_EQ(launch_errors, 2u);   // A=3: B in {4,8}
  EXPECT_EQ(summary.failed, 5u);
  EXPECT_EQ(summary.valid, 6u);
}

TEST_F(TunerTest, WrongOutputIsInvalidWithItsLargestError) {
  backend_.wrong_output = [](const KernelInstance& i) { return define(i, "B") == 4; };
  TuneSummary summary = run("exhaustive");
  for (const Result& r : summary.results) {
    if (r.configuration[1].second.as_int() == 4) {
      EXPECT_EQ(r.status, Status::InvalidOutput) << r.key();
      EXPECT_NEAR(r.max_abs_error, 1.0, 1e-6);
      EXPECT_NE(r.message.find("output 'out'"), std::string::npos) << r.message;
    } else {
      EXPECT_EQ(r.status, Status::Ok) << r.key() << ": " << r.message;
      EXPECT_EQ(r.max_abs_error, 0.0);
    }
  }
}

TEST_F(TunerTest, LargeOutputsAreComparedOnTheDeviceWithTheVerdictsOfTheHost) {
  // 16 MiB of output: where comparing on the device starts to pay.
  spec_.sizes.push_back(ProblemSize{.name = "large", .variables = {{"N", Value(1 << 22)}}});
  spec_.default_size = "large";
  backend_.wrong_output = [](const KernelInstance& i) { return define(i, "B") == 4; };
  const TuneSummary on_host = run("exhaustive");
  EXPECT_TRUE(backend_.expected_outputs.size() == 1) << "offered, and declined by this backend";

  backend_.compares_on_device = true;
  std::vector<std::pair<bool, bool>> asked;  // read_outputs, compare_outputs
  backend_.before_run = [&](const KernelInstance&, const RunOptions& o) {
    asked.emplace_back(o.read_outputs, o.compare_outputs);
  };
  const TuneSummary on_device = run("exhaustive");
  ASSERT_EQ(backend_.expected_outputs.size(), 1u);
  EXPECT_EQ(backend_.expected_outputs[0].argument, 0u);  // `out`
  EXPECT_EQ(backend_.expected_outputs[0].bytes.size(), std::size_t{4} << 22);
  ASSERT_EQ(asked.size(), on_host.results.size());
  for (std::size_t i = 0; i < asked.size(); ++i) {
    // The first test's outputs come back as well, to check the device's comparison once.
    EXPECT_EQ(asked[i].first, i == 0) << i;
    EXPECT_TRUE(asked[i].second) << i;
  }
  EXPECT_TRUE(on_device.warnings.empty());
  ASSERT_EQ(on_device.results.size(), on_host.results.size());
  std::size_t invalid = 0;
  for (std::size_t i = 0; i < on_host.results.size(); ++i) {
    const Result& host = on_host.results[i];
    const Result& device = on_device.results[i];
    EXPECT_EQ(device.key(), host.key());
    EXPECT_EQ(device.status, host.status) << host.key();
    EXPECT_EQ(device.message, host.message) << host.key();
    EXPECT_EQ(device.max_abs_error, host.max_abs_error) << host.key();
    EXPECT_GE(device.validation_ms, 0.5) << "the device's comparison time is the test's validation";
    invalid += host.status == Status::InvalidOutput ? 1 : 0;
  }
  EXPECT_EQ(invalid, 4u);  // B=4: A in {1,2,3,4}
}

TEST_F(TunerTest, ADeviceWhoseComparisonDisagreesWithTheHostsComparesNoMore) {
  spec_.sizes.push_back(ProblemSize{.name = "large", .variables = {{"N", Value(1 << 22)}}});
  spec_.default_size = "large";
  backend_.compares_on_device = true;
  backend_.comparison_miscounts = true;
  std::vector<bool> compared;
  backend_.before_run = [&](const KernelInstance&, const RunOptions& o) { compared.push_back(o.compare_outputs); };
  const TuneSummary summary = run("exhaustive");
  ASSERT_EQ(compared.size(), summary.results.size());
  EXPECT_TRUE(compared[0]);
  for (std::size_t i = 1; i < compared.size(); ++i) EXPECT_FALSE(compared[i]) << i;
  EXPECT_EQ(summary.valid, space_->size()) << "the host's verdicts";
  ASSERT_EQ(summary.warnings.size(), 1u);
  EXPECT_NE(summary.warnings[0].find("disagreed with the host's"), std::string::npos) << summary.warnings[0];
  EXPECT_NE(summary.warnings[0].find("output 'out': on the device 1 of 4194304 elements differ"), std::string::npos)
      << summary.warnings[0];
}

TEST_F(TunerTest, OutputsAreComparedOnTheHostWhenAskedTo) {
  spec_.sizes.push_back(ProblemSize{.name = "large", .variables = {{"N", Value(1 << 22)}}});
  spec_.default_size = "large";
  backend_.compares_on_device = true;
  backend_.before_run = [&](const KernelInstance&, const RunOptions& o) {
    EXPECT_TRUE(o.read_outputs);
    EXPECT_FALSE(o.compare_outputs);
  };
  TuneOptions options;
  options.validate_on_device = false;  // steer tune --validate-on host
  options.stop.tests = 3;
  run("exhaustive", options);
  EXPECT_TRUE(backend_.expected_outputs.empty());
}

TEST_F(TunerTest, ADeviceOnTheHostsCoresHasItsOutputsComparedOnTheHost) {
  spec_.sizes.push_back(ProblemSize{.name = "large", .variables = {{"N", Value(1 << 22)}}});
  spec_.default_size = "large";
  backend_.compares_on_device = true;
  backend_.on_host_cores = true;  // PoCL: reading back is a copy in memory
  TuneOptions options;
  options.stop.tests = 2;
  run("exhaustive", options);
  EXPECT_TRUE(backend_.expected_outputs.empty());
}

TEST_F(TunerTest, SmallOutputsAreComparedOnTheHost) {
  backend_.compares_on_device = true;
  backend_.before_run = [&](const KernelInstance&, const RunOptions& o) {
    EXPECT_TRUE(o.read_outputs);
    EXPECT_FALSE(o.compare_outputs);
  };
  const TuneSummary summary = run("exhaustive");
  EXPECT_TRUE(backend_.expected_outputs.empty()) << "64 floats are not worth a comparison on the device";
  EXPECT_EQ(summary.valid, space_->size());
}

TEST_F(TunerTest, CompilingAheadChangesNothingButTheSchedule) {
  TuneOptions ahead;
  ahead.compile_threads = 3;
  TuneSummary with = run("random", ahead);
  std::vector<std::uint64_t> order_with = backend_.run_order;
  backend_.run_order.clear();
  TuneOptions inline_compile;
  inline_compile.compile_ahead = false;
  TuneSummary without = run("random", inline_compile);
  EXPECT_EQ(order_with, backend_.run_order) << "same seed, same order";
  ASSERT_EQ(with.results.size(), without.results.size());
  for (std::size_t i = 0; i < with.results.size(); ++i) {
    EXPECT_EQ(with.results[i].key(), without.results[i].key());
    EXPECT_EQ(with.results[i].status, without.results[i].status);
  }
}

// While a searcher that chooses one test at a time waits for a result, its guesses of what
// comes next compile on the pool's idle threads; a guess it proposes is not compiled again.
TEST_F(TunerTest, GuessesCompileOnIdleThreadsAndAreNotCompiledAgainWhenProposed) {
  for (const bool wrong : {false, true}) {
    testing_support::DescendingOneAtATime searcher(wrong);
    TuneOptions options;
    options.compile_threads = 4;
    options.final_check = 0;
    backend_.compiles = 0;
    const TuneSummary summary = tune(spec_, *space_, backend_, searcher, nullptr, options);
    ASSERT_EQ(summary.tests, space_->size());
    std::vector<ConfigIndex> descending;
    for (ConfigIndex c = space_->size(); c > 0; --c) descending.push_back(c - 1);
    EXPECT_EQ(searcher.observed, descending) << "guesses change no test";
    EXPECT_GT(summary.guessed, 0u);
    EXPECT_EQ(summary.guesses_tested, wrong ? 1u : summary.guessed) << "every right guess was proposed";
    EXPECT_EQ(static_cast<std::uint64_t>(backend_.compiles.load()), summary.tests + summary.guessed - summary.guesses_tested)
        << "each configuration compiled once, and each guess never proposed once more";
  }
}

TEST_F(TunerTest, NoGuessesWithOneCompileThread) {
  testing_support::DescendingOneAtATime searcher;
  TuneOptions options;
  options.compile_threads = 1;
  options.final_check = 0;
  const TuneSummary summary = tune(spec_, *space_, backend_, searcher, nullptr, options);
  EXPECT_EQ(summary.tests, space_->size());
  EXPECT_EQ(summary.guessed, 0u);
  EXPECT_EQ(searcher.guesses_asked, 0u);
}

// A searcher may spread its own work over the cores that neither the loop's thread nor the
// compiles (the next proposal's and up to `guesses` guesses) keep busy, at most 8; none on a
// device that runs on the host's cores, whose measurements they would disturb.
TEST_F(TunerTest, ASearcherIsLentTheCoresTheCompilesLeaveIdle) {
  TuneOptions options;
  options.compile_threads = 4;
  options.final_check = 0;
  testing_support::DescendingOneAtATime searcher;
  tune(spec_, *space_, backend_, searcher, nullptr, options);
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_EQ(searcher.threads_lent, std::clamp<std::size_t>(cores > 5 ? cores - 5 : 1, 1, 8));

  backend_.on_host_cores = true;
  testing_support::DescendingOneAtATime on_host;
  tune(spec_, *space_, backend_, on_host, nullptr, options);
  EXPECT_EQ(on_host.threads_lent, 0u) << "not lent";
}

TEST_F(TunerTest, ADeviceOnTheHostCoresCompilesInlineUnlessThreadsAreAskedFor) {
  backend_.on_host_cores = true;
  EXPECT_FALSE(run("random").compiled_ahead) << "compilers would steal the device's cores";
  TuneOptions options;
  options.compile_threads = 2;
  EXPECT_TRUE(run("random", options).compiled_ahead);
  backend_.on_host_cores = false;
  EXPECT_TRUE(run("random").compiled_ahead);
}

TEST_F(TunerTest, GeometryThatDoesNotEvaluateIsAFailedTestNotACrash) {
  spec_.kernel->launch.block = {"B - 1"};  // 0 threads when B == 1
  TuneSummary summary = run("exhaustive");
  std::size_t bad = 0;
  for (const Result& r : summary.results) {
    if (r.configuration[1].second.as_int() == 1) {
      ++bad;
      EXPECT_EQ(r.status, Status::LaunchError);
      EXPECT_NE(r.message.find("launch geometry"), std::string::npos) << r.message;
    }
  }
  EXPECT_EQ(bad, 1u);
  EXPECT_EQ(summary.tests, 11u);
}

TEST_F(TunerTest, ResumesFromTheStoreWithoutRunningMeasuredConfigurationsAgain) {
  fs::path db = dir_ / "results.db";
  {
    Store store = Store::open(db);
    TuneOptions options;
    options.stop.tests = 4;
    run("random", options, &store);
  }
  EXPECT_EQ(backend_.runs.load(), 4);
  Store store = Store::open(db);
  TuneSummary summary = run("random", {}, &store);
  EXPECT_EQ(summary.tests, 11u);
  EXPECT_EQ(summary.resumed, 4u);
  EXPECT_EQ(backend_.runs.load(), 11) << "only the 7 new configurations ran";
  auto tunings = store.tunings();
  ASSERT_EQ(tunings.size(), 1u);
  EXPECT_EQ(store.results(tunings[0].first).size(), 11u);
}

// What makes a tuning the same (TuneOptions::fresh, ::tuning; tuning_content.hpp): a store
// resumes a tuning only when nothing its results depend on changed.
class StoreKeyTest : public TunerTest {
 protected:
  // A run of `tests` random tests on the store, with warnings collected.
  TuneSummary run_stored(std::uint64_t tests, TuneOptions options = {}) {
    Store store = Store::open(dir_ / "results.db");
    options.stop.tests = tests;
    options.on_warning = [this](const std::string& warning) { warnings_.push_back(warning); };
    return run("random", options, &store);
  }
  std::size_t tunings() const { return Store::open(dir_ / "results.db").tunings().size(); }
  std::string all_warnings() const {
    std::string text;
    for (const std::string& warning : warnings_) text += warning + "\n";
    return text;
  }
  std::vector<std::string> warnings_;
};

TEST_F(StoreKeyTest, ADescriptionTheFilesLayoutOrSpacingDoesNotStartANewTuning) {
  run_stored(4);
  spec_.description = "now with a description";
  spec_.hash = "another file text";  // the spec file's bytes changed
  spec_.space = SpaceDefinition();
  spec_.space.add_parameter("A", std::vector<Value>{1, 2, 3, 4});
  spec_.space.add_parameter("B", std::vector<Value>{1, 2, 4, 8});
  spec_.space.add_constraint("A<=B");  // "A <= B" before
  spec_.sizes[0].flops = 128;          // a work rate, computed when reported
  TuneSummary summary = run_stored(6);
  EXPECT_EQ(summary.resumed, 4u);
  EXPECT_FALSE(summary.new_tuning);
  EXPECT_EQ(tunings(), 1u);
  EXPECT_EQ(all_warnings(), "");
}

TEST_F(StoreKeyTest, AChangedKernelSourceStartsANewTuningAndSaysWhichAndWhy) {
  TuneSummary first = run_stored(4);
  EXPECT_TRUE(first.new_tuning);
  std::ofstream(dir_ / "kernel.cu") << "extern \"C\" __global__ void k(float* out, const float* in) { /* v2 */ }\n";
  TuneSummary second = run_stored(4);
  EXPECT_EQ(second.resumed, 0u) << "the old timings are not served";
  EXPECT_TRUE(second.new_tuning);
  EXPECT_NE(second.tuning, first.tuning);
  EXPECT_EQ(tunings(), 2u);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find(fmt::format("this run starts tuning {}", second.tuning)), std::string::npos) << warnings_[0];
  EXPECT_NE(warnings_[0].find(fmt::format("tuning {} (4 tests): kernel source changed", first.tuning)),
            std::string::npos)
      << warnings_[0];
  EXPECT_EQ(second.warnings, warnings_) << "the summary repeats it";
  EXPECT_EQ(run_stored(6).resumed, 4u) << "the new tuning is continued";
}

TEST_F(StoreKeyTest, AChangedIncludeInputFileReferenceOrConstraintStartsANewTuning) {
  std::ofstream(dir_ / "kernel.cu") << "#include \"common.h\"\nextern \"C\" __global__ void k(float* out, const float* in) {}\n";
  std::ofstream(dir_ / "common.h") << "#define SCALE 2\n";
  std::vector<float> input(64, 1.0f);
  auto write_input = [&] {
    std::ofstream(dir_ / "in.bin", std::ios::binary)
        .write(reinterpret_cast<const char*>(input.data()), static_cast<std::streamsize>(input.size() * sizeof(float)));
  };
  write_input();
  spec_.kernel->arguments[1].init = Initialiser{.kind = Initialiser::Kind::File, .file = dir_ / "in.bin"};
  run_stored(2);
  const std::vector<std::pair<std::string, std::function<void()>>> changes = {
      {"include common.h changed", [&] { std::ofstream(dir_ / "common.h") << "#define SCALE 3\n"; }},
      {"input data changed", [&] { input[5] = 7.0f, write_input(); }},
      {"reference changed", [&] { spec_.reference.abs_tolerance = 1e-3; }},
      {"constraints changed", [&] { spec_.space.add_constraint("A != 3"); }},
  };
  std::size_t expected_tunings = 1;
  for (const auto& [difference, change] : changes) {
    change();
    space_.emplace(Space::build(spec_.space));
    warnings_.clear();
    TuneSummary summary = run_stored(2);
    EXPECT_EQ(summary.resumed, 0u) << difference;
    EXPECT_EQ(tunings(), ++expected_tunings) << difference;
    EXPECT_NE(all_warnings().find(difference), std::string::npos) << all_warnings();
    EXPECT_EQ(run_stored(2).resumed, 2u) << difference << ": unchanged again, it resumes";
  }
}

TEST_F(StoreKeyTest, FreshStartsANewTuningThatLaterRunsContinue) {
  const TuneSummary first = run_stored(4);
  const TuneSummary fresh = run_stored(4, TuneOptions{.fresh = true});
  EXPECT_EQ(fresh.resumed, 0u);
  EXPECT_TRUE(fresh.new_tuning);
  EXPECT_NE(fresh.tuning, first.tuning);
  EXPECT_EQ(all_warnings(), "") << "the same key: nothing differs to warn about";
  const TuneSummary later = run_stored(5);
  EXPECT_EQ(later.tuning, fresh.tuning);
  EXPECT_EQ(later.resumed, 4u);
  EXPECT_EQ(Store::open(dir_ / "results.db").count(first.tuning), 4u) << "the older tuning keeps its tests";
}

TEST_F(StoreKeyTest, ATuningOfAnOlderSteerIsNotResumedButCanBeContinuedByName) {
  std::int64_t legacy = 0;
  {
    // As Steer before schema 3 keyed it: by the spec file's hash, with nothing of the sources.
    Store store = Store::open(dir_ / "results.db");
    legacy = store.tuning(TuningKey{"fake", "0123", "Fake Device", "fake", "small"});
    Result stored;
    stored.configuration = {{"A", Value(1)}, {"B", Value(1)}};
    stored.status = Status::Ok;
    stored.time = TimingStats::from_samples({3.0});
    store.append(legacy, stored);
  }
  TuneSummary summary = run_stored(11);
  EXPECT_EQ(summary.resumed, 0u);
  EXPECT_NE(all_warnings().find(fmt::format("tuning {} (1 tests): it was recorded by an older Steer", legacy)),
            std::string::npos)
      << all_warnings();
  EXPECT_NE(all_warnings().find("--tuning ID"), std::string::npos);

  warnings_.clear();
  TuneOptions continued;
  continued.tuning = legacy;
  summary = run_stored(11, continued);
  EXPECT_EQ(summary.tuning, legacy);
  EXPECT_EQ(summary.resumed, 1u);
  EXPECT_NE(all_warnings().find("continuing tuning"), std::string::npos) << all_warnings();

  std::int64_t elsewhere = 0;
  {
    Store store = Store::open(dir_ / "results.db");
    elsewhere = store.tuning(TuningKey{"fake", "0123", "Another Device", "fake", "small"});
  }
  continued.tuning = elsewhere;
  try {
    run_stored(1, continued);
    FAIL() << "continued a tuning of another device";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("on Another Device"), std::string::npos) << e.what();
  }
}

TEST_F(TunerTest, RecordsTheDeviceConditionsOfEveryTestAndWarnsOnceWhenTheGpuThrottles) {
  // Configurations with B = 8 draw the most power: the GPU holds them at its limit, clocks down.
  backend_.conditions = [](const KernelInstance& i) {
    const bool capped = define(i, "B") == 8;
    return DeviceConditions{.sm_clock_mhz = capped ? 1410.0 : 1980.0, .memory_clock_mhz = 3201, .power_watts =
                                capped ? 699.0 : 450.0, .power_limit_watts = 700, .temperature_c = 60,
                            .throttle = capped ? "power cap" : ""};
  };
  std::vector<std::string> said;
  TuneOptions options;
  options.on_warning = [&](const std::string& warning) { said.push_back(warning); };
  const fs::path db = dir_ / "results.db";
  TuneSummary summary;
  {
    Store store = Store::open(db);
    summary = run("exhaustive", options, &store);
  }
  // Exhaustive order: A=1 with B = 1, 2, 4, 8 comes first; the first capped test is the 4th.
  // The clock drop is said once the run has a usual clock (5 readings): at the next capped test.
  ASSERT_EQ(said.size(), 2u) << "each kind said once, when first seen";
  EXPECT_EQ(said[0].rfind("the GPU ran at its power limit in test 4 (A=1,B=8): 699 W of 700 W (power cap):", 0), 0u)
      << said[0];
  EXPECT_EQ(said[1].rfind("the GPU's SM clock was 1410 MHz in test 7 (A=2,B=8), below the run's usual 1980 MHz "
                          "(power cap):",
                          0),
            0u)
      << said[1];
  // Four capped tests in all (A = 1..4 with B = 8): counted at the end.
  EXPECT_NE(std::find(summary.warnings.begin(), summary.warnings.end(),
                      "the GPU ran at its power limit in 4 of 11 tests (steer export shows each test's conditions)"),
            summary.warnings.end());
  for (const Result& r : summary.results) ASSERT_TRUE(r.conditions);
  Store store = Store::open(db);
  const std::vector<Result> stored = store.results(store.tunings().at(0).first);
  ASSERT_EQ(stored.size(), 11u);
  for (const Result& r : stored) {
    ASSERT_TRUE(r.conditions) << r.key();
    EXPECT_EQ(r.conditions->sm_clock_mhz, define_of(r, "B") == 8 ? 1410.0 : 1980.0);
  }
}

TEST_F(TunerTest, WarnsWhenOtherProcessesLoadTheCoresOfACpuDevice) {
  backend_.on_host_cores = true;
  // The backend's reading, for every test: the executor's own, from /proc around a fake run
  // that takes no time, would be the machine's load of the moment.
  backend_.conditions = [](const KernelInstance& i) -> std::optional<DeviceConditions> {
    return DeviceConditions{.other_load = define(i, "A") == 2 ? 0.6 : 0.0};
  };
  TuneSummary summary = run("exhaustive");
  ASSERT_FALSE(summary.warnings.empty());
  EXPECT_EQ(summary.warnings[0].rfind("other processes kept 60 % of the device's CPU cores busy during test 5 (A=2,B=2)",
                                      0),
            0u)
      << summary.warnings[0];
}

TEST_F(TunerTest, ReportsTheWallTimeSplitAndPerTestOverhead) {
  TuneSummary summary = run("exhaustive");
  EXPECT_GT(summary.wall_s, 0);
  EXPECT_GE(summary.wall_s + 1e-9, summary.setup_s + summary.compile_wait_s + summary.run_s + summary.validation_s);
  EXPECT_NEAR(summary.compile_cpu_s, 11 * 2.0 / 1e3, 1e-9) << "the backend's own compile times are summed";
  for (const Result& r : summary.results) EXPECT_GE(r.overhead_ms, 0);
  EXPECT_EQ(summary.device, "Fake Device");
  EXPECT_EQ(summary.problem_size, "small");
}

TEST_F(TunerTest, CountersAskedForByTheRunAreCollectedOnEveryTestAndTheirCostReported) {
  TuneOptions options;
  options.run.measure.counters = true;
  options.run.measure.metrics = {"smsp__inst_executed.sum"};
  std::vector<std::string> warnings;
  options.on_warning = [&](const std::string& w) { warnings.push_back(w); };
  TuneSummary summary = run("exhaustive", options);
  for (const Result& r : summary.results) {
    EXPECT_EQ(r.counters.count("smsp__inst_executed.sum"), 1u);
    EXPECT_EQ(r.profiling_passes, 2);
  }
  EXPECT_EQ(summary.profiled, summary.tests);
  EXPECT_DOUBLE_EQ(summary.mean_passes, 2);
  EXPECT_NEAR(summary.median_pass_overhead_ms, 10, 1e-9) << "per pass: profiling_ms / passes - kernel time";
  EXPECT_EQ(warnings.size(), 1u) << "a warning is said once, not once per test";
  EXPECT_EQ(summary.warnings, warnings);
  for (const MeasureRequest& m : backend_.measured) EXPECT_EQ(m.metrics, options.run.measure.metrics);
}

TEST_F(TunerTest, TheEnergyWindowAskedForIsTheOneMeasured) {
  // Found on the H200: searchers that ask for nothing carry the default 0.5 s window, which
  // overrode a shorter --energy-window.
  backend_.joules = [](const KernelInstance&) { return 1.0; };
  TuneOptions options;
  options.objective = Objective::parse("energy");
  options.run.measure.energy_window_s = 0.1;
  run("random", options);
  ASSERT_FALSE(backend_.measured.empty());
  for (const MeasureRequest& m : backend_.measured) EXPECT_DOUBLE_EQ(m.energy_window_s, 0.1);
  options.run.measure.energy_window_s = 2.0;
  backend_.measured.clear();
  run("random", options);
  for (const MeasureRequest& m : backend_.measured) EXPECT_DOUBLE_EQ(m.energy_window_s, 2.0);
}

TEST_F(TunerTest, AnEnergyObjectiveMeasuresEnergyAndPicksTheMostFrugalNotTheFastest) {
  // Energy falls with A (the opposite of time): the frugal configurations are the slow ones.
  backend_.joules = [](const KernelInstance& i) { return 10.0 - define(i, "A") + 0.1 * define(i, "B"); };
  TuneOptions options;
  options.objective = Objective::parse("energy");
  TuneSummary summary = run("exhaustive", options);
  for (const MeasureRequest& m : backend_.measured) EXPECT_TRUE(m.energy) << "the objective asks for energy";
  ASSERT_TRUE(summary.best);
  EXPECT_EQ(define_of(*summary.best, "A"), 4);
  EXPECT_EQ(define_of(*summary.best, "B"), 4);
  EXPECT_EQ(summary.objective, "energy");
  EXPECT_DOUBLE_EQ(summary.best_objective, 10.0 - 4 + 0.4);
  // Every test has energy, so the Pareto front runs from the fastest to the most frugal.
  ASSERT_FALSE(summary.pareto.empty());
  EXPECT_EQ(define_of(summary.pareto.front(), "A"), 1);
  EXPECT_EQ(define_of(summary.pareto.back(), "A"), 4);
  for (std::size_t i = 1; i < summary.pareto.size(); ++i) {
    EXPECT_GT(summary.pareto[i].time.median_ms, summary.pareto[i - 1].time.median_ms);
    EXPECT_LT(summary.pareto[i].energy->joules_per_launch, summary.pareto[i - 1].energy->joules_per_launch);
  }
}

TEST_F(TunerTest, SearchersRankByTheObjectiveScore) {
  backend_.joules = [](const KernelInstance& i) { return 10.0 - define(i, "A"); };
  TuneOptions options;
  options.objective = Objective::parse("energy");
  std::vector<Result> observed;
  options.on_test = [&](const Result& r, const TuneProgress&) { observed.push_back(r); };
  run("exhaustive", options);
  for (const Result& r : observed) {
    ASSERT_TRUE(r.score);
    EXPECT_DOUBLE_EQ(*r.score, r.energy->joules_per_launch);
  }
}

// Tests the configurations in index order, one at a time, and explains after each.
class ExplainingSearcher final : public Searcher {
 public:
  std::string name() const override { return "explaining"; }
  void start(const Space& space) override { size_ = space.size(); }
  std::vector<Proposal> propose(std::size_t) override {
    if (waiting_ || next_ == size_) return {};
    waiting_ = true;
    return {{next_++, {}}};
  }
  void observe(const Result& result) override {
    waiting_ = false;
    Explanation e;
    e.profiled = result.config_index;
    e.bottlenecks = {{"dram_read", 0.5}};
    if (next_ < size_) e.next = {next_};
    explanations_.push_back(e);
  }
  std::vector<Explanation> take_explanations() override { return std::exchange(explanations_, {}); }

 private:
  std::uint64_t size_ = 0, next_ = 0;
  bool waiting_ = false;
  std::vector<Explanation> explanations_;
};

// Asks for counters at every test, as a wish (optional) or a need.
class CounterAskingSearcher final : public Searcher {
 public:
  explicit CounterAskingSearcher(bool optional) : optional_(optional) {}
  std::string name() const override { return "counter-asking"; }
  void start(const Space& space) override { size_ = space.size(); }
  std::vector<Proposal> propose(std::size_t) override {
    if (waiting_ || next_ == size_) return {};
    waiting_ = true;
    Proposal proposal{next_++, {}};
    proposal.measure.counters = true;
    proposal.measure.counters_optional = optional_;
    return {proposal};
  }
  void observe(const Result& result) override {
    waiting_ = false;
    observed.push_back(result);
  }
  std::vector<Result> observed;

 private:
  bool optional_;
  std::uint64_t size_ = 0, next_ = 0;
  bool waiting_ = false;
};

TEST_F(TunerTest, CountersASearcherOnlyWishesForAreLeftOutWhereTheyCannotBeCollected) {
  int refused = 0;
  backend_.before_run = [&](const KernelInstance&, const RunOptions& options) {
    if (options.measure.counters) {
      ++refused;
      throw MeasurementUnavailable("hardware counters cannot be collected: ERR_NVGPUCTRPERM");
    }
  };
  TuneOptions options;
  options.stop.tests = 4;
  options.run.measure.energy = true;
  std::vector<std::string> warnings;
  options.on_warning = [&](const std::string& warning) { warnings.push_back(warning); };
  CounterAskingSearcher wishing(true);
  const TuneSummary summary = tune(spec_, *space_, backend_, wishing, nullptr, options);
  EXPECT_EQ(summary.valid, 4u) << "every test ran, without counters";
  EXPECT_EQ(refused, 1) << "tried once, then no more";
  ASSERT_EQ(wishing.observed.size(), 4u);
  for (const Result& result : wishing.observed) {
    EXPECT_TRUE(result.counters.empty());
    EXPECT_TRUE(result.energy) << "the energy the failed profile left out was measured";
  }
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("ERR_NVGPUCTRPERM"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("without counters"), std::string::npos) << warnings[0];

  CounterAskingSearcher needing(false);
  EXPECT_THROW(tune(spec_, *space_, backend_, needing, nullptr, options), MeasurementUnavailable)
      << "counters a searcher needs end the run with the reason";
  options.run.measure.counters = true;  // the run's own counters are needed, whatever the searcher says
  CounterAskingSearcher wishing_again(true);
  EXPECT_THROW(tune(spec_, *space_, backend_, wishing_again, nullptr, options), MeasurementUnavailable);
}

TEST_F(TunerTest, ExplanationsArriveAfterTheTestTheyFollow) {
  TuneOptions options;
  options.run.repetitions = 3;
  options.stop.tests = 3;
  std::vector<std::string> events;
  options.on_test = [&](const Result& r, const TuneProgress&) { events.push_back(fmt::format("test {}", r.config_index)); };
  options.on_explanation = [&](const Explanation& e) {
    events.push_back(fmt::format("explain {} next {}", e.profiled, e.next.empty() ? -1 : static_cast<int>(e.next[0])));
    EXPECT_EQ(describe(e, *space_).rfind("profiled A=", 0), 0u) << describe(e, *space_);
  };
  ExplainingSearcher searcher;
  tune(spec_, *space_, backend_, searcher, nullptr, options);
  EXPECT_EQ(events, (std::vector<std::string>{"test 0", "explain 0 next 1", "test 1", "explain 1 next 2", "test 2",
                                              "explain 2 next 3"}));
}

TEST_F(TunerTest, TheFinalAnswerMeasuresTheBestFewAgainInterleavedAndSaysWhichAreTied) {
  // A=1, B=8 (12 ms) is the fastest, then A=1, B=4 (16 ms) and A=1, B=2 (18 ms).
  TuneOptions options;
  options.final_rounds = 2;
  TuneSummary summary = run("exhaustive", options, nullptr, 3);
  ASSERT_EQ(summary.finalists.size(), 3u);
  EXPECT_EQ(summary.tests, 11u) << "the re-measurements are not tests";
  EXPECT_EQ(backend_.runs.load(), 11 + 3 * 2) << "three configurations, two rounds each";
  // Interleaved: round 1 starts with the first, round 2 with the second.
  const std::vector<std::uint64_t> tail(backend_.run_order.end() - 6, backend_.run_order.end());
  EXPECT_EQ(tail[0], tail[5]);
  EXPECT_EQ(tail[1], tail[3]);
  EXPECT_EQ(tail[2], tail[4]);
  EXPECT_EQ(summary.finalists[0].result.key(), "A=1,B=8");
  EXPECT_EQ(summary.finalists[0].result.time.samples_ms.size(), 6u) << "3 launches in each of 2 rounds";
  EXPECT_EQ(summary.best->key(), "A=1,B=8");
  for (const auto& f : summary.finalists) {
    EXPECT_LE(f.low_ms, f.result.time.median_ms);
    EXPECT_GE(f.high_ms, f.result.time.median_ms);
  }
  EXPECT_TRUE(summary.finalists[0].tied);
  EXPECT_FALSE(summary.finalists[1].tied) << "the fake backend's times do not vary: 12 and 16 ms are apart";

  // Times that vary: every A=1 launch takes 11 or 17 ms in turn, so those configurations
  // cannot be told apart.
  int launch = 0;
  backend_.runtime_ms = [&launch](const KernelInstance& i) {
    const double base = 10.0 * define(i, "A") - define(i, "B") + 10;
    return define(i, "A") == 1 ? 12.0 + ((launch++ % 2) ? 5.0 : -1.0) : base;
  };
  summary = run("exhaustive", options, nullptr, 3);
  ASSERT_GE(summary.finalists.size(), 2u);
  EXPECT_TRUE(summary.finalists[1].tied) << summary.finalists[1].result.key();

  // Off for 0 or 1, and in a replay.
  EXPECT_TRUE(run("exhaustive", options, nullptr, 1).finalists.empty());
}

TEST_F(TunerTest, UnderAnEnergyObjectiveTheFinalAnswerMeasuresEnergyAgainSoALuckyReadingLoses) {
  // Energy falls with A (10 - A J; A=4, B=4 and A=4, B=8 use the least). A=2, B=2 reads 5 J
  // once, by luck, and 8 J every time after.
  std::map<std::uint64_t, int> readings;
  backend_.joules = [&readings](const KernelInstance& i) {
    const int reading = readings[i.config_index]++;
    if (define(i, "A") == 2 && define(i, "B") == 2) return reading == 0 ? 5.0 : 8.0;
    return 10.0 - static_cast<double>(define(i, "A"));
  };
  TuneOptions options;
  options.objective = Objective::parse("energy");
  options.run.measure.energy_window_s = 0.2;
  TuneSummary summary = run("exhaustive", options, nullptr, 3);
  EXPECT_EQ(summary.tests, space_->size()) << "the re-measurements are not tests";
  ASSERT_EQ(backend_.measured.size(), space_->size() + 3 * 3) << "three finalists, three rounds";
  for (std::size_t i = space_->size(); i < backend_.measured.size(); ++i) {
    EXPECT_TRUE(backend_.measured[i].energy) << "each round measures an energy window";
    EXPECT_DOUBLE_EQ(backend_.measured[i].energy_window_s, 0.2) << "the run's window";
    EXPECT_FALSE(backend_.measured[i].counters);
  }
  ASSERT_EQ(summary.finalists.size(), 3u);
  ASSERT_TRUE(summary.best);
  EXPECT_EQ(define_of(*summary.best, "A"), 4) << "the lucky 5 J reading is not the answer";
  ASSERT_TRUE(summary.best->energy);
  EXPECT_DOUBLE_EQ(summary.best->energy->joules_per_launch, 6.0);
  EXPECT_DOUBLE_EQ(summary.best_objective, 6.0);
  EXPECT_EQ(summary.finalists[0].result.time.samples_ms.size(), 9u) << "3 launches in each of 3 rounds";
  EXPECT_DOUBLE_EQ(summary.finalists[0].score, 6.0);
  EXPECT_TRUE(summary.finalists[1].tied) << "both A=4 configurations use 6 J";
  const TuneSummary::Finalist& lucky = summary.finalists.back();
  EXPECT_EQ(lucky.result.key(), "A=2,B=2");
  EXPECT_DOUBLE_EQ(lucky.score, 8.0);
  EXPECT_DOUBLE_EQ(lucky.low_score, 8.0);
  EXPECT_DOUBLE_EQ(lucky.high_score, 8.0);
  EXPECT_FALSE(lucky.tied);

  // The energies of one configuration vary from round to round: the median round's is the
  // answer's, and the interval spans the rounds. A=4, B=8 reads 7, 5 and 6 J after its first.
  readings.clear();
  backend_.joules = [&readings](const KernelInstance& i) {
    const int reading = readings[i.config_index]++;
    if (define(i, "A") == 4 && define(i, "B") == 8) return std::vector<double>{6.0, 7.0, 5.0, 6.5}[reading];
    return 10.0 - static_cast<double>(define(i, "A"));
  };
  backend_.measured.clear();
  summary = run("exhaustive", options, nullptr, 2);
  ASSERT_EQ(summary.finalists.size(), 2u);
  const auto varied = std::find_if(summary.finalists.begin(), summary.finalists.end(),
                                   [](const auto& f) { return f.result.key() == "A=4,B=8"; });
  ASSERT_NE(varied, summary.finalists.end());
  ASSERT_TRUE(varied->result.energy);
  EXPECT_DOUBLE_EQ(varied->result.energy->joules_per_launch, 6.5) << "the median of 7, 5 and 6.5";
  EXPECT_DOUBLE_EQ(varied->score, 6.5);
  EXPECT_DOUBLE_EQ(varied->low_score, 5.0);
  EXPECT_DOUBLE_EQ(varied->high_score, 7.0);
  EXPECT_EQ(summary.best->key(), "A=4,B=4") << "6 J against a median of 6.5 J";
  EXPECT_TRUE(varied->tied) << "its rounds reach down to 5 J";
}

TEST_F(TunerTest, ATestSlowerThanTheFastestIsTimedForAboutWhatTheFastestTookInFull) {
  // Exhaustive order: A=1 B=1 (19 ms), A=1 B=2 (18), A=1 B=4 (16), A=1 B=8 (12), A=2 B=2 (28),
  // ...; 3 launches a test. Each test's cap is 2 x the fastest so far x 3 launches.
  std::vector<double> caps;
  backend_.before_run = [&](const KernelInstance&, const RunOptions& options) { caps.push_back(options.max_total_ms); };
  TuneOptions options;
  options.stop.tests = 6;
  run("exhaustive", options);
  EXPECT_EQ(caps, (std::vector<double>{0, 2 * 19 * 3, 2 * 18 * 3, 2 * 16 * 3, 2 * 12 * 3, 2 * 12 * 3}))
      << "no cap before a valid test; then the fastest so far sets it";

  // A failure sets nothing; a cap of the run's own that is smaller wins; the final check
  // times the finalists in full (the run's own cap only).
  backend_.launch_fails = [](const KernelInstance& i) { return define(i, "B") == 1; };
  caps.clear();
  options.run.max_total_ms = 100;
  run("exhaustive", options, nullptr, 2);
  const std::vector<double> search(caps.begin(), caps.begin() + 6);
  EXPECT_EQ(search, (std::vector<double>{100, 100, 100, 2 * 16 * 3, 2 * 12 * 3, 2 * 12 * 3}));
  ASSERT_EQ(caps.size(), 6u + 2 * 3) << "two finalists, three rounds";
  for (std::size_t i = 6; i < caps.size(); ++i) EXPECT_EQ(caps[i], 100) << i;

  // Off at 0.
  caps.clear();
  options.max_test_relative = 0;
  options.run.max_total_ms = 0;
  run("exhaustive", options);
  EXPECT_EQ(caps, std::vector<double>(6, 0.0));
}

TEST_F(TunerTest, TheCpuReferenceIsComputedOncePerContentAndThenReadFromTheCache) {
  const fs::path cache = dir_ / "cache";
  setenv("STEER_CACHE_DIR", cache.c_str(), 1);
  setenv("STEER_REFERENCE_CACHE_MIN_S", "0", 1);  // this one is quick: keep it anyway
  spec_.reference.cpu_function = "tuner_test_counted_double";
  TuneOptions options;
  options.stop.tests = 2;
  g_counted_references = 0;
  EXPECT_EQ(run("exhaustive", options).valid, 2u);
  EXPECT_EQ(run("exhaustive", options).valid, 2u) << "validated against the cached outputs";
  EXPECT_EQ(g_counted_references.load(), 1);
  // Other inputs (another seed of the random input) are other content: computed again.
  spec_.kernel->arguments[1].init.seed = 99;
  EXPECT_EQ(run("exhaustive", options).valid, 2u);
  EXPECT_EQ(g_counted_references.load(), 2);
  // A damaged cache file is computed again, not trusted.
  for (const auto& file : fs::directory_iterator(cache / "references")) std::ofstream(file.path()) << "garbage";
  EXPECT_EQ(run("exhaustive", options).valid, 2u);
  EXPECT_EQ(g_counted_references.load(), 3);
  setenv("STEER_REFERENCE_CACHE", "off", 1);
  EXPECT_EQ(run("exhaustive", options).valid, 2u);
  EXPECT_EQ(g_counted_references.load(), 4);
  unsetenv("STEER_REFERENCE_CACHE");
  unsetenv("STEER_REFERENCE_CACHE_MIN_S");
  unsetenv("STEER_CACHE_DIR");
}

TEST_F(TunerTest, TheCachedCpuReferenceFollowsTheApplicationsMemoryNotJustItsShape) {
  // The tuning's key leaves out the values of a buffer bound to the application's memory;
  // the reference cache must not, or a second call with other data would read the first's.
  const fs::path cache = dir_ / "cache";
  setenv("STEER_CACHE_DIR", cache.c_str(), 1);
  setenv("STEER_REFERENCE_CACHE_MIN_S", "0", 1);
  spec_.reference.cpu_function = "tuner_test_counted_double";
  std::vector<float> input(64, 1.0f);
  spec_.kernel->arguments[1].init = Initialiser{.kind = Initialiser::Kind::Memory,
                                                .memory = std::as_bytes(std::span(input))};
  TuneOptions options;
  options.stop.tests = 2;
  g_counted_references = 0;
  EXPECT_EQ(run("exhaustive", options).valid, 2u);
  EXPECT_EQ(run("exhaustive", options).valid, 2u);
  EXPECT_EQ(g_counted_references.load(), 1) << "the same memory: read from the cache";
  input[5] = 7.0f;
  EXPECT_EQ(run("exhaustive", options).valid, 2u);
  EXPECT_EQ(g_counted_references.load(), 2) << "other values in the same memory: computed again";
  unsetenv("STEER_REFERENCE_CACHE_MIN_S");
  unsetenv("STEER_CACHE_DIR");
}

TEST_F(TunerTest, ResumingWithCountersMeasuresAgainTheStoredTestsThatLackThem) {
  fs::path db = dir_ / "results.db";
  {
    Store store = Store::open(db);
    TuneOptions options;
    options.stop.tests = 4;
    run("exhaustive", options, &store);
  }
  Store store = Store::open(db);
  TuneOptions options;
  options.run.measure.counters = true;
  TuneSummary summary = run("exhaustive", options, &store);
  EXPECT_EQ(summary.resumed, 0u) << "the 4 stored tests had no counters";
  EXPECT_EQ(backend_.runs.load(), 4 + 11);
  const auto tunings = store.tunings();
  ASSERT_EQ(tunings.size(), 1u);
  std::vector<Result> stored = store.results(tunings[0].first);
  ASSERT_EQ(stored.size(), 11u) << "replaced, not duplicated";
  for (const Result& r : stored) {
    EXPECT_FALSE(r.counters.empty()) << r.key();
    EXPECT_EQ(r.profiling_passes, 2);
  }
  // A third run finds everything it needs in the store.
  backend_.runs = 0;
  TuneSummary again = run("exhaustive", options, &store);
  EXPECT_EQ(again.resumed, 11u);
  EXPECT_EQ(backend_.runs.load(), 0);
}

TEST_F(TunerTest, AddingEnergyToStoredTestsKeepsTheirCounters) {
  fs::path db = dir_ / "results.db";
  {
    Store store = Store::open(db);
    TuneOptions options;
    options.run.measure.counters = true;
    run("exhaustive", options, &store);
  }
  backend_.joules = [](const KernelInstance& i) { return 10.0 - define(i, "A"); };
  Store store = Store::open(db);
  TuneOptions options;
  options.objective = Objective::parse("energy");
  TuneSummary summary = run("exhaustive", options, &store);
  EXPECT_EQ(summary.resumed, 0u) << "the stored tests had no energy";
  std::vector<Result> stored = store.results(store.tunings()[0].first);
  ASSERT_EQ(stored.size(), 11u);
  for (const Result& r : stored) {
    ASSERT_TRUE(r.energy) << r.key();
    EXPECT_DOUBLE_EQ(r.energy->joules_per_launch, 10.0 - define_of(r, "A"));
    EXPECT_FALSE(r.counters.empty()) << r.key() << ": the counters measured before are kept";
    EXPECT_EQ(r.profiling_passes, 2);
  }
}

TEST_F(TunerTest, AFailedReMeasurementNeverReplacesAValidStoredTest) {
  fs::path db = dir_ / "results.db";
  {
    Store store = Store::open(db);
    run("exhaustive", {}, &store);
  }
  backend_.launch_fails = [](const KernelInstance&) { return true; };  // e.g. the profiler crashes
  Store store = Store::open(db);
  TuneOptions options;
  options.run.measure.counters = true;
  TuneSummary summary = run("exhaustive", options, &store);
  EXPECT_EQ(summary.valid, 0u);
  for (const Result& r : summary.results) EXPECT_NE(r.message.find("earlier valid test"), std::string::npos);
  std::vector<Result> stored = store.results(store.tunings()[0].first);
  ASSERT_EQ(stored.size(), 11u);
  for (const Result& r : stored) EXPECT_TRUE(r.ok()) << r.key();
}

TEST_F(TunerTest, GflopsPerWattWithoutAFlopCountIsAClearError) {
  TuneOptions options;
  options.objective = Objective::parse("gflops-per-watt");
  try {
    run("exhaustive", options);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("FLOP count"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace steer

namespace steer {
namespace {

// A test abandoned by Ctrl-C has no result: it is neither stored nor counted, and the run
// ends at once.
TEST_F(TunerTest, AnInterruptDuringATestEndsTheRunAndStoresNothingForThatTest) {
  std::atomic<bool> interrupt{false};
  backend_.before_run = [&](const KernelInstance& instance, const RunOptions& options) {
    EXPECT_EQ(options.interrupt, &interrupt) << "the backend can see the interrupt";
    if (backend_.runs.load() == 3) {
      interrupt = true;
      throw Interrupted(fmt::format("interrupted during configuration {}", instance.config_index));
    }
  };
  TuneOptions options;
  options.interrupt = &interrupt;
  Store store = Store::open(dir_ / "results.db");
  TuneSummary summary = run("exhaustive", options, &store, 5);
  EXPECT_TRUE(summary.interrupted);
  EXPECT_EQ(summary.stop_reason, "interrupted");
  EXPECT_EQ(summary.tests, 3u);
  EXPECT_TRUE(summary.finalists.empty()) << "no final check after an interrupt";
  const auto tunings = store.tunings();
  ASSERT_EQ(tunings.size(), 1u);
  EXPECT_EQ(store.results(tunings[0].first).size(), 3u);
  EXPECT_TRUE(store.take_abandoned(tunings[0].first).empty());
}

// A slot of a DevicePool that answers as a device would, until its `lose_at`-th test, where
// it is lost (an MPI rank that died or stopped answering, a device gone).
class LosableSlot final : public Slot {
 public:
  LosableSlot(const DeviceExecutor& like, int lose_at) : like_(like), lose_at_(lose_at) {}
  std::string name() const override { return "rank 7 on elsewhere"; }
  void start(const RunOptions&) override {}
  Result run(ConfigIndex config, const RunOptions&, std::vector<std::string>&) override {
    started.store(true);
    if (++tests_ == lose_at_) throw SlotLost("rank 7 gave no result within 600 s");
    Result result = like_.test_of(config);
    result.status = Status::Ok;
    result.time = TimingStats::from_samples({100.0 + static_cast<double>(config)});
    return result;
  }

 private:
  const DeviceExecutor& like_;
  int lose_at_;
  int tests_ = 0;

 public:
  std::atomic<bool> started{false};  // its first test has begun
};

// A slot that holds its first test until `other` has begun one: on a busy machine the fast
// device could otherwise finish every test before the other slot's thread gets a turn.
class WaitingSlot final : public Slot {
 public:
  WaitingSlot(std::unique_ptr<Slot> slot, const std::atomic<bool>& other) : slot_(std::move(slot)), other_(other) {}
  std::string name() const override { return slot_->name(); }
  void start(const RunOptions& run) override { slot_->start(run); }
  Result run(ConfigIndex config, const RunOptions& run, std::vector<std::string>& warnings) override {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!other_.load() && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return slot_->run(config, run, warnings);
  }

 private:
  std::unique_ptr<Slot> slot_;
  const std::atomic<bool>& other_;
};

// Several devices at once through a DevicePool: a slot that is lost records its test as
// failed, saying which and why, takes no more, and the run goes on on the others.
TEST_F(TunerTest, ASlotThatIsLostFailsItsTestAndTheRunGoesOnOnTheOthers) {
  auto primary = std::make_unique<DeviceExecutor>(spec_, *space_, backend_);
  DeviceExecutor& first = *primary;
  std::vector<std::unique_ptr<Slot>> slots;
  // Lost on its first test: the loop hands out the first two tests at once, one to each.
  auto losable = std::make_unique<LosableSlot>(first, 1);
  slots.push_back(std::make_unique<WaitingSlot>(std::make_unique<DeviceSlot>(std::move(primary), "the first device"),
                                                losable->started));
  slots.push_back(std::move(losable));
  DevicePool pool(first, std::move(slots));
  Store store = Store::open(dir_ / "results.db");
  auto searcher = make_searcher("exhaustive", {});
  std::vector<std::string> warnings;
  TuneOptions options;
  options.final_check = 0;
  options.run.repetitions = 3;
  options.on_warning = [&](const std::string& w) { warnings.push_back(w); };
  const TuneSummary summary = tune(*space_, pool, *searcher, &store, options);
  EXPECT_EQ(summary.devices, 2u);
  EXPECT_EQ(summary.tests, space_->size()) << "every configuration, on the device that is left";
  EXPECT_EQ(summary.failed, 1u);
  const std::vector<Result> stored = store.results(summary.tuning);
  ASSERT_EQ(stored.size(), space_->size());
  std::set<std::string> keys;
  for (const Result& r : stored) keys.insert(r.key());
  EXPECT_EQ(keys.size(), space_->size()) << "each configuration once";
  const auto lost = std::find_if(stored.begin(), stored.end(), [](const Result& r) { return !r.ok(); });
  ASSERT_NE(lost, stored.end());
  EXPECT_EQ(lost->status, Status::LaunchError);
  EXPECT_NE(lost->message.find("rank 7 on elsewhere failed while running this configuration"), std::string::npos)
      << lost->message;
  EXPECT_NE(lost->message.find("no result within 600 s"), std::string::npos);
  ASSERT_EQ(warnings.size(), 1u);
  const std::vector<std::pair<std::string, std::uint64_t>> per_slot = pool.tests_per_slot();
  EXPECT_EQ(per_slot[1].second, 1u) << "the one it was lost on";
  EXPECT_EQ(per_slot[0].second + per_slot[1].second, space_->size());
}

TEST_F(TunerTest, WhenEverySlotIsLostTheRunStopsWithTheFinishedTestsStored) {
  auto primary = std::make_unique<DeviceExecutor>(spec_, *space_, backend_);
  DeviceExecutor& first = *primary;
  std::vector<std::unique_ptr<Slot>> slots;
  slots.push_back(std::make_unique<LosableSlot>(first, 2));
  slots.push_back(std::make_unique<LosableSlot>(first, 3));
  DevicePool pool(first, std::move(slots));
  Store store = Store::open(dir_ / "results.db");
  auto searcher = make_searcher("exhaustive", {});
  TuneOptions options;
  options.final_check = 0;
  try {
    tune(*space_, pool, *searcher, &store, options);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("every device of the run was lost"), std::string::npos) << e.what();
  }
  const auto tunings = store.tunings();
  ASSERT_EQ(tunings.size(), 1u);
  EXPECT_EQ(store.results(tunings[0].first).size(), 5u) << "three finished tests and the two lost ones";
}

// The whole process dies during a test (here by _exit; a crash of the tuner itself, a
// kill -9): the next run of the tuning records that configuration as failed instead of
// running it, and dying on it, again.
TEST_F(TunerTest, AConfigurationTheProcessDiedOnIsRecordedAsFailedWhenTheTuningResumes) {
  const fs::path db = dir_ / "results.db";
  { Store store = Store::open(db); }
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    backend_.before_run = [](const KernelInstance& instance, const RunOptions&) {
      if (define(instance, "A") == 2 && define(instance, "B") == 4) ::_exit(7);
    };
    Store store = Store::open(db);
    run("exhaustive", {}, &store);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 7) << "the child did not die on A=2,B=4";

  std::vector<std::string> warnings;
  TuneOptions options;
  options.on_warning = [&](const std::string& w) { warnings.push_back(w); };
  Store store = Store::open(db);
  TuneSummary summary = run("exhaustive", options, &store);
  EXPECT_EQ(summary.tests, 11u);
  for (std::uint64_t config : backend_.run_order) {
    EXPECT_NE(space_->key(config), "A=2,B=4") << "the configuration the process died on ran again";
  }
  const Result* died = nullptr;
  for (const Result& r : summary.results) {
    if (r.key() == "A=2,B=4") died = &r;
  }
  ASSERT_NE(died, nullptr);
  EXPECT_EQ(died->status, Status::LaunchError);
  EXPECT_NE(died->message.find("the tuner ended while this configuration ran"), std::string::npos) << died->message;
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("A=2,B=4 was running when an earlier run of this tuning ended"), std::string::npos)
      << warnings[0];
  EXPECT_EQ(summary.warnings, warnings);
}

// An argument list the kernel does not take fails every test alike: the run stops with that
// error after kFailEarlyTests tests, and stores none of them.
TEST_F(TunerTest, TheFirstTestsFailingAlikeForAReasonOutsideTheConfigurationStopTheRun) {
  backend_.launch_fails = [](const KernelInstance&) { return true; };
  backend_.failures_independent_of_configuration = true;
  Store store = Store::open(dir_ / "results.db");
  try {
    run("exhaustive", {}, &store);
    FAIL() << "expected the run to stop";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(fmt::format("the first {} tests failed the same way", kFailEarlyTests)), std::string::npos)
        << message;
    EXPECT_NE(message.find("fake launch failure"), std::string::npos) << message;
    EXPECT_NE(message.find("A=1,B=1"), std::string::npos) << "names the configurations: " << message;
  }
  EXPECT_EQ(backend_.runs.load(), static_cast<int>(kFailEarlyTests));
  const auto tunings = store.tunings();
  ASSERT_EQ(tunings.size(), 1u);
  EXPECT_EQ(store.results(tunings[0].first).size(), 0u);
  EXPECT_TRUE(store.take_abandoned(tunings[0].first).empty()) << "the last test is not left as running";
}

// The same failures after a valid test do not stop the run: they belong to configurations,
// and are stored like any other.
TEST_F(TunerTest, FailuresOfThatKindAfterAValidTestAreStoredAndTheRunGoesOn) {
  backend_.launch_fails = [](const KernelInstance& i) { return define(i, "A") != 1 || define(i, "B") == 1; };
  backend_.failures_independent_of_configuration = true;
  Store store = Store::open(dir_ / "results.db");
  TuneSummary summary = run("exhaustive", {}, &store);  // A=1,B=1 fails, A=1,B=2 is valid
  EXPECT_EQ(summary.tests, 11u);
  EXPECT_EQ(summary.valid, 3u);
  EXPECT_EQ(store.results(store.tunings()[0].first).size(), 11u);
}

// The hang timeout: TuneOptions::timeout_ms, else the spec's kernel.timeout_ms, else 10 s.
TEST_F(TunerTest, TheHangTimeoutComesFromTheOptionsElseTheSpec) {
  std::vector<double> seen;
  backend_.before_run = [&](const KernelInstance&, const RunOptions& options) { seen.push_back(options.timeout_ms); };
  TuneOptions one;
  one.stop.tests = 1;
  run("exhaustive", one);
  spec_.kernel->timeout_ms = 1234;
  run("exhaustive", one);
  one.timeout_ms = 99;
  run("exhaustive", one);
  EXPECT_EQ(seen, (std::vector<double>{10'000, 1234, 99}));
}

}  // namespace
}  // namespace steer
