// The conv benchmark: its CPU reference, and its OpenCL kernel tuned on the OpenCL device
// (PoCL in CI) at the 'small' size, every configuration validated (configurations beyond
// the device's work-group or local-memory limits must fail to launch instead).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "benchmark_tuning.hpp"
#include "steer/reference.hpp"

namespace steer {
namespace {

HostArgument float_buffer(const std::string& name, const std::vector<float>& values) {
  HostArgument argument{.name = name, .type = ElementType::F32};
  argument.data.resize(values.size() * sizeof(float));
  std::memcpy(argument.data.data(), values.data(), argument.data.size());
  return argument;
}

TEST(ConvReference, ConvolvesTheHaloedImageAndRefusesSizesTheKernelsCannotCover) {
  constexpr int width = 512, height = 1024, pitch = width + 8;  // rows padded to a multiple of 4 floats
  std::vector<float> image(static_cast<std::size_t>((height + 6) * pitch)), filter(49);
  for (std::size_t i = 0; i < image.size(); ++i) image[i] = static_cast<float>(i % 97) / 97.0f;
  for (std::size_t t = 0; t < filter.size(); ++t) filter[t] = static_cast<float>(t + 1) / 49.0f;
  const ProblemSize size{.name = "test", .variables = {{"WIDTH", width}, {"HEIGHT", height}}};
  const std::vector<HostArgument> arguments{float_buffer("in", image), float_buffer("filter", filter)};
  ReferenceOutputs outputs{std::vector<std::byte>(static_cast<std::size_t>(width * height) * sizeof(float))};
  find_reference("conv")(ReferenceInput{size, arguments}, outputs);
  std::vector<float> out(static_cast<std::size_t>(width * height));
  std::memcpy(out.data(), outputs[0].data(), outputs[0].size());
  for (const auto& [x, y] : {std::pair{0, 0}, {511, 0}, {0, 1023}, {511, 1023}, {200, 700}}) {
    double expected = 0;
    for (int fy = 0; fy < 7; ++fy)
      for (int fx = 0; fx < 7; ++fx) expected += double{image[(y + fy) * pitch + x + fx]} * filter[fy * 7 + fx];
    EXPECT_FLOAT_EQ(out[y * width + x], static_cast<float>(expected)) << "output (" << x << ", " << y << ")";
  }

  const ProblemSize ragged{.name = "ragged", .variables = {{"WIDTH", 500}, {"HEIGHT", 1024}}};
  EXPECT_THROW(find_reference("conv")(ReferenceInput{ragged, arguments}, outputs), Error);
}

}  // namespace
}  // namespace steer
