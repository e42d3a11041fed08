// CPU reference of the dgemm_energy benchmark: C = alpha·A·B + beta·C in double, accumulated
// in double (in another order than the kernels; the spec's tolerance allows for it). Layout
// as in kernel.cu, column-major without transposes: A is M × K (A[k·M + m]), B is K × N
// (B[n·K + k]), C is M × N (C[n·M + m]).
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

void dgemm_energy_reference(const steer::ReferenceInput& input, steer::ReferenceOutputs& outputs) {
  const std::int64_t M = input.variable("M"), N = input.variable("N"), K = input.variable("K");
  if (M <= 0 || N <= 0 || K <= 0)
    throw steer::Error(fmt::format("dgemm_energy: M ({}), N ({}) and K ({}) must be positive", M, N, K));
  if (M * K >= (std::int64_t{1} << 31) || K * N >= (std::int64_t{1} << 31) || M * N >= (std::int64_t{1} << 31))
    throw steer::Error(fmt::format("dgemm_energy: M·K, K·N and M·N must stay below 2^31 (int indices in the kernels)"));
  const std::vector<double> A = input.buffer<double>("A", static_cast<std::size_t>(M * K));
  const std::vector<double> B = input.buffer<double>("B", static_cast<std::size_t>(K * N));
  const std::vector<double> C0 = input.buffer<double>("C", static_cast<std::size_t>(M * N));
  const double alpha = input.scalar<double>("alpha"), beta = input.scalar<double>("beta");
  if (outputs.size() != 1 || outputs[0].size() != static_cast<std::size_t>(M * N) * sizeof(double))
    throw steer::Error("dgemm_energy reference: expected one output, C, of M·N doubles");

  std::vector<double> C(static_cast<std::size_t>(M * N));
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
        const double* a_row = A.data() + k * M + m0;
        for (std::int64_t i = 0; i < rows; ++i) a[i] = a_row[i];
        for (std::int64_t j = 0; j < columns; ++j) {
          const double b = B[(n0 + j) * K + k];
          double* column = acc.data() + j * kRows;
          for (std::int64_t i = 0; i < rows; ++i) column[i] += a[i] * b;
        }
      }
      for (std::int64_t j = 0; j < columns; ++j)
        for (std::int64_t i = 0; i < rows; ++i) {
          const std::int64_t index = (n0 + j) * M + m0 + i;
          // beta == 0 ignores C, as in BLAS and the kernels.
          const double old = beta == 0.0 ? 0.0 : beta * C0[index];
          C[index] = alpha * acc[j * kRows + i] + old;
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

STEER_REGISTER_REFERENCE("dgemm_energy", dgemm_energy_reference);
