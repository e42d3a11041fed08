// Appending one test's result to the results store: one transaction per test, as a tuning
// writes them (a crash loses at most the test in flight), with a KTT-sized profile (36
// counters) and 32 timed launches. Tests on a GPU take milliseconds, so an append should cost
// well under a millisecond.
//
//   build/bench/store_append
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>
#include <unistd.h>

#include "steer/store.hpp"

namespace {

void BM_AppendOneTest(benchmark::State& state) {
  const auto file = std::filesystem::temp_directory_path() / ("steer_bench_store_" + std::to_string(getpid()) + ".db");
  std::filesystem::remove(file);
  {
    steer::Store store = steer::Store::open(file);
    const std::int64_t tuning = store.tuning({"gemm", "abc123", "NVIDIA H200", "cuda", "N=4096"});
    steer::Result r;
    r.status = steer::Status::Ok;
    r.device = "NVIDIA H200";
    r.problem_size = "N=4096";
    r.configuration = {{"X", steer::Value(0)}};
    for (int i = 0; i < 36; ++i) r.counters["counter_" + std::to_string(i)] = i * 1.5;
    r.time = steer::TimingStats::from_samples(std::vector<double>(32, 1.0));
    int next = 0;
    for (auto _ : state) {
      r.configuration[0].second = steer::Value(++next);
      if (!store.append(tuning, r)) state.SkipWithError("append refused");
    }
  }
  std::filesystem::remove(file);
}

}  // namespace

BENCHMARK(BM_AppendOneTest)->Unit(benchmark::kMillisecond)->Iterations(2000);
BENCHMARK_MAIN();
