#pragma once
// The tuning loop: a searcher proposes, the backend compiles (ahead, on a thread pool),
// runs, times and validates, the store keeps every finished test, the searcher observes.
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "steer/backend.hpp"
#include "steer/objective.hpp"
#include "steer/result.hpp"
#include "steer/searcher.hpp"
#include "steer/space.hpp"
#include "steer/spec.hpp"

namespace steer {

class Store;

// When to stop; the first condition met ends the run. Unset means no limit.
struct StopConditions {
  std::optional<std::uint64_t> tests;       // number of tests (resumed ones included)
  std::optional<double> wall_seconds;
  std::optional<double> space_fraction;     // of the space's valid configurations
  std::optional<double> target_ms;          // stop once a valid test runs at most this fast
};

struct TuneOptions {
  std::string size;                 // problem size name; empty: the spec's default
  StopConditions stop;
  // run.measure applies to every test, on top of what the searcher asks for. A stored
  // test that lacks what is asked for (counters, energy) is measured again and replaced.
  RunOptions run;
  // What "best" means; an objective that needs energy measures it on every test.
  Objective objective;
  int compile_threads = 0;          // 0: hardware threads - 1 (at least 1)
  // Compile proposals on the pool while the device runs. Unless compile_threads is set,
  // a device that runs on the host's cores (PoCL) compiles inline instead: compiling
  // beside it would slow its kernels and make their timings noisy.
  bool compile_ahead = true;
  std::atomic<bool>* interrupt = nullptr;  // set (e.g. by SIGINT) to stop after the current test
  // Called after every test with the result and the loop's running totals.
  std::function<void(const Result&, const struct TuneProgress&)> on_test;
  // Called once per distinct warning (e.g. a metric the device lacks), when it happens.
  std::function<void(const std::string&)> on_warning;
};

struct TuneProgress {
  std::uint64_t tests = 0;          // done so far (resumed ones included)
  std::uint64_t valid = 0;
  std::uint64_t resumed = 0;        // served from the store, not run again
  std::optional<std::uint64_t> planned;  // tests the stop conditions allow, when known
  double elapsed_s = 0;
  std::optional<Result> best;
};

struct TuneSummary {
  std::uint64_t tests = 0, valid = 0, failed = 0, resumed = 0;
  bool interrupted = false;
  bool compiled_ahead = false;      // whether the compile pool ran (see TuneOptions::compile_ahead)
  std::string stop_reason;
  // Wall time, split: setup (load, reference), waiting for compiles, running, validating,
  // and the framework's own overhead (searcher, store, bookkeeping).
  double wall_s = 0, setup_s = 0, compile_wait_s = 0, run_s = 0, validation_s = 0, overhead_s = 0;
  double compile_cpu_s = 0;         // total compiler time, much of it hidden by compiling ahead
  double median_overhead_ms = 0;    // framework time per test (not compile, run or validation)
  std::optional<Result> best;       // by the objective (the fastest for "time")
  std::string objective;            // Objective::name()
  double best_objective = 0;        // the best's objective value (Objective::value)
  double median_valid_ms = 0;       // median runtime of the valid tests
  // Profiling cost over the tests that collected counters: their run time (timing,
  // read-back and profiling) against the same without profiling.
  std::uint64_t profiled = 0;
  double profiling_s = 0;
  double profiled_run_s = 0;        // run time of the profiled tests, profiling included
  double mean_passes = 0;
  double median_pass_overhead_ms = 0;  // per pass, beyond the kernel's own time
  // The time-energy Pareto front of the valid tests with energy (by time).
  std::vector<Result> pareto;
  std::vector<std::string> warnings;
  std::string device;
  std::string problem_size;
  std::vector<Result> results;      // every test, in order
};

// Tunes `spec` on `backend`. With a store, every finished test is committed as it
// completes, and configurations the store already holds for the same spec, device and
// size are served from it instead of being run again (resume).
TuneSummary tune(const Spec& spec, const Space& space, Backend& backend, Searcher& searcher,
                 Store* store, const TuneOptions& options);

}  // namespace steer
