// CPU reference of the gemm and gemm_full benchmarks: C = alpha·A·B + beta·C in float, with
// the products accumulated in double (the kernels accumulate in float; the spec's tolerance
// allows for the difference). Layout as in kernel.cu: A is M × K column-major (A[k·M + m]),
// B is K × N row-major (B[k·N + n]), C is M × N column-major (C[n·M + m]).
//
// Blocked for the cache: a task computes a block of kRows × kColumns elements of C, keeping
// its accumulators (16 KiB of doubles) in L1 while it walks k; the tasks are shared out over
// the hardware threads. 4096³ takes a few seconds on 16 cores.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "steer/reference.hpp"

namespace {

constexpr std::int64_t kRows = 128;    // of C per task (m)
constexpr std::int64_t kColumns = 16;  // of C per task (n)

void gemm_reference(const steer::ReferenceInput& input, steer::ReferenceOutputs& outputs) {
  const std::int64_t M = input.variable("M"), N = input.variable("N"), K = input.variable("K");
  // The kernels read A and C in vectors of up to 4 along m, and B along n.
  if (M <= 0 || N <= 0 || K <= 0 || M % 4 != 0 || N % 4 != 0)
    throw steer::Error(fmt::format("gemm: M ({}) and N ({}) must be positive multiples of 4, K ({}) positive", M, N, K));
  if (M * K >= (std::int64_t{1} << 31) || K * N >= (std::int64_t{1} << 31) || M * N >= (std::int64_t{1} << 31))
    throw steer::Error(fmt::format("gemm: M·K, K·N and M·N must stay below 2^31 (int indices in the kernels)"));
  const std::vector<float> A = input.buffer<float>("A", static_cast<std::size_t>(M * K));
  const std::vector<float> B = input.buffer<float>("B", static_cast<std::size_t>(K * N));
  const std::vector<float> C0 = input.buffer<float>("C", static_cast<std::size_t>(M * N));
  const double alpha = input.scalar<float>("alpha"), beta = input.scalar<float>("beta");
  if (outputs.size() != 1 || outputs[0].size() != static_cast<std::size_t>(M * N) * sizeof(float))
    throw steer::Error("gemm reference: expected one output, C, of M·N floats");

  std::vector<float> C(static_cast<std::size_t>(M * N));
  const std::int64_t row_blocks = (M + kRows - 1) / kRows, column_blocks = (N + kColumns - 1) / kColumns;
  const std::int64_t tasks = row_blocks * column_blocks;
  std::atomic<std::int64_t> next{0};
  auto work = [&] {
    std::vector<double> acc(kRows * kColumns), a(kRows);
    for (std::int64_t task = next++; task < tasks; task = next++) {
      // Consecutive tasks share a block of rows, so its strip of A stays in cache.
      const std::int64_t m0 = task / column_blocks * kRows, n0 = task % column_blocks * kColumns;
      const std::int64_t rows = std::min(kRows, M - m0), columns = std::min(kColumns, N - n0);
      std::fill(acc.begin(), acc.end(), 0.0);
      for (std::int64_t k = 0; k < K; ++k) {
        const float* a_row = A.data() + k * M + m0;
        for (std::int64_t i = 0; i < rows; ++i) a[i] = a_row[i];
        const float* b_row = B.data() + k * N + n0;
        for (std::int64_t j = 0; j < columns; ++j) {
          const double b = b_row[j];
          double* column = acc.data() + j * kRows;
          for (std::int64_t i = 0; i < rows; ++i) column[i] += a[i] * b;
        }
      }
      for (std::int64_t j = 0; j < columns; ++j)
        for (std::int64_t i = 0; i < rows; ++i) {
          const std::int64_t index = (n0 + j) * M + m0 + i;
          // beta == 0 ignores C, as in BLAS and the kernels.
          const double old = beta == 0.0 ? 0.0 : beta * C0[index];
          C[index] = static_cast<float>(alpha * acc[j * kRows + i] + old);
        }
    }
  };
  const auto threads = std::clamp<std::int64_t>(std::thread::hardware_concurrency(), 1, tasks);
  {
    std::vector<std::jthread> workers;
    for (std::int64_t t = 1; t < threads; ++t) workers.emplace_back(work);
    work();
  }  // the workers join here
  std::memcpy(outputs[0].data(), C.data(), outputs[0].size());
}

}  // namespace

STEER_REGISTER_REFERENCE("gemm", gemm_reference);
