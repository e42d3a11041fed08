// Tests on a device: the spec resolved for one problem size, each configuration compiled
// (on the loop's pool), launched and timed by the backend, and validated.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <future>
#include <mutex>
#include <optional>

#include "core/fresh_memory.hpp"
#include "expression/expression.hpp"
#include "measure/expected_output.hpp"
#include "measure/validation.hpp"
#include "steer/error.hpp"
#include "steer/reference.hpp"
#include "steer/tuner.hpp"
#include "tuner/host_load.hpp"
#include "tuner/kernel_problem.hpp"
#include "tuner/reference_cache.hpp"
#include "tuner/tuning_content.hpp"

namespace steer {
namespace {

using Clock = std::chrono::steady_clock;

// Outputs of at least this many bytes together are compared on the device where the backend
// can (Backend::expect_outputs), rather than read back and compared on the host's cores:
// below it, reading back and comparing take about a millisecond or less anyway, and above
// it they grow to most of a test (a 2.4 GB output cost 190 ms a test on the H200's host).
constexpr std::size_t kDeviceComparisonMinBytes = std::size_t{16} << 20;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string utc_timestamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// A configuration's launch geometry and compiled kernel, or why it has neither.
struct CompiledTest final : PreparedTest {
  std::optional<KernelInstance> instance;  // empty when the geometry failed to evaluate
  std::string instance_error;
  std::unique_ptr<CompiledKernel> kernel;  // empty when compiling failed
  std::string compile_error;               // the compiler log
  double compile_ms = 0;
};

void compile_into(Backend& backend, CompiledTest& test) {
  auto start = Clock::now();
  try {
    test.kernel = backend.compile(*test.instance);
  } catch (const CompileError& e) {
    test.compile_error = e.what();
  } catch (const std::exception& e) {
    test.compile_error = fmt::format("compilation failed: {}", e.what());
  }
  test.compile_ms = seconds_since(start) * 1e3;
  if (test.kernel && test.kernel->compile_ms > 0) test.compile_ms = test.kernel->compile_ms;
}

}  // namespace

struct DeviceExecutor::Impl {
  const Spec& spec;
  const Space& space;
  Backend& backend;
  DeviceCallbacks callbacks;
  Clock::time_point created = Clock::now();
  KernelProblem problem;
  ReferenceOutputs expected;   // per output; empty when the spec asks for no validation
  std::vector<Comparison> comparisons;  // per output
  bool keep_outputs = false;
  bool compare_on_device = false;  // the backend holds the expected outputs (Backend::expect_outputs)
  bool comparison_checked = false;  // a test's outputs were compared on both, and agreed
  std::vector<std::span<const std::byte>> outputs;  // of the latest run, when kept
  std::once_flag digest_once;
  std::string digest;
  std::string counters_unavailable;  // why, once a test asked for them and could not have them

  Impl(const Spec& s, const Space& sp, Backend& b, const ProblemSize& size, Language language, DeviceCallbacks c)
      : spec(s), space(sp), backend(b), callbacks(std::move(c)), problem(s, sp, size, language, callbacks.launch) {
    for (std::size_t index : problem.outputs()) {
      comparisons.push_back(spec.reference.comparison(problem.program().arguments[index].name));
    }
  }

  bool validates() const { return callbacks.reference || spec.reference.kind != Reference::Kind::None; }

  // The arguments' part of the tuning's key, hashed once: the key and the reference cache
  // both need it, and hashing gigabytes takes a second.
  const std::string& input_digest() {
    std::call_once(digest_once, [this] { digest = tuner_detail::input_data_digest(spec, problem.program()); });
    return digest;
  }

  // Runs a test. Counters a searcher only wished for (MeasureRequest::counters_optional):
  // where they cannot be collected, the test runs without them, with one warning; the worker
  // measured no energy either once they failed, so the test runs again.
  RunResult run_measured(const CompiledKernel& kernel, const KernelInstance& instance, RunOptions& options,
                         std::vector<std::string>& warnings) {
    const bool optional = options.measure.counters && options.measure.counters_optional;
    if (optional && !counters_unavailable.empty()) options.measure.counters = false;
    try {
      return backend.run(kernel, instance, options);
    } catch (const MeasurementUnavailable& e) {
      if (!optional || !counters_unavailable.empty()) throw;
      counters_unavailable = e.what();
      warnings.push_back(fmt::format("{}; the searcher goes on without counters", e.what()));
      options.measure.counters = false;
      return backend.run(kernel, instance, options);
    }
  }

