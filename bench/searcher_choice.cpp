// What one choice of the model-based default searcher (`surrogate`) costs, replayed on the
// H200 recordings of gemm, conv and transpose: proposing a configuration, guessing the next
// choice meanwhile and taking in its result, averaged over tests 1–300 and over tests
// 301–400. Up to `max_points` (300) measurements the Gaussian process grows by one row a
// test; past it each choice keeps a new selection of 300 and refits (docs/searchers.md,
// `bayes`), so the second figure is the steady cost of a long tuning. gemm (5,788
// configurations) and conv (5,248) score 1,000 random candidates a choice; transpose (1,836),
// under 4 x 1,000, scores every untested one. Each is timed on one thread and on the
// machine's cores, at most 8, as a run on a device lends them (Searcher::use_threads); the
// choices are the same.
//
//   build/bench/searcher_choice
//
// Counters: ms_per_choice (proposing, guessing the next choice and taking in the result),
// of_which_guessing.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "steer/recording.hpp"
#include "steer/searcher.hpp"

namespace {

const steer::Recording& recording(const std::string& name) {
  static std::map<std::string, steer::Recording> loaded;
  auto it = loaded.find(name);
  if (it == loaded.end()) {
    const std::filesystem::path file = std::filesystem::path(STEER_SOURCE_DIR) / "data/h200" / (name + ".db.gz");
    it = loaded.emplace(name, steer::Recording::load(file)).first;
  }
  return it->second;
}

// Tests `first` to `last` (from 1) of a run of `surrogate`, seed 1, on `threads` threads, timed;
// those before untimed. Each choice is timed with the 7 guesses of the next one that a
// device's loop asks for while the test runs (Searcher::likely_next, `--guesses`).
void choices(benchmark::State& state, const std::string& name, int first, int last, unsigned threads) {
  const steer::Recording& replayed = recording(name);
  double total_ms = 0, guess_ms = 0;
  int timed = 0;
  for (auto _ : state) {
    state.PauseTiming();
    steer::SearcherOptions options;
    options.seed = 1;
    auto searcher = steer::make_searcher("surrogate", options);
    searcher->use_threads(threads);
    searcher->start(replayed.space());
    for (int test = 1; test <= last; ++test) {
      const bool timing = test >= first;
      if (timing) state.ResumeTiming();
      const auto start = std::chrono::steady_clock::now();
      const std::vector<steer::Proposal> proposals = searcher->propose(1);
      if (proposals.empty()) {
        if (timing) state.PauseTiming();
        break;
      }
      const auto guessing = std::chrono::steady_clock::now();
      searcher->likely_next(7);  // what the loop compiles ahead while the test runs
      const auto guessed = std::chrono::steady_clock::now();
      searcher->observe(replayed.replay(proposals.front().config));
      if (timing) {
        total_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        guess_ms += std::chrono::duration<double, std::milli>(guessed - guessing).count();
        ++timed;
        state.PauseTiming();
      }
    }
    state.ResumeTiming();
  }
  state.counters["ms_per_choice"] = timed > 0 ? total_ms / timed : 0;
  state.counters["of_which_guessing"] = timed > 0 ? guess_ms / timed : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned cores = std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
  for (const std::string name : {"gemm_h200", "conv_h200", "transpose_h200"}) {
    for (const std::pair<int, int>& range : {std::pair{1, 300}, std::pair{301, 400}}) {
      for (const unsigned threads : {1u, cores}) {
        const int first = range.first, last = range.second;
        const std::string title = "choices/" + name + "_tests_" + std::to_string(first) + "_to_" +
                                  std::to_string(last) + "/threads:" + std::to_string(threads);
        benchmark::RegisterBenchmark(title.c_str(), [name, first, last, threads](benchmark::State& state) {
          choices(state, name, first, last, threads);
        })->Unit(benchmark::kMillisecond)->Iterations(2);
        if (cores == 1) break;
      }
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
