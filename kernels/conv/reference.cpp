// CPU reference of the conv benchmark: out[y][x] = Σ_{fy, fx < 7} in[y + fy][x + fx] ·
// filter[fy][fx] in double precision, for a HEIGHT × WIDTH output; `in` holds HEIGHT + 6 rows
// of WIDTH + 8 floats (the image with its halo, rows padded to a multiple of 4 floats).
// Output rows are split over the hardware threads (the H200 size has 6·10⁸ outputs).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "steer/reference.hpp"

namespace {

constexpr std::int64_t kFilter = 7;
constexpr std::int64_t kMultiple = 512;  // the largest tile side: the kernels have no bounds checks

void conv_reference(const steer::ReferenceInput& input, steer::ReferenceOutputs& outputs) {
  const std::int64_t width = input.variable("WIDTH"), height = input.variable("HEIGHT");
  if (width <= 0 || height <= 0 || width % kMultiple != 0 || height % kMultiple != 0)
    throw steer::Error(fmt::format("conv: WIDTH ({}) and HEIGHT ({}) must be positive multiples of {}", width, height,
                                   kMultiple));
  const std::int64_t pitch = width + 8;  // WIDTH + 6, rounded up to a multiple of 4
  const steer::HostArgument& in = input.argument("in");
  const steer::HostArgument& filter_argument = input.argument("filter");
  const auto in_elements = static_cast<std::size_t>((height + kFilter - 1) * pitch);
  if (in.type != steer::ElementType::F32 || in.data.size() != in_elements * sizeof(float))
    throw steer::Error(fmt::format("conv reference: 'in' must hold (HEIGHT + 6)·(WIDTH + 8) = {} floats", in_elements));
  if (filter_argument.type != steer::ElementType::F32 ||
      filter_argument.data.size() != static_cast<std::size_t>(kFilter * kFilter) * sizeof(float))
    throw steer::Error("conv reference: 'filter' must hold 49 floats");
  if (outputs.size() != 1 || outputs[0].size() != static_cast<std::size_t>(width * height) * sizeof(float))
    throw steer::Error(fmt::format("conv reference: expected one float output of WIDTH·HEIGHT = {}", width * height));

  double filter[kFilter * kFilter];
  {
    float raw[kFilter * kFilter];
    std::memcpy(raw, filter_argument.data.data(), sizeof raw);
    std::copy(std::begin(raw), std::end(raw), filter);
  }

  auto rows = [&](std::int64_t first, std::int64_t last) {
    std::vector<float> in_row(static_cast<std::size_t>(pitch));
    std::vector<double> acc(static_cast<std::size_t>(width));
    std::vector<float> out_row(static_cast<std::size_t>(width));
    for (std::int64_t y = first; y < last; ++y) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (std::int64_t fy = 0; fy < kFilter; ++fy) {
        std::memcpy(in_row.data(), in.data.data() + static_cast<std::size_t>((y + fy) * pitch) * sizeof(float),
                    in_row.size() * sizeof(float));
        for (std::int64_t fx = 0; fx < kFilter; ++fx) {
          const double tap = filter[fy * kFilter + fx];
          const float* shifted = in_row.data() + fx;
          for (std::size_t x = 0; x < acc.size(); ++x) acc[x] += static_cast<double>(shifted[x]) * tap;
        }
      }
      std::transform(acc.begin(), acc.end(), out_row.begin(), [](double v) { return static_cast<float>(v); });
      std::memcpy(outputs[0].data() + static_cast<std::size_t>(y * width) * sizeof(float), out_row.data(),
                  out_row.size() * sizeof(float));
    }
  };
  const std::int64_t threads = std::clamp<std::int64_t>(std::thread::hardware_concurrency(), 1, height);
  std::vector<std::jthread> workers;
  for (std::int64_t t = 0; t < threads; ++t) workers.emplace_back(rows, height * t / threads, height * (t + 1) / threads);
}  // the workers join here

}  // namespace

STEER_REGISTER_REFERENCE("conv", conv_reference);
