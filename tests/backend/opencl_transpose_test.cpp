// The transpose benchmark's OpenCL kernel, through the OpenCL backend (PoCL in CI), against
// its CPU reference: every configuration must transpose exactly.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "measure/validation.hpp"
#include "steer/backend.hpp"
#include "steer/reference.hpp"
#include "steer/space.hpp"
#include "steer/spec.hpp"
#include "tuner/kernel_problem.hpp"

namespace steer {
namespace {

namespace fs = std::filesystem;

const fs::path kSpecPath = fs::path(STEER_SOURCE_DIR) / "kernels" / "transpose" / "spec.json";

// Non-square, so that a mix-up of M and N shows; 64 × 3 columns hold the widest tile
// (TILE_SIZE_X · VECTOR_TYPE = 64) three times.
ProblemSize test_size() { return {.name = "test", .variables = {{"M", 128}, {"N", 192}}}; }

std::vector<float> as_floats(std::span<const std::byte> bytes) {
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

TEST(TransposeReference, TransposesAndRefusesSizesTheKernelsCannotCover) {
  const ProblemSize size = test_size();
  std::vector<float> matrix(128 * 192);
  for (std::size_t i = 0; i < matrix.size(); ++i) matrix[i] = static_cast<float>(i);
  HostArgument in{.name = "in", .type = ElementType::F32};
  in.data.resize(matrix.size() * sizeof(float));
  std::memcpy(in.data.data(), matrix.data(), in.data.size());
  const std::vector<HostArgument> arguments{in};

  ReferenceOutputs outputs{std::vector<std::byte>(in.data.size())};
  find_reference("transpose")(ReferenceInput{size, arguments}, outputs);
  const std::vector<float> out = as_floats(outputs[0]);
  for (int row = 0; row < 128; ++row)
    for (int column = 0; column < 192; ++column)
      ASSERT_EQ(out[column * 128 + row], matrix[row * 192 + column]) << "in[" << row << "][" << column << "]";

  const ProblemSize ragged{.name = "ragged", .variables = {{"M", 96}, {"N", 256}}};
  std::vector<HostArgument> ragged_arguments{in};
  ragged_arguments[0].data.resize(96 * 256 * sizeof(float));
  ReferenceOutputs ragged_outputs{std::vector<std::byte>(96 * 256 * sizeof(float))};
  EXPECT_THROW(find_reference("transpose")(ReferenceInput{ragged, ragged_arguments}, ragged_outputs), Error);
}

}  // namespace
}  // namespace steer
