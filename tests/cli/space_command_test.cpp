// `steer space`, run as a user runs it: the built binary, its output and exit status.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "steer_cli_runner.hpp"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using steer::test_support::run_steer;
using Outcome = steer::test_support::CliOutcome;

std::string kernel_spec(const std::string& name) {
  return std::string("'" STEER_SOURCE_DIR "/kernels/") + name + "/spec.json'";
}

// A spec file in a fresh temporary folder, removed with the test.
class TemporarySpec {
 public:
  explicit TemporarySpec(const std::string& content)
      : directory_(fs::temp_directory_path() /
                   ("steer_cli_" + std::to_string(getpid()) + "_" +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    fs::create_directories(directory_);
    std::ofstream(path()) << content;
  }
  ~TemporarySpec() { fs::remove_all(directory_); }
  std::string path() const { return (directory_ / "spec.json").string(); }

 private:
  fs::path directory_;
};

TEST(cli_space, CountsCoulombAsJson) {
  Outcome outcome = run_steer("space " + kernel_spec("coulomb") + " --json");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  nlohmann::json report = nlohmann::json::parse(outcome.output);
  EXPECT_EQ(report["count"], 210);
  EXPECT_EQ(report["cross_product"], 2 * 4 * 1 * 6 * 7 * 1 * 2 * 1);
  EXPECT_EQ(report["parameters"].size(), 8u);
  EXPECT_EQ(report["parameters"][0]["name"], "WORK_GROUP_SIZE_X");
  EXPECT_GE(report["groups"].get<int>(), 1);
  EXPECT_GT(report["memory_bytes"].get<long>(), 0);
  EXPECT_GE(report["seconds"].get<double>(), 0.0);
  EXPECT_EQ(report["exact"], true);
}

// Twelve digits summing to 54 (7.9e10 of 10^12 combinations; the constraint reads all
// twelve, so nothing is cut off early: counting takes about a day), and X in {1, 3}.
constexpr const char* kHugeSpace = R"json({"name": "twelve_digits", "parameters": [
    {"name": "A", "values": "range(10)"}, {"name": "B", "values": "range(10)"}, {"name": "C", "values": "range(10)"},
    {"name": "D", "values": "range(10)"}, {"name": "E", "values": "range(10)"}, {"name": "F", "values": "range(10)"},
    {"name": "G", "values": "range(10)"}, {"name": "H", "values": "range(10)"}, {"name": "I", "values": "range(10)"},
    {"name": "J", "values": "range(10)"}, {"name": "K", "values": "range(10)"}, {"name": "L", "values": "range(10)"},
    {"name": "X", "values": [1, 2, 3]}],
  "constraints": ["A + B + C + D + E + F + G + H + I + J + K + L == 54", "X != 2"]})json";
constexpr double kHugeSpaceCount = 2 * 39'581'170'420.0;

TEST(cli_space, AHugeSpaceStopsAtTheTimeLimitWithAnEstimateAndSaysHowToGoOn) {
  TemporarySpec spec(kHugeSpace);
  Outcome outcome = run_steer("space '" + spec.path() + "' --max-time 0.5");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_TRUE(std::regex_search(outcome.output, std::regex("valid configurations  about (7\\.[89][0-9]*|8(\\.0[0-9]*)?)e\\+10 "
                                                           "\\(95 % interval .* to .*\\), estimated by sampling")))
      << outcome.output;
  EXPECT_TRUE(std::regex_search(outcome.output, std::regex("found so far  +[0-9,]+ in group 1 of 2, [0-9.e-]+ % of its "
                                                           "1e\\+12 combinations searched")))
      << outcome.output;
  EXPECT_THAT(outcome.output, HasSubstr("steer: counting stopped at the time limit (--max-time 0.5)"));
  EXPECT_THAT(outcome.output, HasSubstr("the count shown is estimated from"));
  EXPECT_THAT(outcome.output, HasSubstr("; --max-time 0 counts without a limit"));
  EXPECT_TRUE(std::regex_search(outcome.output, std::regex("that group alone needs about [0-9.]+ (h|days) more")))
      << outcome.output;

  Outcome json = run_steer("space '" + spec.path() + "' --max-time 0.5 --json", false);
  ASSERT_EQ(json.exit_code, 0) << json.output;
  nlohmann::json report = nlohmann::json::parse(json.output);
  EXPECT_TRUE(report["count"].is_null()) << "not counted";
  EXPECT_EQ(report["exact"], false);
  // Where the count stops and how many descents fit in the time set aside vary from run to
  // run (a sanitizer build fits fewer), so whether this one interval covers the true count is
  // left to the space tests, which fix the number of descents; here it must bracket its estimate.
  const double estimate = report["estimate"]["count"].get<double>();
  EXPECT_NEAR(estimate / kHugeSpaceCount, 1.0, 0.05);
  EXPECT_LT(report["estimate"]["low"].get<double>(), estimate);
  EXPECT_GT(report["estimate"]["high"].get<double>(), estimate);
  EXPECT_EQ(report["stopped"]["reason"], "time");
  EXPECT_EQ(report["stopped"]["group"], 1);
  EXPECT_GT(report["stopped"]["searched"].get<double>(), 0.0);
  EXPECT_EQ(report["cross_product"], 3'000'000'000'000);

  Outcome list = run_steer("space '" + spec.path() + "' --max-time 0.5 --list");
  EXPECT_EQ(list.exit_code, 1);
  EXPECT_THAT(list.output, HasSubstr("cannot list the configurations: counting stopped at the time limit"));
}

