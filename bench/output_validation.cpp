// Output validation of one test's result: a 4096² matrix (gemm's and DGEMM's output at the
// h200 size) against the reference, every element passing. In a timing-only recording on the
// H200 this step was about 17 ms of each ~97 ms test (docs/performance.md), so its speed sets
// part of how fast a large space is recorded.
//
//   build/bench/output_validation
//
// Counters: bytes_per_second over both buffers (actual and expected).
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "measure/validation.hpp"

namespace {

template <typename T>
void BM_ValidateMatrix4096(benchmark::State& state, steer::ElementType type) {
  constexpr std::size_t kElements = std::size_t{4096} * 4096;
  std::vector<T> expected(kElements), actual(kElements);
  for (std::size_t i = 0; i < kElements; ++i) {
    expected[i] = static_cast<T>(1.0 + static_cast<double>(i % 1000) * 1e-3);
    actual[i] = expected[i] * static_cast<T>(1 + 1e-7);  // within rel 1e-5, not equal
  }
  const auto* a = reinterpret_cast<const std::byte*>(actual.data());
  const auto* e = reinterpret_cast<const std::byte*>(expected.data());
  const std::size_t bytes = kElements * sizeof(T);
  for (auto _ : state) {
    steer::ValidationResult result = steer::validate_output(type, {a, bytes}, {e, bytes}, 0.0, 1e-5);
    if (!result.ok) state.SkipWithError("validation failed");
    benchmark::DoNotOptimize(result);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * 2 * static_cast<std::int64_t>(bytes));
}

void BM_ValidateFloat4096(benchmark::State& state) { BM_ValidateMatrix4096<float>(state, steer::ElementType::F32); }
void BM_ValidateDouble4096(benchmark::State& state) { BM_ValidateMatrix4096<double>(state, steer::ElementType::F64); }

BENCHMARK(BM_ValidateFloat4096)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ValidateDouble4096)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
