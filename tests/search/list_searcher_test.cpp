// The list searcher tests the configurations of a file, in the file's order, once each, and
// refuses a file it cannot read whole before any test runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "steer/error.hpp"
#include "steer/searcher.hpp"

namespace steer {
namespace {

namespace fs = std::filesystem;

Space small_space() {
  SpaceDefinition def;
  def.add_parameter("X", std::vector<Value>{1, 2, 4, 8});
  def.add_parameter("Y", std::vector<Value>{1, 2, 3});
  def.add_constraint("X * Y <= 8", "fits");
  return Space::build(def);
}

class ListSearcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() /
            ("steer_list_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + ".txt");
  }
  void TearDown() override { fs::remove(path_); }
  std::unique_ptr<Searcher> searcher_for(const std::string& text) {
    std::ofstream(path_) << text;
    return make_searcher("list", SearcherOptions{.settings = {{"file", path_.string()}}});
  }
  std::string error_of(const std::string& text) {
    try {
      searcher_for(text)->start(space_);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }
  fs::path path_;
  Space space_ = small_space();
};

TEST_F(ListSearcherTest, ProposesTheFilesConfigurationsInOrderOnceEach) {
  auto searcher = searcher_for(
      "# near the best\n"
      "X=4,Y=2\n"
      "\n"
      "  Y=1,X=8  \n"       // any parameter order, surrounding blanks
      "X=4.0,Y=2\n"         // the same configuration again, numerically
      "X=1,Y=3\r\n");       // a Windows line end
  searcher->start(space_);
  std::vector<Proposal> first = searcher->propose(2);
  std::vector<Proposal> rest = searcher->propose(10);
  ASSERT_EQ(first.size(), 2u);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(space_.key(first[0].config), "X=4,Y=2");
  EXPECT_EQ(space_.key(first[1].config), "X=8,Y=1");
  EXPECT_EQ(space_.key(rest[0].config), "X=1,Y=3");
  EXPECT_TRUE(searcher->propose(10).empty());
}

TEST_F(ListSearcherTest, NamesTheLineOfAnInvalidConfiguration) {
  std::string error = error_of("X=1,Y=1\nX=8,Y=3\n");
  EXPECT_NE(error.find(":2:"), std::string::npos) << error;
  EXPECT_NE(error.find("breaks a constraint"), std::string::npos) << error;
}

TEST_F(ListSearcherTest, NamesAnUnknownParameterOrValueOrAMissingOne) {
  EXPECT_NE(error_of("X=1,Z=1\n").find("no parameter 'Z'"), std::string::npos);
  EXPECT_NE(error_of("X=3,Y=1\n").find("X=3 is not one of the parameter's values (1, 2, 4, 8)"), std::string::npos);
  EXPECT_NE(error_of("X=1\n").find("no value given for Y"), std::string::npos);
  EXPECT_NE(error_of("X=1,Y\n").find("'Y' is not NAME=VALUE"), std::string::npos);
}

TEST_F(ListSearcherTest, NeedsAReadableFile) {
  EXPECT_THROW(make_searcher("list", SearcherOptions{}), Error);
  auto searcher = make_searcher("list", SearcherOptions{.settings = {{"file", "/nonexistent/list.txt"}}});
  try {
    searcher->start(space_);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/list.txt"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_searcher("list", SearcherOptions{.settings = {{"file", "x"}, {"fil", "y"}}}), Error);
}

}  // namespace
}  // namespace steer
