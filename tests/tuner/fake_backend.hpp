#pragma once
// A backend that runs nothing: it "compiles" and "runs" by rules the test sets, so the
// tuning loop can be specified without a device.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "measure/validation.hpp"
#include "steer/backend.hpp"

namespace steer::testing {

class FakeBackend final : public Backend {
 public:
  // Runtime of a configuration from its defines; also decides failures.
  std::function<double(const KernelInstance&)> runtime_ms = [](const KernelInstance&) { return 1.0; };
  std::function<bool(const KernelInstance&)> compile_fails = [](const KernelInstance&) { return false; };
  std::function<bool(const KernelInstance&)> launch_fails = [](const KernelInstance&) { return false; };
  bool failures_independent_of_configuration = false;  // what launch_fails' failures claim
  // Called first in every run(): a test may throw (Interrupted), end the process, or look at
  // the options.
  std::function<void(const KernelInstance&, const RunOptions&)> before_run = [](const KernelInstance&,
                                                                                const RunOptions&) {};
  std::function<bool(const KernelInstance&)> wrong_output = [](const KernelInstance&) { return false; };
  // Joules per launch, when energy is asked for; counters, when they are (2 "passes").
  std::function<double(const KernelInstance&)> joules = [](const KernelInstance&) { return 1.0; };
  // The device's state after each run, as a backend that reads it reports it.
  std::function<std::optional<DeviceConditions>(const KernelInstance&)> conditions =
      [](const KernelInstance&) -> std::optional<DeviceConditions> { return std::nullopt; };
  std::vector<MeasureRequest> measured;  // what each run was asked to measure

  bool on_host_cores = false;  // pretend to be a CPU device
  // Compares outputs "on the device" (Backend::expect_outputs) when set, finding what the
  // host would; the expected outputs it was last given.
  bool compares_on_device = false;
  bool comparison_miscounts = false;  // the device's comparison finds one mismatch too many
  std::vector<ExpectedOutput> expected_outputs;
  std::atomic<int> compiles{0};
  std::atomic<int> runs{0};
  std::vector<std::uint64_t> run_order;

  DeviceInfo device() const override {
    DeviceInfo info;
    info.backend = "fake";
    info.name = "Fake Device";
    info.runs_on_host_cores = on_host_cores;
    return info;
  }
  void load(const Program& program) override {
    program_ = program;
    expected_outputs.clear();
  }
  bool expect_outputs(const std::vector<ExpectedOutput>& expected) override {
    expected_outputs = expected;  // views into the caller's memory, which outlives the runs
    return compares_on_device;
  }
  std::unique_ptr<CompiledKernel> compile(const KernelInstance& instance) override {
    ++compiles;
    if (compile_fails(instance)) throw CompileError("fake.cu(1): error: rejected by the test");
    auto kernel = std::make_unique<CompiledKernel>();
    kernel->compile_ms = 2.0;
    return kernel;
  }
  RunResult run(const CompiledKernel&, const KernelInstance& instance, const RunOptions& options) override {
    before_run(instance, options);
    ++runs;
    run_order.push_back(instance.config_index);
    RunResult result;
    if (launch_fails(instance)) {
      result.status = Status::LaunchError;
      result.message = "fake launch failure";
      result.independent_of_configuration = failures_independent_of_configuration;
      return result;
    }
    double t = runtime_ms(instance);
    result.time = TimingStats::from_samples(std::vector<double>(static_cast<std::size_t>(options.repetitions), t));
    measured.push_back(options.measure);
    result.conditions = conditions(instance);
    if (options.measure.counters) {
      result.counters["smsp__inst_executed.sum"] = 100 * static_cast<double>(instance.config_index + 1);
      result.profiling_passes = 2;
      result.profiling_ms = 2 * (t + 10);
      result.warnings.push_back("the metric fake__missing.sum is not available on this device and is not collected");
    }
    if (options.measure.energy) {
      result.energy = EnergyStats{.joules_per_launch = joules(instance), .spread = 0.01, .average_watts = 300,
                                  .window_s = options.measure.energy_window_s, .launches = 10};
    }
    const bool compare = options.compare_outputs && compares_on_device && !expected_outputs.empty();
    if (options.read_outputs || compare) {
      // The kernel doubles its input; a "wrong" configuration adds one to element 3.
      for (std::size_t a = 0; a < program_.arguments.size(); ++a) {
        const HostArgument& argument = program_.arguments[a];
        if (!argument.output) continue;
        const auto* in = reinterpret_cast<const float*>(input().data.data());
        output_.resize(argument.data.size());
        auto* values = reinterpret_cast<float*>(output_.data());
        for (std::size_t i = 0; i < output_.size() / sizeof(float); ++i) values[i] = 2 * in[i];
        if (wrong_output(instance)) values[3] += 1;
        if (options.read_outputs) result.outputs.emplace_back(output_);
        if (!compare) continue;
        for (const ExpectedOutput& expected : expected_outputs) {
          if (expected.argument != a) continue;
          const ValidationResult check = validate_output(argument.type, output_, expected.bytes, expected.comparison);
          OutputComparison compared{.argument = a, .elements = check.elements,
                                    .mismatches = check.mismatches + (comparison_miscounts ? 1 : 0),
                                    .max_abs_error = check.max_abs_error};
          if (check.first_mismatch) {
            compared.first_mismatch = check.first_mismatch->index;
            compared.first_actual = check.first_mismatch->actual;
            compared.first_expected = check.first_mismatch->expected;
          }
          result.comparisons.push_back(compared);
          result.comparison_ms = 0.5;
        }
      }
    }
    return result;
  }

  // One launch on the application's data: the same rules, the output doubling the input given.
  std::atomic<int> launches{0};
  RunResult launch(const CompiledKernel&, const KernelInstance& instance, const LaunchData& data, double) override {
    ++launches;
    if (launch_fails(instance)) return {.status = Status::LaunchError, .message = "fake launch failure"};
    std::span<const std::byte> in;
    for (std::size_t a = 0; a < program_.arguments.size() && a < data.inputs.size(); ++a) {
      if (program_.arguments[a].is_buffer && !program_.arguments[a].output) in = data.inputs[a];
    }
    for (std::span<std::byte> out : data.outputs) {
      const std::size_t n = std::min(out.size(), in.size()) / sizeof(float);
      for (std::size_t i = 0; i < n; ++i) {
        float value;
        std::memcpy(&value, in.data() + i * sizeof(float), sizeof value);
        value = 2 * value + (wrong_output(instance) && i == 3 ? 1.0f : 0.0f);
        std::memcpy(out.data() + i * sizeof(float), &value, sizeof value);
      }
    }
    return {.time = TimingStats::from_samples({runtime_ms(instance)})};
  }

 private:
  const HostArgument& input() const {
    for (const HostArgument& argument : program_.arguments) {
      if (!argument.output && argument.is_buffer) return argument;
    }
    throw Error("no input");
  }
  Program program_;
  std::vector<std::byte> output_;  // what RunResult::outputs views, as a real backend keeps it
};

}  // namespace steer::testing
