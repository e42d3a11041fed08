// The OnlineTuner: the application calls it once per iteration of its own loop, with its own
// data; it explores, converges, and then stays on the best. The fake backend's kernel doubles
// its input; on PoCL a real kernel does.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "steer/embed.hpp"
#include "tuner/fake_backend.hpp"

namespace steer {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::FakeBackend;

struct Application {
  std::vector<float> in = std::vector<float>(16);
  std::vector<float> out = std::vector<float>(16);
  FakeBackend* fake = nullptr;

  Tuner make_tuner() {
    auto backend = std::make_unique<FakeBackend>();
    fake = backend.get();
    // Configuration BLOCK=b runs in 1/b ms: the largest block is the fastest.
    fake->runtime_ms = [](const KernelInstance& instance) { return 1.0 / static_cast<double>(instance.block[0]); };
    Tuner tuner(Kernel::from_source(Language::Cuda, "__global__ void twice() {}", "twice"), std::move(backend));
    tuner.parameter("BLOCK", {1, 2, 4, 8, 16, 32});
    tuner.input("in", in).output("out", out);
    tuner.launch({"1"}, {"BLOCK"});
    tuner.searcher("exhaustive");
    return tuner;
  }
  // One iteration of the application's loop: new data, one call, its output checked.
  OnlineStep iterate(OnlineTuner& online, int iteration) {
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(iteration * 100 + static_cast<int>(i));
    OnlineStep step = online.run();
    for (std::size_t i = 0; i < in.size(); ++i) {
      EXPECT_EQ(out[i], 2 * in[i]) << "iteration " << iteration << ", element " << i;
    }
    return step;
  }
};

void doubled(const ReferenceInput& input, ReferenceOutputs& outputs) {
  const std::vector<float> in = input.buffer<float>("in", 16);
  for (std::size_t i = 0; i < in.size(); ++i) {
    const float value = 2 * in[i];
    std::memcpy(outputs[0].data() + i * sizeof(float), &value, sizeof value);
  }
}

TEST(OnlineTuner, ExploresWithinItsBudgetThenStaysOnTheBest) {
  Application app;
  Tuner tuner = app.make_tuner();
  OnlineTuner online(tuner, OnlineOptions{.budget = 4, .calls_per_test = 2});
  std::vector<OnlineStep> steps;
  for (int iteration = 0; iteration < 12; ++iteration) steps.push_back(app.iterate(online, iteration));
  // 4 configurations, 2 calls each, then the best of them (BLOCK=8) for good.
  for (int i = 0; i < 8; ++i) {
    EXPECT_TRUE(steps[i].exploring) << i;
    EXPECT_EQ(steps[i].configuration[0].second, Value(1 << (i / 2))) << i;
  }
  for (int i = 8; i < 12; ++i) {
    EXPECT_FALSE(steps[i].exploring) << i;
    EXPECT_EQ(steps[i].configuration[0].second, Value(8));
    EXPECT_DOUBLE_EQ(steps[i].kernel_ms, 1.0 / 8);
  }
  EXPECT_TRUE(online.converged());
  ASSERT_TRUE(online.summary());
  EXPECT_EQ(online.summary()->tests, 4u);
  EXPECT_EQ(online.best(), (Configuration{{"BLOCK", 8}}));
}

TEST(OnlineTuner, AConfigurationThatFailsValidationNeverRunsOnTheApplicationsData) {
  Application app;
  Tuner tuner = app.make_tuner();
  tuner.reference(doubled);
  app.fake->wrong_output = [](const KernelInstance& instance) { return instance.block[0] == 2; };
  OnlineTuner online(tuner, OnlineOptions{.budget = 6, .calls_per_test = 1});
  std::set<std::int64_t> served;
  for (int iteration = 0; iteration < 8; ++iteration) served.insert(app.iterate(online, iteration).configuration[0].second.as_int());
  EXPECT_FALSE(served.contains(2));
  ASSERT_TRUE(online.summary());
  EXPECT_EQ(online.summary()->failed, 1u);
  EXPECT_EQ(online.best(), (Configuration{{"BLOCK", 32}}));
}

// The validation runs of the loop are bounded as the calls are, whatever else asks otherwise.
TEST(OnlineTuner, ItsTimeoutBoundsTheValidationRunsToo) {
  Application app;
  Tuner tuner = app.make_tuner();
  tuner.reference(doubled);
  tuner.options().timeout_ms = 60'000;
  std::vector<double> timeouts;
  app.fake->before_run = [&](const KernelInstance&, const RunOptions& options) { timeouts.push_back(options.timeout_ms); };
  OnlineTuner online(tuner, OnlineOptions{.budget = 2, .calls_per_test = 1, .timeout_ms = 250});
  for (int iteration = 0; iteration < 3; ++iteration) app.iterate(online, iteration);
  ASSERT_FALSE(timeouts.empty());
  for (double timeout : timeouts) EXPECT_EQ(timeout, 250);
}

TEST(OnlineTuner, ACallWhoseLaunchFailsIsServedByTheNextConfiguration) {
  Application app;
  Tuner tuner = app.make_tuner();
  app.fake->launch_fails = [](const KernelInstance& instance) { return instance.block[0] == 1; };
  OnlineTuner online(tuner, OnlineOptions{.budget = 2, .calls_per_test = 1});
  const OnlineStep first = app.iterate(online, 0);
  EXPECT_EQ(first.configuration, (Configuration{{"BLOCK", 2}}));
  EXPECT_TRUE(first.exploring);
  EXPECT_FALSE(app.iterate(online, 1).exploring);
  EXPECT_EQ(online.summary()->failed, 1u);
}

TEST(OnlineTuner, ALaterRunOfTheApplicationResumesFromTheStoreAndStartsOnTheBest) {
  const fs::path db = fs::temp_directory_path() / ("steer_online_" + std::to_string(getpid()) + ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
  {
    Application app;
    Tuner tuner = app.make_tuner();
    tuner.store(db);
    OnlineTuner online(tuner, OnlineOptions{.budget = 3, .calls_per_test = 1});
    for (int iteration = 0; iteration < 4; ++iteration) app.iterate(online, iteration);
    EXPECT_TRUE(online.converged());
  }
  Application app;
  Tuner tuner = app.make_tuner();
  tuner.store(db);
  OnlineTuner online(tuner, OnlineOptions{.budget = 3, .calls_per_test = 1});
  const OnlineStep first = app.iterate(online, 0);
  EXPECT_FALSE(first.exploring);
  EXPECT_EQ(first.configuration, (Configuration{{"BLOCK", 4}}));
  EXPECT_EQ(online.summary()->resumed, 3u);
  EXPECT_EQ(app.fake->launches, 1) << "nothing was explored again";
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
}

TEST(OnlineTuner, ContinuesTheTuningThatTuneStoredForTheSameKernel) {
  const fs::path db = fs::temp_directory_path() / ("steer_online_tuned_" + std::to_string(getpid()) + ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
  Application app;
  Tuner tuner = app.make_tuner();
  tuner.store(db);
  const TuneSummary offline = tuner.tune({});
  EXPECT_EQ(offline.tests, 6u);
  const int launches = app.fake->launches;
  OnlineTuner online(tuner, OnlineOptions{.budget = 6, .calls_per_test = 1});
  const OnlineStep first = app.iterate(online, 0);
  EXPECT_FALSE(first.exploring);
  EXPECT_EQ(first.configuration, (Configuration{{"BLOCK", 32}}));
  EXPECT_EQ(online.summary()->tuning, offline.tuning);
  EXPECT_EQ(online.summary()->resumed, 6u);
  EXPECT_EQ(app.fake->launches - launches, 1) << "nothing was explored again";
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
}

TEST(OnlineTuner, ATestsConditionsAreThoseOfItsCallsNotOfItsValidationRun) {
  Application app;
  Tuner tuner = app.make_tuner();
  tuner.reference(doubled);
  // The fake backend reports conditions for its runs (the validation); launches report none.
  app.fake->conditions = [](const KernelInstance&) -> std::optional<DeviceConditions> {
    DeviceConditions conditions;
    conditions.sm_clock_mhz = 500;
    return conditions;
  };
  std::vector<Result> tests;
  tuner.options().on_test = [&](const Result& result, const TuneProgress&) { tests.push_back(result); };
  OnlineTuner online(tuner, OnlineOptions{.budget = 2, .calls_per_test = 1});
  for (int iteration = 0; iteration < 3; ++iteration) app.iterate(online, iteration);
  ASSERT_TRUE(online.converged());
  ASSERT_EQ(tests.size(), 2u);
  for (const Result& test : tests) EXPECT_FALSE(test.conditions) << test.key();
}

TEST(OnlineTuner, StopsWhenDestroyedWhileExploring) {
  Application app;
  Tuner tuner = app.make_tuner();
  {
    OnlineTuner online(tuner, OnlineOptions{.budget = 6, .calls_per_test = 3});
    app.iterate(online, 0);
  }
  SUCCEED() << "the exploring thread ended";
}

TEST(OnlineTuner, RefusesABudgetOfNothing) {
  Application app;
  Tuner tuner = app.make_tuner();
  EXPECT_THAT([&] { OnlineTuner online(tuner, OnlineOptions{.budget = 0}); },
              ::testing::ThrowsMessage<Error>(HasSubstr("a budget of 0 tests")));
}

// A real kernel on the OpenCL CPU device: y = a x + y over the application's arrays, with a
// reference in code. Every call's output is the application's own computation.
TEST(OnlineTunerOnOpencl, ConvergesAndComputesEveryIterationsOutputs) {
  std::unique_ptr<Backend> backend;
  try {
    backend = make_opencl_backend({});
  } catch (const Error&) {
    GTEST_SKIP() << "no OpenCL device";
  }
  constexpr int n = 4096;
  std::vector<float> x(n), y(n);
  const float a = 1.5f;
  Tuner tuner(Kernel::from_source(Language::OpenCL, R"(
    __kernel void axpy(const int n, const float a, __global const float* x, __global float* y) {
      for (int i = 0; i < ITEMS; ++i) {
        const int j = get_global_id(0) * ITEMS + i;
        if (j < n) y[j] = a * x[j] + y[j];
      }
    })", "axpy"), std::move(backend));
  tuner.parameter("BLOCK", {16, 64}).parameter("ITEMS", {1, 4});
  tuner.size("N", n);
  tuner.scalar("n", n).scalar("a", a).input("x", x).inout("y", y);
  tuner.launch({"cdiv(N, BLOCK * ITEMS)"}, {"BLOCK"});
  tuner.reference([&](const ReferenceInput& input, ReferenceOutputs& outputs) {
    const std::vector<float> xs = input.buffer<float>("x", n), ys = input.buffer<float>("y", n);
    for (int i = 0; i < n; ++i) {
      const float value = a * xs[i] + ys[i];
      std::memcpy(outputs[0].data() + i * sizeof(float), &value, sizeof value);
    }
  });
  tuner.searcher("exhaustive");
  OnlineTuner online(tuner, OnlineOptions{.budget = 4, .calls_per_test = 2});
  int exploring = 0;
  for (int iteration = 0; iteration < 12; ++iteration) {
    for (int i = 0; i < n; ++i) {
      x[i] = static_cast<float>(i % 7 + iteration);
      y[i] = static_cast<float>(i % 5);
    }
    const OnlineStep step = online.run();
    exploring += step.exploring ? 1 : 0;
    for (int i = 0; i < n; ++i) ASSERT_EQ(y[i], a * x[i] + static_cast<float>(i % 5)) << "iteration " << iteration;
    EXPECT_GT(step.kernel_ms, 0);
  }
  EXPECT_EQ(exploring, 8);
  EXPECT_TRUE(online.converged());
  EXPECT_EQ(online.summary()->valid, 4u);
}

double process_cpu_ms() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto ms = [](const timeval& t) { return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3; };
  return ms(usage.ru_utime) + ms(usage.ru_stime);
}

// Once converged the best configuration runs in the application's process, unless told not
// to: told by this process's CPU time, which a kernel on a CPU device adds to only when it
// runs here.
TEST(OnlineTunerOnOpencl, OnceConvergedRunsTheBestInThisProcessUnlessToldNot) {
  for (const bool in_process : {true, false}) {
    std::unique_ptr<Backend> backend;
    try {
      backend = make_opencl_backend({});
    } catch (const Error&) {
      GTEST_SKIP() << "no OpenCL device";
    }
    if (!backend->device().runs_on_host_cores) GTEST_SKIP() << "tells where a kernel ran by this process's CPU time";
    constexpr int n = 1 << 16;
    std::vector<float> y(n, 1.0f);
    Tuner tuner(Kernel::from_source(Language::OpenCL, R"(
      __kernel void busy(const int rounds, __global float* y) {
        const int i = get_global_id(0);
        float v = y[i];
        for (int k = 0; k < rounds; ++k) v = v * 0.999f + 1.0f;
        y[i] = v;
      })", "busy"), std::move(backend));
    tuner.parameter("BLOCK", {64});
    tuner.size("N", n);
    tuner.scalar("rounds", 5000).inout("y", y);
    tuner.launch({"cdiv(N, BLOCK)"}, {"BLOCK"});
    OnlineTuner online(tuner, OnlineOptions{.budget = 1, .calls_per_test = 2, .in_process_once_converged = in_process});
    while (!online.converged()) (void)online.run();
    (void)online.run();  // in this process, the first launch compiles for the work-group size
    const double before = process_cpu_ms();
    const OnlineStep step = online.run();
    const double cpu_ms = process_cpu_ms() - before;
    EXPECT_FALSE(step.exploring);
    if (in_process) {
      EXPECT_GT(cpu_ms, 0.5 * step.kernel_ms) << "the launch ran in this process";
    } else {
      EXPECT_LT(cpu_ms, 0.3 * step.kernel_ms) << "the launch ran in the worker";
    }
  }
}

}  // namespace
}  // namespace steer
