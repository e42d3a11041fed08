// How many NVRTC compiles a second one process makes on 1, 2, 4, ... threads, and as many
// processes (forked, one thread each): the same 32 configurations of gemm's CUDA kernel (a
// fixed sample of kernels/gemm/spec.json), compiled for sm_90 with the options the CUDA
// backend gives them, split over the threads or processes. Whether compiles made side by side
// in one process run side by side decides what the tuning loop's compile-ahead pool is worth
// and how a replay should model it (docs/simulate.md, "Compiles ahead"); processes show
// whether what holds threads back is shared within a process. NVRTC needs no GPU, so this
// runs on any machine with the CUDA toolkit.
//
// NVRTC 12.9 and later keep what they compile in the CUDA driver's compute cache, where the
// driver library is installed (docs/simulate.md, "NVRTC's compile cache"): compiling a
// configuration again, in any process, then costs a look-up. So BM_NvrtcCompiles and
// BM_NvrtcCompilesForked compile with `--no-cache`, the whole work every time, and
// BM_NvrtcCachedCompiles compiles with the cache, once untimed to fill it and then timed: on
// a machine without the driver library the last is a full compile too.
//
//   build/bench/nvrtc_threads [--benchmark_filter=...]
//
// STEER_SOURCE_DIR, where set, is the checkout whose kernels/gemm it compiles (by default the
// one it was built from), so that a copy of the binary runs on another machine.
//
// Counters: items_per_second, compiles per second of wall time; with threads, cpu_per_wall,
// the process's CPU time over wall time (1 where the compiles take turns, up to the thread
// count where they run side by side).
#include <benchmark/benchmark.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "backend/cuda/nvrtc_compiler.hpp"
#include "steer/backend.hpp"
#include "steer/space.hpp"
#include "steer/spec.hpp"
#include "tuner/kernel_problem.hpp"

namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kConfigurations = 32;

struct Kernel {
  steer::Program program;
  std::vector<steer::KernelInstance> instances;
};

// gemm's program as the tuner builds it at the small size (tuner/kernel_problem.hpp), and
// a fixed sample of its configurations; with `cached` false, NVRTC is told not to use its
// compile cache.
Kernel gemm(bool cached) {
  const char* checkout = std::getenv("STEER_SOURCE_DIR");
  const fs::path folder = fs::path(checkout != nullptr && *checkout != '\0' ? checkout : STEER_SOURCE_DIR) / "kernels" / "gemm";
  const steer::Spec spec = steer::load_spec(folder / "spec.json");
  const steer::Space space = steer::Space::build(spec.space);
  const steer::KernelProblem problem(spec, space, spec.size("small"), steer::Language::Cuda);
  Kernel kernel;
  kernel.program = problem.program();
  if (!cached) kernel.program.compiler_options.emplace_back("--no-cache");
  std::mt19937_64 rng(20261205);
  for (steer::ConfigIndex index : space.sample(rng, kConfigurations)) kernel.instances.push_back(problem.instance(index));
  return kernel;
}

double process_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// Compiles every configuration of `kernel` on `threads` threads, once per iteration.
void compile_on_threads(benchmark::State& state, const Kernel& kernel) {
  const auto threads = static_cast<std::size_t>(state.range(0));
  double cpu = 0;
  double wall = 0;
  for (auto _ : state) {
    const double cpu_start = process_cpu_seconds();
    const auto wall_start = std::chrono::steady_clock::now();
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> workers;
    for (std::size_t t = 0; t < threads; ++t) {
      workers.emplace_back([&] {
        for (std::size_t i = next++; i < kernel.instances.size(); i = next++) {
          benchmark::DoNotOptimize(steer::cuda::nvrtc_compile(kernel.program, kernel.instances[i], 9, 0));
        }
      });
    }
    for (std::thread& worker : workers) worker.join();
    wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    cpu += process_cpu_seconds() - cpu_start;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kernel.instances.size()));
  state.counters["cpu_per_wall"] = wall > 0 ? cpu / wall : 0;
}

void BM_NvrtcCompiles(benchmark::State& state) {
  static const Kernel kernel = gemm(false);
  steer::cuda::nvrtc_compile(kernel.program, kernel.instances.front(), 9, 0);  // loads NVRTC
  compile_on_threads(state, kernel);
}

// Compiles that the cache holds, where NVRTC has one: each configuration was compiled once
// before the timing.
void BM_NvrtcCachedCompiles(benchmark::State& state) {
  static const Kernel kernel = gemm(true);
  static const bool filled = [] {
    for (const steer::KernelInstance& instance : kernel.instances) {
      steer::cuda::nvrtc_compile(kernel.program, instance, 9, 0);
    }
    return true;
  }();
  benchmark::DoNotOptimize(filled);
  compile_on_threads(state, kernel);
}

// The same compiles split over `processes` forked children, one thread each, each taking
// every processes-th configuration.
void BM_NvrtcCompilesForked(benchmark::State& state) {
  static const Kernel kernel = gemm(false);
  const auto processes = static_cast<std::size_t>(state.range(0));
  steer::cuda::nvrtc_compile(kernel.program, kernel.instances.front(), 9, 0);  // loads NVRTC
  for (auto _ : state) {
    std::vector<pid_t> children;
    for (std::size_t p = 0; p < processes; ++p) {
      const pid_t child = ::fork();
      if (child < 0) {
        state.SkipWithError("fork failed");
        break;
      }
      if (child == 0) {
        int status = 0;
        try {
          for (std::size_t i = p; i < kernel.instances.size(); i += processes) {
            benchmark::DoNotOptimize(steer::cuda::nvrtc_compile(kernel.program, kernel.instances[i], 9, 0));
          }
        } catch (...) {
          status = 1;
        }
        ::_exit(status);
      }
      children.push_back(child);
    }
    for (pid_t child : children) {
      int status = 0;
      ::waitpid(child, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) state.SkipWithError("a child's compile failed");
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kernel.instances.size()));
}

void thread_counts(benchmark::internal::Benchmark* bench) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned threads = 1; threads < cores; threads *= 2) bench->Arg(threads);
  bench->Arg(cores);
}

BENCHMARK(BM_NvrtcCompiles)->Apply(thread_counts)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_NvrtcCompilesForked)->Apply(thread_counts)->ArgName("processes")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_NvrtcCachedCompiles)->Apply(thread_counts)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
