// One profiling step of the profile-based searcher over the 205,216 configurations of
// kernels/gemm_full: eq. 12 for every configuration, eq. 13, and the weighted draw of the
// n = 5 configurations to test next (method.md §6). The budget is 10 ms per step.
//
//   build/bench/profile_based_scoring
//
// The counter model is trained on synthetic counters of a random sample of the space (there
// is no gemm_full recording with counters yet), which does not matter here: a step's cost
// depends on the number of configurations and of counters in the reaction, not on the
// values. Predicting the whole space happens once, at the searcher's start, and is timed
// separately (PredictWholeSpace).
//
// Benchmarks:
//   ScoreNormaliseDraw/N  eq. 12 + eq. 13 + 5 draws with N counters in the reaction (14: every
//                         counter PC' can name, the worst case)
//   SearcherStep          the searcher through its interface: observing a profiled test runs
//                         the analysis (expert system), the reaction, eq. 12 and 13 over the
//                         space and the draw of the next 5 tests
//   PredictWholeSpace     a tree model's predictions of 26 counters for every configuration
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <memory>

#include "search/profile_scoring.hpp"
#include "steer/error.hpp"
#include "steer/expert.hpp"
#include "steer/model.hpp"
#include "steer/searcher.hpp"
#include "steer/space.hpp"
#include "steer/spec.hpp"

