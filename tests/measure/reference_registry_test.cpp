#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "steer/reference.hpp"

namespace steer {
namespace {

void double_input(const ReferenceInput& input, ReferenceOutputs& outputs) {
  const HostArgument& in = input.argument("in");
  for (std::size_t i = 0; i < in.data.size(); ++i)
    outputs[0][i] = static_cast<std::byte>(2 * std::to_integer<int>(in.data[i]) + input.variable("OFFSET"));
}

STEER_REGISTER_REFERENCE("test_double_input", double_input);

ProblemSize size_with_offset() {
  ProblemSize size;
  size.name = "tiny";
  size.variables = {{"OFFSET", 1}};
  return size;
}

TEST(ReferenceRegistry, StaticRegistrationIsFoundAndCalled) {
  const ProblemSize size = size_with_offset();
  const std::vector<HostArgument> arguments{{.name = "in", .type = ElementType::U8, .data = {std::byte{3}, std::byte{5}}}};
  ReferenceOutputs outputs{std::vector<std::byte>(2)};
  find_reference("test_double_input")(ReferenceInput{size, arguments}, outputs);
  EXPECT_EQ(outputs[0], (std::vector<std::byte>{std::byte{7}, std::byte{11}}));
}

TEST(ReferenceRegistry, BenchmarkReferencesAreLinkedIn) {
  const auto names = registered_references();
  EXPECT_NE(std::find(names.begin(), names.end(), "transpose"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "test_double_input"), names.end());
}

TEST(ReferenceRegistry, UnknownNameListsTheRegisteredOnes) {
  try {
    find_reference("no_such_reference");
    FAIL() << "expected Error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("no_such_reference"), std::string::npos) << message;
    EXPECT_NE(message.find("test_double_input"), std::string::npos) << message;
  }
}

TEST(ReferenceRegistry, RegisteringANameTwiceThrows) {
  EXPECT_THROW(register_reference("test_double_input", double_input), Error);
}

TEST(ReferenceInput, MissingArgumentOrVariableNamesWhatExists) {
  const ProblemSize size = size_with_offset();
  const std::vector<HostArgument> arguments{{.name = "in"}};
  const ReferenceInput input{size, arguments};
  try {
    input.argument("out");
    FAIL() << "expected Error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("arguments: in"), std::string::npos) << error.what();
  }
  try {
    input.variable("N");
    FAIL() << "expected Error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("variables: OFFSET"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace steer
