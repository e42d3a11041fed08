// scripts/bench/live_tuning.sh without a GPU: a fake steer logs the arguments of every call and
// answers as `steer tune --json` would. Checked: the order of the tunings (seeds outermost,
// ROTATE), what each label becomes on the command line (settings, tune options, the model
// and source of guided and default-model), its files, and labels refused before anything runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "script_test.hpp"

namespace {

namespace fs = std::filesystem;
using steer::test_support::read_file;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// Logs one line per call (its arguments after the spec, and CUDA_CACHE_PATH's existence), prints
// a progress line on stderr and a JSON summary on stdout.
constexpr const char* kFakeSteer = R"sh(#!/usr/bin/env bash
shift 2
cache=none
[ -n "${CUDA_CACHE_PATH:-}" ] && [ -d "$CUDA_CACHE_PATH" ] && cache=fresh
echo "$* cache=$cache" >> "$FAKE_STEER_LOG"
echo "test 1/10 ok 1.0 ms | best 1.0 ms" >&2
echo '{"tests": 1}'
)sh";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class LiveTuning : public steer::test_support::ScriptTest {
 protected:
  void SetUp() override {
    ScriptTest::SetUp();
    write_fake_steer(kFakeSteer);
  }

  // Runs the script in the scratch folder with the fake steer and `environment` (NAME=VALUE
  // ...); returns what it printed.
  std::string run(const std::string& environment, const std::string& arguments, int expected_exit = 0) {
    return run_in_scratch("env STEER=./steer FAKE_STEER_LOG=steer.log " + environment +
                              " '" STEER_SOURCE_DIR "/scripts/bench/live_tuning.sh' " + arguments,
                          arguments, expected_exit);
  }
  std::vector<std::string> calls() const { return lines_of(read_file(dir_ / "steer.log")); }
};

TEST_F(LiveTuning, RunsEverySearcherForEachSeedAndRotatesTheOrderWhenAsked) {
  run("ROTATE=1", "out gemm h200 5 '1 2 3' random basin-hopping");
  std::vector<std::string> searchers;
  for (const std::string& call : calls()) {
    const auto at = call.find("--searcher ");
    ASSERT_NE(at, std::string::npos) << call;
    searchers.push_back(call.substr(at + 11, call.find(' ', at + 11) - at - 11));
  }
  EXPECT_THAT(searchers, ElementsAre("random", "basin-hopping", "basin-hopping", "random", "random", "basin-hopping"));
  for (const std::string& call : calls()) {
    EXPECT_THAT(call, HasSubstr("--backend cuda --size h200 --time 5")) << call;
    EXPECT_THAT(call, HasSubstr("cache=fresh")) << "each tuning has a compile cache of its own: " << call;
  }
  EXPECT_EQ(read_file(dir_ / "out" / "gemm_random_2.json"), "{\"tests\": 1}\n");
  EXPECT_THAT(read_file(dir_ / "out" / "gemm_random_2.log"), HasSubstr("test 1/10 ok"));
}

TEST_F(LiveTuning, ALabelsSettingsAndTuneOptionsReachItsTuningAlone) {
  run("TUNE_ARGS='--final-check 0'", "out conv h200 5 1 surrogate+elite=2+tune.guesses=0 random");
  const std::vector<std::string> log = calls();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_THAT(log[0], HasSubstr("--searcher surrogate --set elite=2 --guesses 0 --final-check 0"));
  EXPECT_THAT(log[1], HasSubstr("--searcher random --final-check 0"));
  EXPECT_THAT(log[1], Not(HasSubstr("elite")));
  EXPECT_TRUE(fs::exists(dir_ / "out" / "conv_surrogate+elite=2+tune.guesses=0_1.json"));
}

TEST_F(LiveTuning, GuidedAndDefaultModelGetTheModelTheSourceAndTheirSettings) {
  run("MODEL=m.json SOURCE=src.db", "out gemm h200 5 1 guided+pair_moves=1 default-model+pair_moves=2");
  const std::vector<std::string> log = calls();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_THAT(log[0], HasSubstr("--searcher guided --set pair_moves=1 --model m.json --set source=src.db"));
  EXPECT_THAT(log[1], HasSubstr("--searcher default --set pair_moves=2 --model m.json --set source=src.db"));
  run("MODEL=m.json SOURCE=model", "again gemm h200 5 1 guided");
  EXPECT_THAT(calls().back(), Not(HasSubstr("source=")));
  run("MODEL=m.json", "none gemm h200 5 1 guided");
  EXPECT_THAT(calls().back(), HasSubstr("--set source=none"));
}

TEST_F(LiveTuning, RefusesALabelThatIsNoSettingAndGuidedWithoutAModel) {
  EXPECT_THAT(run("", "out gemm h200 5 1 random+elite", 2), HasSubstr("expected NAME+KEY=VALUE, got 'elite'"));
  EXPECT_THAT(run("", "out gemm h200 5 1 guided", 2), HasSubstr("guided needs MODEL=FILE"));
  EXPECT_THAT(run("COMPILE_CACHE=mine", "out gemm h200 5 1 random", 2), HasSubstr("COMPILE_CACHE is 'mine'"));
  EXPECT_FALSE(fs::exists(dir_ / "steer.log")) << "nothing ran";
}

}  // namespace
