// CPU reference of the transpose benchmark: out (N × M) = transpose of in (M × N), float.
// Tiled so that both matrices are walked a cache-friendly tile at a time, and split into
// bands of output rows over the hardware threads (the H200 size is 32768² = 4 GiB).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "steer/reference.hpp"

namespace {

constexpr std::int64_t kBlock = 64;  // divides M and N (checked)

// Transposes the columns [first_column, last_column) of `in` (rows × columns) into rows of
// `out`, one kBlock² tile at a time. Host buffers are bytes: tiles are copied in and out
// with memcpy rather than aliasing the buffers as floats.
void transpose_band(const std::byte* in, std::byte* out, std::int64_t rows, std::int64_t columns,
                    std::int64_t first_column, std::int64_t last_column) {
  float tile[kBlock][kBlock], transposed[kBlock][kBlock];
  for (std::int64_t c0 = first_column; c0 < last_column; c0 += kBlock) {
    for (std::int64_t r0 = 0; r0 < rows; r0 += kBlock) {
      for (std::int64_t r = 0; r < kBlock; ++r)
        std::memcpy(tile[r], in + ((r0 + r) * columns + c0) * sizeof(float), sizeof tile[r]);
      for (std::int64_t c = 0; c < kBlock; ++c)
        for (std::int64_t r = 0; r < kBlock; ++r) transposed[c][r] = tile[r][c];
      for (std::int64_t c = 0; c < kBlock; ++c)
        std::memcpy(out + ((c0 + c) * rows + r0) * sizeof(float), transposed[c], sizeof transposed[c]);
    }
  }
}

void transpose_reference(const steer::ReferenceInput& input, steer::ReferenceOutputs& outputs) {
  const std::int64_t rows = input.variable("M"), columns = input.variable("N");
  const steer::HostArgument& in = input.argument("in");
  const auto elements = static_cast<std::size_t>(rows * columns);
  if (in.type != steer::ElementType::F32 || in.data.size() != elements * sizeof(float) || outputs.size() != 1 ||
      outputs[0].size() != elements * sizeof(float))
    throw steer::Error(fmt::format("transpose reference: expected float buffers 'in' and 'out' of M·N = {} elements",
                                   elements));
  // The kernels have no bounds checks: their launch covers the matrices exactly.
  if (rows % kBlock != 0 || columns % kBlock != 0)
    throw steer::Error(fmt::format("transpose: M ({}) and N ({}) must be multiples of {}", rows, columns, kBlock));

  const std::int64_t blocks = columns / kBlock;
  const std::int64_t threads = std::clamp<std::int64_t>(std::thread::hardware_concurrency(), 1, blocks);
  std::vector<std::jthread> workers;
  for (std::int64_t t = 0; t < threads; ++t)
    workers.emplace_back(transpose_band, in.data.data(), outputs[0].data(), rows, columns,
                         blocks * t / threads * kBlock, blocks * (t + 1) / threads * kBlock);
}  // the workers join here

}  // namespace

STEER_REGISTER_REFERENCE("transpose", transpose_reference);
