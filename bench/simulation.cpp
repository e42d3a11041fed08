// Simulated tuning: 1,000 random-search runs (the paper's protocol, method.md §8) against a
// synthetic recording over the gemm benchmark's space (kernels/gemm/spec.json, every valid
// configuration "measured"). Runtimes come from a fixed-seed log-normal model, so the
// well-performing share, and hence the tests per run, is the same on every machine.
//
//   build/bench/simulation
//
// Counters: configurations, well_performing (within 1.1x of the best), mean_tests.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <random>

#include "steer/eval.hpp"
#include "steer/spec.hpp"

namespace {

steer::Recording synthetic_gemm_recording() {
  const steer::Spec spec = steer::load_spec(std::filesystem::path(STEER_SOURCE_DIR) / "kernels/gemm/spec.json");
  const steer::Space space = steer::Space::build(spec.space);
  steer::ImportedRecording imported;
  imported.device = "synthetic";
  imported.kernel = spec.name;
  for (const steer::Parameter& parameter : space.parameters()) imported.parameters.push_back({parameter.name, parameter.values});
  std::mt19937_64 rng(2024);
  std::lognormal_distribution<double> runtime_ms(0.0, 0.5);  // median 1 ms, a long slow tail
  std::uniform_real_distribution<double> compile_ms(300, 900);
  for (steer::ConfigIndex config = 0; config < space.size(); ++config) {
    steer::Result result;
    for (std::size_t p = 0; p < space.parameters().size(); ++p) {
      result.configuration.emplace_back(space.parameters()[p].name, space.value(config, p));
    }
    result.status = steer::Status::Ok;
    result.time = steer::TimingStats::from_samples({runtime_ms(rng)});
    result.compile_ms = compile_ms(rng);
    imported.results.push_back(std::move(result));
  }
  return steer::Recording::from_import(imported, spec.space);
}

void random_search_1000_runs(benchmark::State& state) {
  const steer::Recording recording = synthetic_gemm_recording();
  steer::EvaluationOptions options;
  options.runs = 1000;
  options.threads = static_cast<unsigned>(state.range(0));
  steer::Evaluation evaluation;
  for (auto _ : state) {
    evaluation = steer::evaluate(recording, {"random"}, options);
    benchmark::DoNotOptimize(evaluation);
  }
  std::uint64_t well_performing = 0;
  for (steer::ConfigIndex config = 0; config < recording.space().size(); ++config) {
    if (recording.runtime_ms(config) <= evaluation.target_ms) ++well_performing;
  }
  state.counters["configurations"] = static_cast<double>(evaluation.configs);
  state.counters["well_performing"] = static_cast<double>(well_performing);
  state.counters["mean_tests"] = evaluation.searchers[0].mean_tests;
}

BENCHMARK(random_search_1000_runs)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
