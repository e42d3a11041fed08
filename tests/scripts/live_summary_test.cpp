// scripts/bench/live_summary.py on progress logs written here in the form steer tune prints them
// (seconds since launch, test, status, best so far). Checked: the median of the best so far at
// each time, a seed without a valid test counting as slower than any, the seeds within the
// factor and when, the seed-by-seed comparison of two searchers (--paired), several folders
// pooled, and the arguments it refuses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "script_test.hpp"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class LiveSummary : public steer::test_support::ScriptTest {
 protected:
  // Writes DIR[/FOLDER]/gemm_SEARCHER_SEED.log: one progress line per (seconds, runtime in ms;
  // 0 for a failed test), the best so far as steer tune prints it.
  void log(const std::string& searcher, int seed, const std::vector<std::pair<double, double>>& tests,
           const std::string& folder = "") {
    std::filesystem::create_directories(dir_ / folder);
    std::ofstream out(dir_ / folder / ("gemm_" + searcher + "_" + std::to_string(seed) + ".log"));
    double best = 0;
    int number = 0;
    for (const auto& [seconds, ms] : tests) {
      ++number;
      if (ms > 0 && (best == 0 || ms < best)) best = ms;
      out << std::to_string(seconds) << " test " << number << "/100 "
          << (ms > 0 ? "ok " + std::to_string(ms) : "compile_error") << " ms | best "
          << (best > 0 ? std::to_string(best) + " ms" : "-") << "\n";
    }
  }

  // Runs the script on the logs (in the scratch folder, or in `folders` there); returns what it
  // printed.
  std::string run(const std::string& arguments, int expected_exit = 0, const std::string& folders = "") {
    return run_in_scratch("python3 '" STEER_SOURCE_DIR "/scripts/bench/live_summary.py' " +
                              (folders.empty() ? "'" + dir_.string() + "'" : folders) + " --kernel gemm " + arguments,
                          arguments, expected_exit);
  }
};

TEST_F(LiveSummary, GivesTheMedianBestAtEachTimeAndTheSeedsWithinTheFactor) {
  log("guided", 1, {{1.0, 5.0}, {2.0, 3.0}, {4.0, 2.0}});
  log("guided", 2, {{1.0, 4.0}, {3.0, 2.01}});
  log("guided", 3, {{1.5, 0}, {2.5, 6.0}});
  const std::string output = run("--best-ms 2.0 --times 1,2,5");
  // Tests: 3, 2 and 2, median 2. At 1 s: 5.0, 4.0 and no valid test yet (slower than any):
  // median 5.0. At 2 s: 3.0, 4.0 and none: 4.0. At 5 s: 2.0, 2.01, 6.0: 2.01. Within 1.02x of
  // 2.0: seeds 1 (4 s) and 2 (3 s).
  EXPECT_THAT(output, HasSubstr("| guided | 3 | 2 | 5.000 | 4.000 | 2.010 | 2 of 3 | 4.0 s |"));
}

TEST_F(LiveSummary, ComparesTwoSearchersSeedBySeed) {
  log("guided", 1, {{1.0, 3.0}, {2.0, 2.0}});
  log("guided", 2, {{1.0, 3.0}});
  log("guided", 3, {{1.0, 2.5}});
  log("guided", 4, {{1.0, 2.2}});
  log("random", 1, {{1.0, 2.5}});
  log("random", 2, {{1.0, 2.0}});
  log("random", 3, {{1.0, 2.5}});
  log("random", 4, {{1.0, 0}});  // no valid test: slower than any, left out of the means
  log("random", 5, {{1.0, 1.0}});  // a seed guided did not run: not compared
  const std::string output = run("--best-ms 2.0 --times 1,3 --paired guided,random");
  EXPECT_THAT(output, HasSubstr("| seed | guided | random | random / guided |"));
  EXPECT_THAT(output, HasSubstr("| 1 | 2.0000 | 2.5000 | 1.2500 |"));
  EXPECT_THAT(output, HasSubstr("| 4 | 2.2000 | - | - |"));
  EXPECT_THAT(output, Not(HasSubstr("\n| 5 |")));
  EXPECT_THAT(output, HasSubstr("guided ended lower in 2 of 4 seeds, random in 1, level in 1; mean over the 3 seeds "
                                "both had a valid test: 2.5000 against 2.3333."));
}

TEST_F(LiveSummary, PoolsFoldersCountingASeedOfEachAsATuningAndACopyOnce) {
  log("guided", 1, {{1.0, 3.0}}, "first");
  log("random", 1, {{1.0, 2.5}}, "first");
  log("guided", 1, {{1.0, 2.0}}, "second");
  log("random", 1, {{1.0, 4.0}}, "second");
  log("guided", 1, {{1.0, 3.0}}, "copy");  // the same logs as first/: one tuning each
  log("random", 1, {{1.0, 2.5}}, "copy");
  const std::string output = run("--best-ms 2.0 --times 1 --paired guided,random", 0, "first second copy");
  // guided: 3.0 and 2.0 (the copies read once), median 2.5; random: 2.5 and 4.0, median 3.25.
  EXPECT_THAT(output, HasSubstr("| guided | 2 | 1 | 2.500 | 1 of 2 | - |"));
  EXPECT_THAT(output, HasSubstr("| random | 2 | 1 | 3.250 | 0 of 2 | - |"));
  // Paired within a folder: first's seed 1 with first's, second's with second's.
  EXPECT_THAT(output, HasSubstr("| first:1 | 3.0000 | 2.5000 | 0.8333 |"));
  EXPECT_THAT(output, HasSubstr("| second:1 | 2.0000 | 4.0000 | 2.0000 |"));
  EXPECT_THAT(output, Not(HasSubstr("| copy:1 |")));
}

TEST_F(LiveSummary, RefusesAPairThatIsNotTwoSearchersOfTheFolder) {
  log("guided", 1, {{1.0, 3.0}});
  log("random", 1, {{1.0, 3.0}});
  EXPECT_THAT(run("--best-ms 2.0 --paired guided", 2), HasSubstr("--paired expects two searchers A,B, got 'guided'"));
  EXPECT_THAT(run("--best-ms 2.0 --paired guided,bayes", 2),
              HasSubstr("no tunings of 'bayes' in " + dir_.string() + " (there are: guided, random)"));
}

TEST_F(LiveSummary, SaysSoWhenTheFolderHoldsNoTuningsOfTheKernel) {
  EXPECT_THAT(run("--best-ms 2.0", 1), HasSubstr("no gemm_*_*.log in " + dir_.string()));
}

}  // namespace
