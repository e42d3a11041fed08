// An application that tunes a kernel of its own with an installed Steer (find_package(Steer)):
// first offline, on its data as it is, then online, one call per iteration of its own loop.
#include <steer/embed.hpp>

#include <cstdio>
#include <cmath>
#include <cstring>
#include <exception>
#include <optional>
#include <vector>

int main() try {
  constexpr int n = 1 << 18;
  constexpr float a = 2.5f;
  std::vector<float> x(n), y(n);
  const auto refill = [&](int step) {
    for (int i = 0; i < n; ++i) {
      x[i] = static_cast<float>((i + step) % 100) * 0.5f;
      y[i] = static_cast<float>(step);
    }
  };
  refill(0);

  steer::Tuner tuner(steer::Kernel::from_file(EXAMPLE_DIR "/saxpy.cl", "saxpy"), "opencl");
  tuner.parameter("BLOCK", {16, 32, 64, 128}).parameter("ITEMS", {1, 2, 4, 8});
  tuner.size("N", n);
  tuner.scalar("n", n).scalar("a", a).input("x", x).inout("y", y);  // the kernel's parameter order
  tuner.launch({"cdiv(N, BLOCK * ITEMS)"}, {"BLOCK"});
  tuner.reference([](const steer::ReferenceInput& in, steer::ReferenceOutputs& out) {
    const std::vector<float> xs = in.buffer<float>("x", n), ys = in.buffer<float>("y", n);
    std::vector<float> expected(n);
    for (int i = 0; i < n; ++i) expected[i] = a * xs[i] + ys[i];
    std::memcpy(out[0].data(), expected.data(), sizeof(float) * n);
  });
  tuner.compare("y", steer::compare::ulps(1));  // a fused multiply-add may round once less
  tuner.searcher("random");

  // Offline: tune, then run the best configuration on the application's data.
  const steer::TuneSummary summary = tuner.tune({.tests = 8});
  if (!summary.best) {
    std::fprintf(stderr, "no valid configuration among %llu tests\n", static_cast<unsigned long long>(summary.tests));
    return 1;
  }
  std::printf("offline: %llu tests on %s; best %.4f ms:", static_cast<unsigned long long>(summary.tests),
              summary.device.c_str(), summary.best->time.median_ms);
  for (const auto& [name, value] : summary.best->configuration) std::printf(" %s=%s", name.c_str(), value.to_string().c_str());
  const steer::RunOutput best = tuner.run(summary.best->configuration);
  std::printf("; y[1] = %g (expected %g)\n", y[1], a * x[1]);
  if (!best.result.ok()) return 1;

  // Online: each iteration of the application's loop calls the tuner once with its new data.
  steer::OnlineTuner online(tuner, {.budget = 6, .calls_per_test = 3});
  int exploring = 0;
  for (int step = 1; step <= 30; ++step) {
    refill(step);
    const steer::OnlineStep done = online.run();
    exploring += done.exploring ? 1 : 0;
    for (int i = 0; i < n; i += 997) {
      const float expected = a * static_cast<float>((i + step) % 100) * 0.5f + static_cast<float>(step);
      if (y[i] != expected && std::abs(y[i] - expected) > 1e-6f * std::abs(expected)) {
        std::fprintf(stderr, "step %d: y[%d] = %g, expected %g\n", step, i, y[i], expected);
        return 1;
      }
    }
  }
  const std::optional<steer::Configuration> best_online = online.best();
  std::printf("online: %d of 30 calls explored; converged: %s; best:", exploring, online.converged() ? "yes" : "no");
  for (const auto& [name, value] : best_online.value()) std::printf(" %s=%s", name.c_str(), value.to_string().c_str());
  std::printf("\n");
  return online.converged() ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "embed_example: %s\n", e.what());
  return 1;
}