namespace {

const steer::Space& gemm_full() {
  static const steer::Space space = steer::Space::build(
      steer::load_spec(std::filesystem::path(STEER_SOURCE_DIR) / "kernels/gemm_full/spec.json").space);
  return space;
}

// Synthetic but structured counters: products and quotients of the parameters, as real ones.
steer::TrainingSet synthetic_training_set(const steer::Space& space) {
  steer::TrainingSet data;
  data.parameters = space.parameters();
  for (const steer::CounterInfo& info : steer::canonical_counter_infos()) data.counters.emplace_back(info.abbreviation);
  std::mt19937_64 rng(1);
  for (steer::ConfigIndex c : space.sample(rng, 2000)) {
    std::vector<double> features;
    for (const steer::Value& v : space.values(c)) features.push_back(v.as_double());
    std::vector<double> targets;
    for (std::size_t k = 0; k < data.counters.size(); ++k) {
      const double a = features[k % features.size()], b = features[(3 * k + 1) % features.size()];
      targets.push_back(1e6 * (1 + a) / (1 + b) + 100 * static_cast<double>(k));
    }
    data.features.push_back(std::move(features));
    data.targets.push_back(std::move(targets));
  }
  data.provenance.source = "synthetic (bench/profile_based_scoring.cpp)";
  data.provenance.kernel = "gemm_full";
  data.provenance.device = "NVIDIA H200";
  data.provenance.family = steer::CounterFamily::VoltaPlus;
  data.provenance.device_facts = steer::known_device_facts("NVIDIA H200");
  data.provenance.rows = data.features.size();
  return data;
}

const steer::CounterModel& model() {
  static const steer::CounterModel trained =
      steer::CounterModel::train(synthetic_training_set(gemm_full()), {.kind = steer::ModelKind::Tree});
  return trained;
}

const steer::PredictedCounters& predicted() {
  static const steer::PredictedCounters all = model().predict(gemm_full());
  return all;
}

// Every counter PC' can name: memory, instruction types, issue, SM efficiency, threads.
steer::CounterValues full_reaction(std::size_t counters) {
  const char* names[] = {"DRAM_RT",  "DRAM_WT",  "L2_RT",     "L2_WT",     "SHR_LT",    "SHR_WT",       "TEX_RWT",
                         "LOC_O",    "INST_F32", "INST_INT",  "INST_LDST", "INST_CONT", "INST_ISSUE_U", "threads"};
  steer::CounterValues reaction;
  for (std::size_t i = 0; i < counters && i < std::size(names); ++i) {
    reaction[names[i]] = (i % 3 == 0 ? 0.4 : -0.3) - 0.01 * static_cast<double>(i);
  }
  return reaction;
}

void ScoreNormaliseDraw(benchmark::State& state) {
  const steer::PredictedCounters& counters = predicted();
  const auto terms = steer::search::reaction_terms(full_reaction(static_cast<std::size_t>(state.range(0))), counters);
  const std::size_t n = counters.configs;
  std::vector<float> scores(n), weights(n);
  std::vector<std::uint8_t> explored(n, 0);
  for (std::size_t c = 0; c < n; c += 97) explored[c] = 1;  // some of the space tested
  steer::search::Random random(1);
  std::uint64_t profiled = 12345;
  for (auto _ : state) {
    steer::search::score_configurations(terms, profiled, scores);
    const double total = steer::search::normalise_scores(scores, explored, {}, weights);
    auto drawn = steer::search::weighted_draws(weights, total, 5, random);
    benchmark::DoNotOptimize(drawn);
    profiled = (profiled + 7919) % n;
  }
  state.counters["configurations"] = static_cast<double>(n);
  state.counters["reaction_counters"] = static_cast<double>(terms.size());
}

// Canonical counters of a memory-bound profiled test on the H200 (every expert input). Each
// test is a little faster than the one before, so that every batch holds a new fastest
// configuration and every step profiles (and scores) again, never reusing an analysis.
steer::Result profiled_result(steer::ConfigIndex config) {
  static double runtime_ms = 1000;
  steer::Result r;
  r.config_index = config;
  r.status = steer::Status::Ok;
  r.time.median_ms = runtime_ms -= 1e-4;
  r.device = "NVIDIA H200";
  r.counters = {{"DRAM_U", 8.5},        {"DRAM_RT", 4e7},   {"DRAM_WT", 1e7},       {"L2_U", 6},
                {"L2_RT", 9e7},         {"L2_WT", 2e7},     {"TEX_U", 7},           {"TEX_RWT", 3e7},
                {"LOC_O", 1e5},         {"SHR_U", 5},       {"SHR_LT", 5e7},        {"SHR_WT", 1e7},
                {"SM_E", 92},           {"OCC", 60},        {"INST_F32", 8e9},      {"INST_F64", 0},
                {"INST_INT", 2e9},      {"INST_MISC", 1e8}, {"INST_LDST", 1e9},     {"INST_CONT", 2e8},
                {"INST_BCONV", 1e7},    {"INST_EXE", 4e8},  {"INST_ISSUE_U", 45},   {"WARP_E", 100},
                {"WARP_NP_E", 98},      {"threads", 65536}};
  return r;
}

// Answers the searcher's plain proposals until it asks for a profiled test, and returns that.
steer::Proposal next_profiled(steer::Searcher& searcher) {
  for (;;) {
    std::vector<steer::Proposal> proposals = searcher.propose(1);
    if (proposals.empty()) throw steer::Error("the searcher stopped before the space was explored");
    if (proposals[0].measure.counters) return proposals[0];
    steer::Result r = profiled_result(proposals[0].config);
    r.counters.clear();
    searcher.observe(r);
  }
}

void SearcherStep(benchmark::State& state) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("steer_bench_model_" + std::to_string(getpid()) + ".json");
  model().save(file);
  auto searcher = steer::make_searcher("profile-based", {.seed = 1, .model_path = file.string(), .settings = {}});
  searcher->start(gemm_full());  // predicts the whole space once, outside the timed loop
  std::filesystem::remove(file);
  for (auto _ : state) {
    state.PauseTiming();
    const steer::Result profiled = profiled_result(next_profiled(*searcher).config);
    state.ResumeTiming();
    // One profiling step: bottleneck analysis, reaction, eq. 12 and 13 over the whole space,
    // the weighted draw of the next 5 tests.
    searcher->observe(profiled);
  }
  state.counters["configurations"] = static_cast<double>(gemm_full().size());
}

void PredictWholeSpace(benchmark::State& state) {
  for (auto _ : state) {
    steer::PredictedCounters all = model().predict(gemm_full());
    benchmark::DoNotOptimize(all);
  }
  state.counters["configurations"] = static_cast<double>(gemm_full().size());
  state.counters["counters"] = static_cast<double>(model().counters().size());
}

BENCHMARK(ScoreNormaliseDraw)->Arg(6)->Arg(14)->Unit(benchmark::kMillisecond);
BENCHMARK(SearcherStep)->Unit(benchmark::kMillisecond);
BENCHMARK(PredictWholeSpace)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
