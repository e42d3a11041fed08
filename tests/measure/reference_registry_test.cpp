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

namespace steer {
namespace {

std::vector<std::byte> bytes_of(const auto& values) {
  std::vector<std::byte> bytes(sizeof values);
  std::memcpy(bytes.data(), &values, sizeof values);
  return bytes;
}

TEST(ReferenceInput, TypedAccessorsCopyScalarsAndBuffersOfTheRightType) {
  const ProblemSize size = size_with_offset();
  const float values[3] = {1.5f, -2.0f, 4.25f};
  const double alpha = 0.75;
  const std::vector<HostArgument> arguments{
      {.name = "x", .type = ElementType::F32, .data = bytes_of(values)},
      {.name = "alpha", .is_buffer = false, .type = ElementType::F64, .data = bytes_of(alpha)}};
  const ReferenceInput input{size, arguments};
  EXPECT_EQ(input.buffer<float>("x", 2), (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(input.scalar<double>("alpha"), 0.75);
}

TEST(ReferenceInput, TypedAccessorsRejectTheWrongTypeKindOrSize) {
  const ProblemSize size = size_with_offset();
  const float values[2] = {1.0f, 2.0f};
  const std::vector<HostArgument> arguments{{.name = "x", .type = ElementType::F32, .data = bytes_of(values)}};
  const ReferenceInput input{size, arguments};
  EXPECT_THROW(input.buffer<double>("x", 1), Error) << "float buffer read as double";
  EXPECT_THROW(input.buffer<float>("x", 3), Error) << "fewer elements than asked";
  EXPECT_THROW(input.scalar<float>("x"), Error) << "a buffer is not a scalar";
  try {
    input.buffer<float>("x", 3);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace steer
