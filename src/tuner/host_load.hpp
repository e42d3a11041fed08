#pragma once
// How busy other processes keep the CPU cores a device shares with them: an OpenCL device
// on the CPU (PoCL) runs its kernels on the host's cores, so a compiler, a build or another
// tuner running beside it slows its kernels and makes their timings noisy. Linux only
// (/proc); elsewhere nothing is read.
#include <optional>

namespace steer::tuner_detail {

// CPU time, in seconds, at one moment.
struct CpuTimes {
  double busy_s = 0;   // of the cores this process may run on, not idle (all processes)
  double total_s = 0;  // of those cores, busy or idle
  double own_s = 0;    // of this process and the processes it started (a backend's worker)
};

// Reads /proc/stat (the cores in this process's affinity set) and the CPU time of this
// process and its live descendants; nullopt where /proc cannot be read.
std::optional<CpuTimes> read_cpu_times();

// The share (0 to 1) of the cores' time between `before` and `after` that other processes
// kept busy; NaN for an interval too short to tell (under 20 ms of every core's time: the
// kernel counts in ticks of 10 ms).
double other_load(const CpuTimes& before, const CpuTimes& after);

}  // namespace steer::tuner_detail
