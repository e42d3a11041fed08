// How busy other processes keep a CPU device's cores.
#include "tuner/host_load.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <thread>

namespace steer::tuner_detail {
namespace {

TEST(HostLoad, IsTheShareOfTheCoresTimeOthersKeptBusy) {
  const CpuTimes before{.busy_s = 10, .total_s = 100, .own_s = 2};
  // 2 cores for 1 s: 2 s of core time, 1.5 s busy, 0.5 s of it this process's.
  EXPECT_DOUBLE_EQ(other_load(before, CpuTimes{.busy_s = 11.5, .total_s = 102, .own_s = 2.5}), 0.5);
  EXPECT_DOUBLE_EQ(other_load(before, CpuTimes{.busy_s = 12, .total_s = 102, .own_s = 4}), 0.0) << "all its own";
  EXPECT_DOUBLE_EQ(other_load(before, CpuTimes{.busy_s = 12.5, .total_s = 102, .own_s = 2}), 1.0) << "clamped";
  EXPECT_TRUE(std::isnan(other_load(before, CpuTimes{.busy_s = 10, .total_s = 100.01, .own_s = 2})))
      << "too short an interval to tell";
}

TEST(HostLoad, CountsThisProcesssOwnWorkAsItsOwn) {
  const std::optional<CpuTimes> before = read_cpu_times();
  ASSERT_TRUE(before) << "Linux has /proc";
  EXPECT_GT(before->total_s, 0);
  EXPECT_GE(before->total_s, before->busy_s);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  volatile double sink = 0;
  while (std::chrono::steady_clock::now() < until) sink = sink + 1;  // this process keeps a core busy
  const std::optional<CpuTimes> after = read_cpu_times();
  ASSERT_TRUE(after);
  EXPECT_GT(after->own_s - before->own_s, 0.05);
  EXPECT_GE(after->busy_s - before->busy_s, after->own_s - before->own_s - 0.05);
}

// A backend's worker is a child process, and its kernels run there on a CPU device: their
// time is this process's own, not other processes' load, while the worker runs and after it
// ended and was waited for.
TEST(HostLoad, CountsTheWorkOfTheProcessesItStartedAsItsOwn) {
  const std::optional<CpuTimes> before = read_cpu_times();
  ASSERT_TRUE(before);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    volatile double sink = 0;
    while (std::chrono::steady_clock::now() < until) sink = sink + 1;  // a worker running a kernel
    ::_exit(0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // this process itself idles
  const std::optional<CpuTimes> running = read_cpu_times();
  ::kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  const std::optional<CpuTimes> ended = read_cpu_times();
  ASSERT_TRUE(running && ended);
  EXPECT_GT(running->own_s - before->own_s, 0.05) << "the live child's time";
  EXPECT_GE(ended->own_s - running->own_s, -0.02) << "kept once it was waited for";
}

}  // namespace
}  // namespace steer::tuner_detail