  // Compiles `instance` of the loaded program, runs it once and returns its outputs.
  ReferenceOutputs run_once(const KernelInstance& instance, const RunOptions& run_options, const std::string& what) {
    CompiledTest test;
    test.instance = instance;
    compile_into(backend, test);
    if (!test.kernel) throw Error(fmt::format("{} does not compile: {}", what, test.compile_error));
    RunOptions once = run_options;
    once.warmup = 0;
    once.repetitions = 1;
    once.min_total_ms = 0;
    once.read_outputs = true;
    RunResult run = backend.run(*test.kernel, *test.instance, once);
    if (run.status != Status::Ok) throw Error(fmt::format("{} failed to run: {}", what, run.message));
    ReferenceOutputs outputs;
    for (const auto& output : run.outputs) outputs.emplace_back(output.begin(), output.end());  // the views die with the next run
    return outputs;
  }

  // The reference kernel's outputs: its own program (the same arguments), loaded in place of
  // the tuned one for one launch.
  ReferenceOutputs run_reference_kernel(const RunOptions& run_options) {
    const ReferenceKernel& kernel = spec.reference.kernel;
    Program program = problem.program();
    program.kernel_name = kernel.name.empty() ? program.kernel_name : kernel.name;
    std::string directory;
    program.source = kernel_source(program.kernel_name, kernel.sources, kernel.source_texts, program.language,
                                   program.source_name, directory);
    program.include_dirs.clear();
    if (!directory.empty()) program.include_dirs.push_back(directory);
    KernelInstance instance;
    const auto extent = [&](const std::string& text, const char* what) {
      try {
        const double value = expr::evaluate_once(text, problem.size().variables).as_double();
        if (!(value >= 0) || value != std::floor(value)) throw Error(fmt::format("evaluates to {}", value));
        return static_cast<std::uint64_t>(value);
      } catch (const std::exception& e) {
        throw SpecError(fmt::format("reference kernel: launch.{} '{}' at size '{}': {}", what, text, problem.size().name,
                                    e.what()));
      }
    };
    for (std::size_t d = 0; d < 3; ++d) {
      instance.grid[d] = extent(kernel.launch.grid[d], "grid");
      instance.block[d] = extent(kernel.launch.block[d], "block");
    }
    instance.shared_memory_bytes = extent(kernel.launch.shared_memory_bytes, "shared_memory_bytes");
    backend.load(program);
    return run_once(instance, run_options, fmt::format("the reference kernel '{}'", program.kernel_name));
  }

  // Expected outputs: from code, the registered CPU reference, files, a reference kernel or
  // the reference configuration. A reference kernel loads its own program: call this before
  // loading the tuned one.
  void compute_expected(const RunOptions& run_options) {
    const Reference& reference = spec.reference;
    expected.clear();
    if (!validates()) return;
    const auto& args = problem.program().arguments;
    for (std::size_t index : problem.outputs()) resize_zeroed(expected.emplace_back(), args[index].data.size());
    if (callbacks.reference) {
      callbacks.reference(ReferenceInput{problem.size(), args}, expected);
      return;
    }
    switch (reference.kind) {
      case Reference::Kind::None:
        return;
      case Reference::Kind::Cpu: {
        const ReferenceFunction& function = find_reference(reference.cpu_function);
        std::vector<bool> application_memory(args.size());
        for (std::size_t a = 0; a < args.size(); ++a) {
          application_memory[a] = tuner_detail::is_application_memory(spec, problem.program(), a);
        }
        const auto cached = tuner_detail::reference_cache_file(reference.cpu_function, problem.size(), args,
                                                               input_digest(), application_memory);
        if (cached && tuner_detail::read_cached_reference(*cached, expected)) return;
        const Clock::time_point start = Clock::now();
        function(ReferenceInput{problem.size(), args}, expected);
        if (cached) tuner_detail::write_cached_reference(*cached, expected, seconds_since(start));
        return;
      }
      case Reference::Kind::Files:
        for (std::size_t o = 0; o < expected.size(); ++o) {
          const HostArgument& argument = args[problem.outputs()[o]];
          const auto file = reference.expected_files.find(argument.name);
          if (file == reference.expected_files.end()) continue;  // compared with "ignore" (the loader checks)
          expected[o] = read_expected_output(expected_output_file(file->second, problem.size().name), argument);
        }
        return;
      case Reference::Kind::Kernel:
        expected = run_reference_kernel(run_options);
        return;
      case Reference::Kind::Configuration: {
        auto config = space.index_of(reference.configuration);
        if (!config) throw SpecError("the reference configuration is not a valid configuration of the space");
        expected = run_once(problem.instance(*config), run_options, "the reference configuration");
        return;
      }
    }
  }

