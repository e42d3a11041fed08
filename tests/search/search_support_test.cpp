// Specification of the helpers the searchers share (src/search/search_support.hpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "search/search_support.hpp"
#include "steer/space.hpp"

namespace steer {
namespace {

// A and B are a block's two sides (one value list), D a third of that list no larger than A,
// C another list: A, B and D can be exchanged, C with none.
Space sides_space() {
  SpaceDefinition def;
  def.add_parameter("A", {8, 16, 32});
  def.add_parameter("B", {8, 16, 32});
  def.add_parameter("C", {2, 8});
  def.add_parameter("D", {8, 16, 32});
  def.add_constraint("D <= A");
  return Space::build(def);
}

std::vector<std::string> keys(const Space& space, const std::vector<ConfigIndex>& configs) {
  std::vector<std::string> out;
  for (ConfigIndex c : configs) out.push_back(space.key(c));
  return out;
}

TEST(Exchanges, SwapTwoParametersOfOneValueListEachPairOnce) {
  const Space space = sides_space();
  const ConfigIndex from = space.index_of_key("A=32,B=16,C=8,D=8");
  // A with B, and B with D; A with D would break D <= A.
  EXPECT_EQ(keys(space, search::exchanges(space, from)),
            (std::vector<std::string>{"A=16,B=32,C=8,D=8", "A=32,B=8,C=8,D=16"}));
}

TEST(Exchanges, LeaveOutEqualValuesOtherListsAndInvalidResults) {
  const Space space = sides_space();
  // A and D are equal; C shares their value 8 but not their list; B with D breaks D <= A.
  EXPECT_EQ(keys(space, search::exchanges(space, space.index_of_key("A=8,B=16,C=8,D=8"))),
            (std::vector<std::string>{"A=16,B=8,C=8,D=8"}));
  EXPECT_TRUE(search::exchanges(space, space.index_of_key("A=8,B=8,C=2,D=8")).empty());
}

}  // namespace
}  // namespace steer
