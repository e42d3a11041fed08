// From tuning to deployment: the best configuration per device and problem size, as a C++
// header that compiles and answers look-ups, and as a wisdom file that loads back and finds
// the nearest size tuned; `steer export --format header|wisdom` writes them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "steer/recording.hpp"
#include "steer/store.hpp"
#include "steer_cli_runner.hpp"
#include "store/store_test_support.hpp"

namespace steer {
namespace {

using ::testing::HasSubstr;

Result test_of(std::int64_t block, double unroll_factor, bool flag, double median_ms, Status status = Status::Ok) {
  Result result;
  result.configuration = {{"BLOCK", block}, {"FACTOR", unroll_factor}, {"FLAG", flag}, {"MODE", "fast"}};
  result.status = status;
  result.time = TimingStats::from_samples({median_ms, median_ms});
  return result;
}

// Two devices; on the first, two sizes, one of them tuned twice (the newer replaces it).
Store filled_store(const std::filesystem::path& file) {
  Store store = Store::open(file);
  const auto add = [&](const std::string& device, const std::string& size, const std::string& hash,
                       std::vector<Result> results) {
    const std::int64_t id = store.tuning({"saxpy", hash, device, "opencl", size});
    store.append(id, results);
  };
  add("GPU A", "N=1024", "old", {test_of(32, 0.5, true, 1.0)});
  add("GPU A", "N=4096", "new", {test_of(64, 1.0, false, 2.0), test_of(128, 2.0, true, 1.5), test_of(16, 1.0, true, 0.1, Status::InvalidOutput)});
  add("GPU B", "N=4096", "new", {test_of(256, 4.0, false, 0.7)});
  add("GPU A", "N=1024", "new", {test_of(8, 0.25, false, 3.0)});
  add("GPU C", "N=1024", "new", {test_of(8, 0.25, false, 3.0, Status::CompileError)});
  return store;
}

TEST(DeploymentExport, TheBestValidTestOfTheNewestTuningOfEachDeviceAndSize) {
  testing::ScratchDir scratch;
  const Store store = filled_store(scratch / "r.db");
  std::vector<std::string> notes;
  const std::vector<TunedConfiguration> best = best_configurations(store, "saxpy", &notes);
  ASSERT_EQ(best.size(), 3u);
  EXPECT_EQ(best[0].tuning.problem_size, "N=4096");
  EXPECT_EQ(best[0].best.configuration[0].second, Value(128));
  EXPECT_EQ(best[1].tuning.device, "GPU B");
  EXPECT_EQ(best[2].tuning.spec_hash, "new");
  EXPECT_EQ(best[2].best.configuration[0].second, Value(8));
  EXPECT_THAT(notes, ::testing::ElementsAre(HasSubstr("(GPU C, size N=1024) has no valid test"),
                                            HasSubstr("left out: a newer tuning of the same device and size replaces it")));
  EXPECT_THROW(best_configurations(store, "other"), Error);
}

TEST(DeploymentExport, TheHeaderCompilesAndFindsEachConfiguration) {
  testing::ScratchDir scratch;
  const Store store = filled_store(scratch / "r.db");
  std::ofstream(scratch / "tuned.hpp") << [&] {
    std::ostringstream text;
    export_header(text, "saxpy", best_configurations(store, "saxpy"));
    return text.str();
  }();
  std::ofstream(scratch / "use.cpp") << R"(
#include "tuned.hpp"
namespace tuned = steer_tuned::saxpy;
static_assert(tuned::find("GPU A", "N=4096")->BLOCK == 128);
static_assert(tuned::find("GPU A", "N=4096")->FACTOR == 2.0);
static_assert(tuned::find("GPU B", "N=4096")->FLAG == false);
static_assert(tuned::find("GPU A", "N=1024")->MODE == "fast");
static_assert(tuned::find("GPU A", "N=1024")->defines == "-DBLOCK=8 -DFACTOR=0.25 -DFLAG=0 -DMODE=fast");
static_assert(tuned::find("GPU A", "N=1024")->time_ms == 3.0);
static_assert(tuned::find("GPU C", "N=1024") == nullptr);
int main() { return tuned::find("GPU B", "N=4096")->BLOCK == 256 ? 0 : 1; }
)";
  const std::string command = "c++ -std=c++17 -Wall -Wextra -Werror -o " + (scratch / "use").string() + " " +
                              (scratch / "use.cpp").string() + " && " + (scratch / "use").string();
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

TEST(DeploymentExport, AHeaderNeedsParametersNamedAsIdentifiersAndSharedByItsTunings) {
  std::ostringstream text;
  TunedConfiguration odd{{"k", "", "GPU", "cuda", "s"}, test_of(1, 1, true, 1)};
  odd.best.configuration[0].first = "block size";
  EXPECT_THAT([&] { export_header(text, "k", std::vector{odd}); },
              ::testing::ThrowsMessage<Error>(HasSubstr("parameter 'block size' is not a C identifier")));
  TunedConfiguration a{{"k", "", "GPU", "cuda", "s"}, test_of(1, 1, true, 1)}, b = a;
  b.best.configuration.pop_back();
  EXPECT_THAT([&] { export_header(text, "k", std::vector{a, b}); },
              ::testing::ThrowsMessage<Error>(HasSubstr("differ in their parameters")));
}

TEST(DeploymentExport, WisdomLoadsBackAndFindsTheNearestSizeTunedOnTheDevice) {
  testing::ScratchDir scratch;
  const Store store = filled_store(scratch / "r.db");
  std::ostringstream text;
  export_wisdom(text, "saxpy", best_configurations(store, "saxpy"));
  const Wisdom wisdom = Wisdom::parse(text.str(), "saxpy.wisdom.json");
  EXPECT_EQ(wisdom.kernel(), "saxpy");
  ASSERT_EQ(wisdom.entries().size(), 3u);
  const Wisdom::Entry* exact = wisdom.find("GPU A", "N=4096");
  ASSERT_NE(exact, nullptr);
  EXPECT_EQ(exact->configuration, (Configuration{{"BLOCK", 128}, {"FACTOR", 2.0}, {"FLAG", true}, {"MODE", "fast"}}));
  EXPECT_EQ(exact->configuration[1].second.type(), ValueType::Float);
  EXPECT_EQ(exact->time_ms, 1.5);
  // 3000 is nearer 4096 than 1024 on a log scale; 1500 nearer 1024.
  EXPECT_EQ(wisdom.find("GPU A", "N=3000"), exact);
  EXPECT_EQ(wisdom.find("GPU A", "N=1500")->configuration[0].second, Value(8));
  EXPECT_EQ(wisdom.find("GPU A", "M=4096"), nullptr) << "other variables";
  EXPECT_EQ(wisdom.find("GPU A", "large"), nullptr) << "a size by name matches only itself";
  EXPECT_EQ(wisdom.find("GPU Z", "N=4096"), nullptr);
  EXPECT_THAT([] { Wisdom::parse(R"({"format": "steer-results"})", "w.json"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("w.json: not a wisdom file")));
  EXPECT_THAT([] { Wisdom::parse(R"({"format": "steer-wisdom", "version": 1, "kernel": "k"})", "w.json"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("w.json")));
}

TEST(DeploymentExport, TheCommandWritesAHeaderOrWisdomOfOneKernel) {
  testing::ScratchDir scratch;
  const std::string db = (scratch / "r.db").string();
  {
    Store store = filled_store(db);
    store.append(store.tuning({"other", "h", "GPU A", "opencl", "N=1"}), std::vector{test_of(1, 1, true, 1)});
  }
  auto out = test_support::run_steer("export --db " + db + " --format header");
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_THAT(out.output, HasSubstr("holds tunings of 2 kernels; choose one with --kernel"));
  out = test_support::run_steer("export --db " + db + " --format header --kernel saxpy", false);
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_THAT(out.output, HasSubstr("namespace steer_tuned::saxpy {"));
  const std::string wisdom = (scratch / "saxpy.wisdom.json").string();
  out = test_support::run_steer("export --db " + db + " --format wisdom --kernel saxpy --out " + wisdom);
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_THAT(out.output, HasSubstr("has no valid test"));
  EXPECT_EQ(Wisdom::load(wisdom).entries().size(), 3u);
  out = test_support::run_steer("export --db " + db + " --format csv --kernel saxpy");
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_THAT(out.output, HasSubstr("--kernel applies to --format header and wisdom"));
}

}  // namespace
}  // namespace steer