  // Hands the expected outputs to the backend to compare on its device, where they are large
  // enough to pay and every output is compared by a tolerance or ULPs (a comparison function
  // given in code needs the output on the host).
  // A device on the host's cores (PoCL) saves nothing: reading its outputs back is a copy in
  // memory, and its comparison kernel ran slower than the host's threads (transpose's 256 MB
  // output on PoCL: about 0.6 s a test against 0.07 s).
  void offer_expected_outputs() {
    if (expected.empty() || !callbacks.comparators.empty() || backend.device().runs_on_host_cores) return;
    const auto& args = problem.program().arguments;
    std::vector<ExpectedOutput> offered;
    std::size_t bytes = 0;
    for (std::size_t o = 0; o < expected.size(); ++o) {
      if (comparisons[o].kind == Comparison::Kind::Ignore) continue;
      const std::size_t index = problem.outputs()[o];
      if (expected[o].size() != args[index].data.size()) return;  // validate() says what is wrong
      offered.push_back(ExpectedOutput{.argument = index, .bytes = expected[o], .comparison = comparisons[o]});
      bytes += expected[o].size();
    }
    if (offered.empty() || bytes < kDeviceComparisonMinBytes) return;
    compare_on_device = backend.expect_outputs(offered);
  }

  // Where the device's comparison of a test's outputs (RunResult::comparisons) differs from
  // the host's of the same outputs, what differs.
  std::optional<std::string> disagreement(const RunResult& run) const {
    const auto& args = problem.program().arguments;
    for (const OutputComparison& device : run.comparisons) {
      const auto o = static_cast<std::size_t>(
          std::find(problem.outputs().begin(), problem.outputs().end(), device.argument) - problem.outputs().begin());
      if (o >= run.outputs.size() || o >= expected.size()) continue;
      const HostArgument& argument = args[device.argument];
      const ValidationResult host = validate_output(argument.type, run.outputs[o], expected[o], comparisons[o]);
      const bool same_first = host.mismatches == 0 || host.first_mismatch->index == device.first_mismatch;
      if (host.mismatches == device.mismatches && host.max_abs_error == device.max_abs_error && same_first) continue;
      return fmt::format(
          "output '{}': on the device {} of {} elements differ (first at {}, max |error| {}), on the host {} (first at "
          "{}, max |error| {})",
          argument.name, device.mismatches, device.elements, device.first_mismatch, device.max_abs_error,
          host.mismatches, host.first_mismatch ? host.first_mismatch->index : 0, host.max_abs_error);
    }
    return std::nullopt;
  }

