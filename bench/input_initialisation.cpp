// Filling a spec's "random" input buffer: 64 M floats (256 MB; conv's input at the h200 size
// is 6·10⁸) with initialise_buffer on one thread and on all, beside a fill through
// std::mt19937_64 and std::uniform_real_distribution, one element after another, which is how
// such buffers were filled before (and what a straightforward C++ host program does). Setting
// up the inputs is paid once per tuning, before its first test.
//
//   build/bench/input_initialisation
//
// Counters: bytes_per_second of the filled buffer.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "steer/spec.hpp"
#include "tuner/kernel_problem.hpp"

namespace {

constexpr std::uint64_t kElements = std::uint64_t{64} << 20;

steer::Argument random_floats() {
  steer::Argument argument;
  argument.name = "in";
  argument.type = steer::ElementType::F32;
  argument.init.kind = steer::Initialiser::Kind::Random;
  argument.init.seed = 7;
  argument.init.low = -1;
  argument.init.high = 1;
  return argument;
}

void BM_InitialiseRandomFloats(benchmark::State& state) {
  const steer::Argument argument = random_floats();
  const auto threads = static_cast<std::size_t>(state.range(0));  // 0: all the hardware's
  for (auto _ : state) {
    std::vector<std::byte> bytes = steer::initialise_buffer(argument, kElements, threads);
    benchmark::DoNotOptimize(bytes.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kElements * sizeof(float)));
}

void BM_StdDistributionRandomFloats(benchmark::State& state) {
  for (auto _ : state) {
    std::vector<std::byte> bytes(kElements * sizeof(float));
    auto* out = reinterpret_cast<float*>(bytes.data());
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (std::uint64_t i = 0; i < kElements; ++i) out[i] = dist(rng);
    benchmark::DoNotOptimize(bytes.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kElements * sizeof(float)));
}

BENCHMARK(BM_InitialiseRandomFloats)->Arg(1)->Arg(0)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_StdDistributionRandomFloats)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
