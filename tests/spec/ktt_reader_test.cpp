// KTT tuning files: the ConfigurationSpace section becomes the tuning space.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "steer/error.hpp"
#include "steer/space.hpp"
#include "steer/spec.hpp"

namespace steer {
namespace {

using ::testing::HasSubstr;

const std::string kDataDir = std::string(STEER_SOURCE_DIR) + "/tests/spec/data/";

std::string error_of(const std::string& json) {
  try {
    parse_spec(json, "tuning.json");
  } catch (const Error& error) {
    return error.what();
  }
  ADD_FAILURE() << "no error for:\n" << json;
  return {};
}

TEST(spec_ktt, ReadsTheConfigurationSpace) {
  Spec spec = load_spec(kDataDir + "ktt_reduction.json");
  EXPECT_EQ(spec.name, "reduce");  // KernelSpecification.KernelName
  EXPECT_FALSE(spec.kernel.has_value());
  EXPECT_TRUE(spec.sizes.empty());

  const auto& parameters = spec.space.parameters();
  ASSERT_EQ(parameters.size(), 5u);
  EXPECT_EQ(parameters[1].name, "ITEMS");
  EXPECT_EQ(parameters[1].values, (std::vector<Value>{1, 2, 4, 8}));
  EXPECT_EQ(parameters[3].type, ValueType::Bool);
  EXPECT_EQ(parameters[4].type, ValueType::Float);  // Type "float" turns 1 into 1.0
  ASSERT_EQ(spec.space.constraints().size(), 2u);
  EXPECT_EQ(spec.space.constraints()[1].label, "ConfigurationSpace.Conditions[1]");

  // (BLOCK, ITEMS, UNROLL) with BLOCK * ITEMS <= 512 and UNROLL <= ITEMS: 40; times 2 x 3.
  EXPECT_EQ(Space::build(spec.space).size(), 240u);
}

TEST(spec_ktt, ReadsOlderFilesWithJsonValueLists) {
  Spec spec = parse_spec(R"({"ConfigurationSpace": {"TuningParameters": [
      {"Name": "A", "Type": "UnsignedInt", "Values": [1, 2, 4]},
      {"Name": "B", "Type": "Double", "Values": [1, 2.5]}]}})",
                         "old_tuning.json");
  EXPECT_EQ(spec.name, "old_tuning");  // no KernelName: the file's stem
  EXPECT_EQ(spec.space.parameters()[0].values, (std::vector<Value>{1, 2, 4}));
  EXPECT_EQ(spec.space.parameters()[1].values, (std::vector<Value>{1.0, 2.5}));
}

TEST(spec_ktt, ReportsProblemsWithTheirPath) {
  EXPECT_EQ(error_of(R"({"ConfigurationSpace": {"TuningParameters": [
      {"Name": "A", "Type": "uint", "Values": "[1, -2]"}]}})"),
            "tuning.json: ConfigurationSpace.TuningParameters[0].Values: -2 is negative, but the parameter's Type is uint");
  EXPECT_EQ(error_of(R"({"ConfigurationSpace": {"TuningParameters": [
      {"Name": "A", "Type": "uint", "Values": "[1]"}],
      "Conditions": [{"Parameters": ["B"], "Expression": "B > 0"}]}})"),
            "tuning.json: ConfigurationSpace.Conditions[0].Parameters[0]: 'B' is not a tuning parameter");
  EXPECT_EQ(error_of(R"({"ConfigurationSpace": {"TuningParameters": [
      {"Name": "A", "Type": "uint", "Range": {"Lower": 1, "Upper": 4}}]}})"),
            "tuning.json: ConfigurationSpace.TuningParameters[0]: unknown key 'Range'; expected one of: Name, Type, Values");
}

TEST(spec_ktt, ConditionMayUseOnlyTheParametersItLists) {
  try {
    parse_spec(R"({"ConfigurationSpace": {"TuningParameters": [
        {"Name": "A", "Type": "uint", "Values": "[1, 2]"}, {"Name": "B", "Type": "uint", "Values": "[1, 2]"}],
        "Conditions": [{"Parameters": ["A"], "Expression": "A <= B"}]}})",
               "tuning.json");
    FAIL() << "no error";
  } catch (const ExpressionError& error) {
    EXPECT_THAT(error.what(), HasSubstr("tuning.json: ConfigurationSpace.Conditions[0].Expression: "));
    EXPECT_THAT(error.what(), HasSubstr("'B'"));
    EXPECT_EQ(error.position(), 5u);
  }
}

}  // namespace
}  // namespace steer