  // The test's outputs against the expected ones: as the device compared them where it did
  // (`on_device`), else on the host.
  void validate(const RunResult& run, Result& result, bool on_device = true) const {
    auto validate_start = Clock::now();
    const auto& args = problem.program().arguments;
    for (std::size_t o = 0; o < expected.size(); ++o) {
      const HostArgument& argument = args[problem.outputs()[o]];
      const auto comparator = callbacks.comparators.find(argument.name);
      if (comparator == callbacks.comparators.end() && comparisons[o].kind == Comparison::Kind::Ignore) continue;
      const auto compared = std::find_if(run.comparisons.begin(), run.comparisons.end(),
                                         [&](const OutputComparison& c) { return c.argument == problem.outputs()[o]; });
      if (on_device && compared != run.comparisons.end()) {
        const ValidationResult check = comparison_result(
            compared->elements, compared->mismatches, compared->max_abs_error,
            Mismatch{compared->first_mismatch, compared->first_actual, compared->first_expected}, comparisons[o]);
        result.max_abs_error = std::max(result.max_abs_error, check.max_abs_error);
        if (!check.ok) {
          result.status = Status::InvalidOutput;
          result.message = fmt::format("output '{}': {}", argument.name, check.message);
        }
        continue;
      }
      if (o >= run.outputs.size()) {
        result.status = Status::InvalidOutput;
        result.message = fmt::format("output '{}' was not read back", argument.name);
        break;
      }
      if (comparator != callbacks.comparators.end()) {
        std::string message;
        if (!comparator->second(argument.type, run.outputs[o], expected[o], message)) {
          result.status = Status::InvalidOutput;
          result.message = fmt::format("output '{}': {}", argument.name,
                                       message.empty() ? "rejected by its comparison function" : message);
        }
        continue;
      }
      ValidationResult check = validate_output(argument.type, run.outputs[o], expected[o], comparisons[o]);
      result.max_abs_error = std::max(result.max_abs_error, check.max_abs_error);
      if (!check.ok) {
        result.status = Status::InvalidOutput;
        result.message = fmt::format("output '{}': {}", argument.name, check.message);
      }
    }
    result.validation_ms = seconds_since(validate_start) * 1e3 + run.comparison_ms;
  }
};

DeviceExecutor::DeviceExecutor(const Spec& spec, const Space& space, Backend& backend, const std::string& size,
                               DeviceCallbacks callbacks) {
  const ProblemSize& problem_size = spec.size(size.empty() ? spec.default_size : size);
  info_.device = backend.device();
  info_.spec_name = spec.name;
  info_.spec_hash = content_key(tuner_detail::spec_content(spec, problem_size, callbacks));
  info_.problem_size = problem_size.name;
  info_.flops = problem_size.flops;
  if (spec.kernel) info_.timeout_ms = spec.kernel->timeout_ms;
  const Language language = info_.device.backend == "opencl" ? Language::OpenCL : Language::Cuda;
  impl_ = std::make_unique<Impl>(spec, space, backend, problem_size, language, std::move(callbacks));
}

DeviceExecutor::~DeviceExecutor() = default;

void DeviceExecutor::start(const RunOptions& run) {
  // A reference kernel loads a program of its own, so it runs before the tuned one is loaded;
  // a reference configuration runs after. A reference given in code (callbacks) runs after
  // too, on the caller's thread, as the application expects.
  const Reference::Kind kind = impl_->callbacks.reference ? Reference::Kind::None : impl_->spec.reference.kind;
  if (kind == Reference::Kind::Kernel) impl_->compute_expected(run);
  if (kind == Reference::Kind::Cpu || kind == Reference::Kind::Files) {
    // A CPU reference or files need no device: read or compute them while the backend starts
    // its worker and copies the arguments to the device (seconds each for gigabytes of data).
    auto expected = std::async(std::launch::async, [this, &run] { impl_->compute_expected(run); });
    impl_->backend.load(impl_->problem.program());
    expected.get();
  } else {
    impl_->backend.load(impl_->problem.program());
    if (kind != Reference::Kind::Kernel) impl_->compute_expected(run);
  }
  impl_->compare_on_device = false;
  if (run.compare_outputs) impl_->offer_expected_outputs();
}

void DeviceExecutor::keep_outputs(bool keep) { impl_->keep_outputs = keep; }

std::span<const std::span<const std::byte>> DeviceExecutor::outputs() const { return impl_->outputs; }

KernelInstance DeviceExecutor::instance(ConfigIndex config) const { return impl_->problem.instance(config); }

const Program& DeviceExecutor::program() const { return impl_->problem.program(); }

std::unique_ptr<PreparedTest> DeviceExecutor::prepare(ConfigIndex config) {
  auto test = std::make_unique<CompiledTest>();
  try {
    test->instance = impl_->problem.instance(config);
  } catch (const ExpressionError& e) {
    test->instance_error = e.detailed();
    return test;
  } catch (const std::exception& e) {  // a launch function given in code
    test->instance_error = e.what();
    return test;
  }
  compile_into(impl_->backend, *test);
  return test;
}

const Result& DeviceExecutor::run(ConfigIndex config, PreparedTest* prepared, const RunOptions& run_options,
                                  std::vector<std::string>& warnings) {
  auto& test = static_cast<CompiledTest&>(*prepared);
  Result& result = last_;
  result = test_of(config);
  if (!test.instance) {
    result.status = Status::LaunchError;
    result.message = "launch geometry: " + test.instance_error;
    // Whether it depends on the configuration, the loop judges by the same error recurring.
    result.independent_of_configuration = true;
    return result;
  }
  result.compile_ms = test.compile_ms;
  if (!test.kernel) {
    result.status = Status::CompileError;
    result.message = test.compile_error;
    return result;
  }

  RunOptions options = run_options;
  options.read_outputs = !impl_->expected.empty() || impl_->keep_outputs;
  if (impl_->compare_on_device && !impl_->keep_outputs) {
    options.compare_outputs = true;
    // Until one test's outputs were compared on both and agreed, they come back as well.
    options.read_outputs = !impl_->comparison_checked;
  }
  // A device on the host's cores shares them with every other process: measure how busy
  // the others kept them while this test ran, unless the backend read that itself.
  const std::optional<tuner_detail::CpuTimes> cpu_before =
      info_.device.runs_on_host_cores ? tuner_detail::read_cpu_times() : std::nullopt;
  RunResult run = impl_->run_measured(*test.kernel, *test.instance, options, warnings);
  result.conditions = std::move(run.conditions);
  const bool backend_read_load = result.conditions && !std::isnan(result.conditions->other_load);
  if (cpu_before && !backend_read_load) {
    const std::optional<tuner_detail::CpuTimes> cpu_after = tuner_detail::read_cpu_times();
    const double load = cpu_after ? tuner_detail::other_load(*cpu_before, *cpu_after) : std::nan("");
    if (!std::isnan(load)) {
      if (!result.conditions) result.conditions.emplace();
      result.conditions->other_load = load;
    }
  }
  impl_->outputs.clear();
  if (impl_->keep_outputs) impl_->outputs = run.outputs;
  for (std::string& warning : run.warnings) warnings.push_back(std::move(warning));
  result.profiling_passes = run.profiling_passes;
  result.status = run.status;
  result.message = run.message;
  result.independent_of_configuration = run.independent_of_configuration;
  result.time = std::move(run.time);
  result.counters = std::move(run.counters);
  result.energy = run.energy;
  result.profiling_ms = run.profiling_ms;
  if (result.status == Status::Ok && !impl_->expected.empty()) {
    if (run.comparisons.empty() || run.outputs.empty()) {
      impl_->validate(run, result);
    } else {
      // The device's comparison checked against the host's, whose verdict the test keeps. A
      // device that disagrees (its double arithmetic, say) compares no more.
      const Clock::time_point started = Clock::now();
      impl_->validate(run, result, false);
      if (std::optional<std::string> difference = impl_->disagreement(run)) {
        impl_->compare_on_device = false;
        warnings.push_back(fmt::format(
            "the device's comparison of the outputs disagreed with the host's, so the outputs are compared on the "
            "host from now on: {}",
            *difference));
      } else {
        impl_->comparison_checked = true;
      }
      result.validation_ms = seconds_since(started) * 1e3 + run.comparison_ms;
    }
  }
  return result;
}

Result DeviceExecutor::test_of(ConfigIndex config) const {
  const Space& space = impl_->space;
  Result result;
  result.config_index = config;
  for (std::size_t p = 0; p < space.parameters().size(); ++p) {
    result.configuration.emplace_back(space.parameters()[p].name, space.value(config, p));
  }
  result.device = info_.device.name;
  result.problem_size = info_.problem_size;
  result.timestamp = utc_timestamp();
  return result;
}

RunResult DeviceExecutor::launch(PreparedTest& prepared, const LaunchData& data, double timeout_ms) {
  auto& test = static_cast<CompiledTest&>(prepared);
  if (!test.instance) return {.status = Status::LaunchError, .message = "launch geometry: " + test.instance_error};
  if (!test.kernel) return {.status = Status::CompileError, .message = test.compile_error};
  return impl_->backend.launch(*test.kernel, *test.instance, data, timeout_ms);
}

TuningContent DeviceExecutor::content() const {
  return tuner_detail::tuning_content(impl_->spec, impl_->problem.size(), impl_->problem.program(), info_.device,
                                      impl_->callbacks, &impl_->input_digest());
}

double DeviceExecutor::clock_s() const { return seconds_since(impl_->created); }

}  // namespace steer
