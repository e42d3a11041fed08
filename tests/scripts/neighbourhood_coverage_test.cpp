// scripts/bench/neighbourhood_coverage.py on stores written here (the columns of a results
// store's tests table that it reads) over a space of two parameters of three values each, one
// configuration invalid. Checked: the fastest of each tuning and how many of its neighbours it
// tested, the share of later tests near the three fastest and when one of them was spent, which
// neighbours any tuning measured faster, a copy of a store read once, and the stores it refuses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "script_test.hpp"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class NeighbourhoodCoverage : public steer::test_support::ScriptTest {
 protected:
  void SetUp() override {
    ScriptTest::SetUp();
    // Index: (A, B). (2, 2) is not valid, so (0, 2) has three neighbours and (1, 1) four.
    std::ofstream(dir_ / "space.csv") << "A,B\n0,0\n0,1\n0,2\n1,0\n1,1\n1,2\n2,0\n2,1\n";
  }

  // Writes FOLDER/NAME.db with a tests table of (configuration index, runtime in ms, status).
  void store(const std::string& folder, const std::string& name,
             const std::vector<std::tuple<int, double, std::string>>& tests) {
    std::filesystem::create_directories(dir_ / folder);
    std::string rows;
    for (std::size_t i = 0; i < tests.size(); ++i) {
      const auto& [config, ms, status] = tests[i];
      rows += "(1," + std::to_string(i) + "," + std::to_string(config) + "," + std::to_string(ms) + ",'" + status + "'),";
    }
    rows.pop_back();
    const std::filesystem::path db = dir_ / folder / (name + ".db");
    run_in_scratch("python3 -c \"import sqlite3; c = sqlite3.connect('" + db.string() +
                       "'); c.execute('CREATE TABLE tests (tuning_id, sequence, config_index, median_ms, status)'); "
                       "c.execute(\\\"INSERT INTO tests VALUES " + rows + "\\\"); c.commit()\"",
                   "writing " + db.string(), 0);
  }

  std::string run(const std::string& arguments, int expected_exit = 0) {
    return run_in_scratch("python3 '" STEER_SOURCE_DIR "/scripts/bench/neighbourhood_coverage.py' --space space.csv " +
                              arguments,
                          arguments, expected_exit);
  }
};

TEST_F(NeighbourhoodCoverage, SaysHowMuchOfTheFastestsNeighbourhoodEachTuningTested) {
  // A walk that tests all four neighbours of its fastest, (1, 1); a jump that tests one of
  // them; and a tuning whose fastest, (0, 2), has neighbours the others measured faster.
  store("a", "k_walk_1", {{4, 1.0, "ok"}, {1, 2.0, "ok"}, {7, 3.0, "ok"}, {3, 1.5, "ok"}, {5, 2.5, "ok"}, {0, 4.0, "ok"}});
  store("a", "k_jump_1", {{0, 2.0, "ok"}, {5, 3.0, "ok"}, {4, 0.5, "ok"}});
  store("a", "k_jump_2", {{1, 0.0, "compile_error"}, {2, 3.0, "ok"}});
  store("b", "k_walk_1", {{4, 1.0, "ok"}, {1, 2.0, "ok"}, {7, 3.0, "ok"}, {3, 1.5, "ok"}, {5, 2.5, "ok"}, {0, 4.0, "ok"}});
  const std::string output = run("a b --after 1");
  // After the first test, every test of the walk is a neighbour of one of the fastest before
  // it, and its last, (0, 0), came after (1, 1)'s neighbours were all tested: one spent. Of the
  // jump's two later tests, (1, 2) is no neighbour of (0, 0); (1, 1) is one of (1, 2).
  EXPECT_THAT(output, HasSubstr("| a/k_walk_1 | 6 | 4 | 1.000 | 4 of 4 | 100 % | 4 of 4 | 0 |"));
  // (1, 1) measured 1.0 and 0.5 ms: median 0.75, below every neighbour's.
  EXPECT_THAT(output, HasSubstr("| a/k_jump_1 | 3 | 4 | 0.500 | 1 of 4 | 50 % | 4 of 4 | 0 |"));
  // A failed test counts as tested; of its neighbours, (0, 1) and (1, 2) ran faster, (0, 0)
  // did not (2.0 and 4.0 ms: median 3.0).
  EXPECT_THAT(output, HasSubstr("| a/k_jump_2 | 2 | 2 | 3.000 | 1 of 3 | 0 % | 3 of 3 | 2 (1, 2.000 ms) |"));
  EXPECT_THAT(output, Not(HasSubstr("b/k_walk_1"))) << "a copy of a store read twice";
  EXPECT_THAT(output, HasSubstr("| k_walk | 1 | 1 | 100 % | 100 % | 1 |"));
  // Medians: a quarter and a third of the neighbours tested; 50 % and 0 % near the fastest.
  EXPECT_THAT(output, HasSubstr("| k_jump | 2 | 0 | 29 % | 25 % | 0 |"));
}

TEST_F(NeighbourhoodCoverage, RefusesAStoreOfAnotherSpaceAndAFolderWithoutStores) {
  store("a", "k_other_1", {{8, 1.0, "ok"}});
  EXPECT_THAT(run("a", 1), HasSubstr("holds a configuration index beyond the 8 of space.csv: another space's store"));
  std::filesystem::create_directories(dir_ / "empty");
  EXPECT_THAT(run("empty", 1), HasSubstr("no results stores (*.db) in empty"));
}

}  // namespace