TEST(cli_space, PrintsASummaryOfAKernelFolder) {
  Outcome outcome = run_steer("space '" STEER_SOURCE_DIR "/kernels/gemm' --count");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_THAT(outcome.output, StartsWith("gemm (" STEER_SOURCE_DIR "/kernels/gemm/spec.json)\n"));
  EXPECT_THAT(outcome.output, HasSubstr("valid configurations  5,788"));
  EXPECT_THAT(outcome.output, HasSubstr("construction time"));
}

TEST(cli_space, ListsConfigurationsAsCsv) {
  Outcome outcome = run_steer("space " + kernel_spec("coulomb") + " --list");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_THAT(outcome.output,
              StartsWith("WORK_GROUP_SIZE_X,WORK_GROUP_SIZE_Y,WORK_GROUP_SIZE_Z,Z_ITERATIONS,INNER_UNROLL_FACTOR,"
                         "USE_CONSTANT_MEMORY,USE_SOA,VECTOR_SIZE\n"));
  EXPECT_EQ(std::count(outcome.output.begin(), outcome.output.end(), '\n'), 1 + 210);
}

TEST(cli_space, ListsConfigurationsAsJson) {
  TemporarySpec spec(R"({"name": "t", "parameters": [{"name": "A", "values": [1, 2]}, {"name": "M", "values": ["x,y", "z"]}],
                         "constraints": "A == 1 or M == 'z'"})");
  Outcome outcome = run_steer("space '" + spec.path() + "' --list --json");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  nlohmann::json listing = nlohmann::json::parse(outcome.output);
  EXPECT_EQ(listing["parameters"], nlohmann::json({"A", "M"}));
  EXPECT_EQ(listing["configurations"], nlohmann::json::parse(R"([[1, "x,y"], [1, "z"], [2, "z"]])"));

  Outcome csv = run_steer("space '" + spec.path() + "' --list");
  EXPECT_EQ(csv.output, "A,M\n1,\"x,y\"\n1,z\n2,z\n");  // a comma in a value is quoted
}

TEST(cli_space, MalformedSpecFailsWithTheFileAndPlace) {
  TemporarySpec spec(R"({"name": "t", "parameters": [{"name": "A", "valeus": [1]}]})");
  Outcome outcome = run_steer("space '" + spec.path() + "'");
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_EQ(outcome.output, "steer: error: " + spec.path() +
                                ": parameters[0]: unknown key 'valeus' (did you mean 'values'?); "
                                "expected one of: name, values\n");
}

TEST(cli_space, EmptySpaceNamesTheConstraintThatRemovedTheMost) {
  TemporarySpec spec(R"({"name": "t", "parameters": [{"name": "A", "values": [1, 2]}], "constraints": ["A > 5"]})");
  Outcome outcome = run_steer("space '" + spec.path() + "'");
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_THAT(outcome.output, StartsWith("steer: error: " + spec.path() + ": "));
  EXPECT_THAT(outcome.output, HasSubstr("no valid configuration"));
  EXPECT_THAT(outcome.output, HasSubstr("constraints[0]"));
}

TEST(cli_space, MissingFileIsNamed) {
  Outcome outcome = run_steer("space /no/such/spec.json");
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_EQ(outcome.output, "steer: error: spec file '/no/such/spec.json' does not exist\n");
}

}  // namespace
