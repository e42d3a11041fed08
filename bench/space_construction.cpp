// Space construction: time to enumerate each benchmark space from its spec file
// (kernels/<name>/spec.json), and what the built space holds. Loading and parsing the JSON
// is outside the timed loop; parsing the constraint expressions is inside it.
//
//   build/bench/space_construction --benchmark_filter='gemm_full|conv'
//
// Counters: configurations (valid), cross_product, groups, memory_bytes (storage the
// built space holds: the sum of its buffers' capacities).
#include <benchmark/benchmark.h>

#include <filesystem>

#include "steer/space.hpp"
#include "steer/spec.hpp"

namespace {

void construct(benchmark::State& state, const char* kernel) {
  const steer::Spec spec = steer::load_spec(std::filesystem::path(STEER_SOURCE_DIR) / "kernels" / kernel / "spec.json");
  for (auto _ : state) {
    steer::Space space = steer::Space::build(spec.space);
    benchmark::DoNotOptimize(space);
  }
  const steer::Space space = steer::Space::build(spec.space);
  state.counters["configurations"] = static_cast<double>(space.size());
  state.counters["cross_product"] = static_cast<double>(space.stats().cross_product);
  state.counters["groups"] = static_cast<double>(space.stats().groups);
  state.counters["memory_bytes"] = static_cast<double>(space.stats().memory_bytes);
}

BENCHMARK_CAPTURE(construct, coulomb, "coulomb")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(construct, transpose, "transpose")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(construct, gemm, "gemm")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(construct, gemm_full, "gemm_full")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(construct, nbody, "nbody")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(construct, conv, "conv")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(construct, pnpoly, "pnpoly")->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
