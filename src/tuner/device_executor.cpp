// Tests on a device: the spec resolved for one problem size, each configuration compiled
// (on the loop's pool), launched and timed by the backend, and validated.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>

#include "measure/validation.hpp"
#include "steer/error.hpp"
#include "steer/reference.hpp"
#include "steer/tuner.hpp"
#include "tuner/kernel_problem.hpp"
#include "tuner/reference_cache.hpp"

namespace steer {
namespace {

using Clock = std::chrono::steady_clock;

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
  Clock::time_point created = Clock::now();
  KernelProblem problem;
  ReferenceOutputs expected;  // empty when the spec asks for no validation

  Impl(const Spec& s, const Space& sp, Backend& b, const ProblemSize& size, Language language)
      : spec(s), space(sp), backend(b), problem(s, sp, size, language) {}

  // Expected outputs: from the registered CPU reference, or by running the reference
  // configuration.
  void compute_expected(const RunOptions& run_options) {
    const Reference& reference = spec.reference;
    expected.clear();
    if (reference.kind == Reference::Kind::None) return;
    const auto& args = problem.program().arguments;
    for (std::size_t index : problem.outputs()) expected.emplace_back(args[index].data.size());
    if (reference.kind == Reference::Kind::Cpu) {
      const ReferenceFunction& function = find_reference(reference.cpu_function);
      const auto cached = tuner_detail::reference_cache_file(reference.cpu_function, problem.size(), args);
      if (cached && tuner_detail::read_cached_reference(*cached, expected)) return;
      const Clock::time_point start = Clock::now();
      function(ReferenceInput{problem.size(), args}, expected);
      if (cached) tuner_detail::write_cached_reference(*cached, expected, seconds_since(start));
      return;
    }
    auto config = space.index_of(reference.configuration);
    if (!config) throw SpecError("the reference configuration is not a valid configuration of the space");
    CompiledTest test;
    test.instance = problem.instance(*config);
    compile_into(backend, test);
    if (!test.kernel) throw Error("the reference configuration does not compile: " + test.compile_error);
    RunOptions once = run_options;
    once.warmup = 0;
    once.repetitions = 1;
    once.min_total_ms = 0;
    once.read_outputs = true;
    RunResult run = backend.run(*test.kernel, *test.instance, once);
    if (run.status != Status::Ok) throw Error("the reference configuration failed to run: " + run.message);
    for (std::size_t o = 0; o < expected.size() && o < run.outputs.size(); ++o) {
      expected[o].assign(run.outputs[o].begin(), run.outputs[o].end());  // the views die with the next run
    }
  }

  void validate(const RunResult& run, Result& result) const {
    auto validate_start = Clock::now();
    const auto& args = problem.program().arguments;
    for (std::size_t o = 0; o < expected.size(); ++o) {
      const HostArgument& argument = args[problem.outputs()[o]];
      if (o >= run.outputs.size()) {
        result.status = Status::InvalidOutput;
        result.message = fmt::format("output '{}' was not read back", argument.name);
        break;
      }
      ValidationResult check = validate_output(argument.type, run.outputs[o], expected[o],
                                               spec.reference.abs_tolerance, spec.reference.rel_tolerance);
      result.max_abs_error = std::max(result.max_abs_error, check.max_abs_error);
      if (!check.ok) {
        result.status = Status::InvalidOutput;
        result.message = fmt::format("output '{}': {}", argument.name, check.message);
      }
    }
    result.validation_ms = seconds_since(validate_start) * 1e3;
  }
};

DeviceExecutor::DeviceExecutor(const Spec& spec, const Space& space, Backend& backend, const std::string& size) {
  const ProblemSize& problem_size = spec.size(size.empty() ? spec.default_size : size);
  info_.device = backend.device();
  info_.spec_name = spec.name;
  info_.spec_hash = spec.hash;
  info_.problem_size = problem_size.name;
  info_.flops = problem_size.flops;
  if (spec.kernel) info_.timeout_ms = spec.kernel->timeout_ms;
  const Language language = info_.device.backend == "opencl" ? Language::OpenCL : Language::Cuda;
  impl_ = std::make_unique<Impl>(spec, space, backend, problem_size, language);
}

DeviceExecutor::~DeviceExecutor() = default;

void DeviceExecutor::start(const RunOptions& run) {
  impl_->backend.load(impl_->problem.program());
  impl_->compute_expected(run);
}

std::unique_ptr<PreparedTest> DeviceExecutor::prepare(ConfigIndex config) {
  auto test = std::make_unique<CompiledTest>();
  try {
    test->instance = impl_->problem.instance(config);
  } catch (const ExpressionError& e) {
    test->instance_error = e.detailed();
    return test;
  }
  compile_into(impl_->backend, *test);
  return test;
}

const Result& DeviceExecutor::run(ConfigIndex config, PreparedTest* prepared, const RunOptions& run_options,
                                  std::vector<std::string>& warnings) {
  auto& test = static_cast<CompiledTest&>(*prepared);
  const Space& space = impl_->space;
  Result& result = last_;
  result = Result{};
  result.config_index = config;
  for (std::size_t p = 0; p < space.parameters().size(); ++p) {
    result.configuration.emplace_back(space.parameters()[p].name, space.value(config, p));
  }
  result.device = info_.device.name;
  result.problem_size = info_.problem_size;
  result.timestamp = utc_timestamp();
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
  options.read_outputs = !impl_->expected.empty();
  RunResult run = impl_->backend.run(*test.kernel, *test.instance, options);
  for (std::string& warning : run.warnings) warnings.push_back(std::move(warning));
  result.profiling_passes = run.profiling_passes;
  result.status = run.status;
  result.message = run.message;
  result.independent_of_configuration = run.independent_of_configuration;
  result.time = std::move(run.time);
  result.counters = std::move(run.counters);
  result.energy = run.energy;
  result.profiling_ms = run.profiling_ms;
  if (result.status == Status::Ok && !impl_->expected.empty()) impl_->validate(run, result);
  return result;
}

double DeviceExecutor::clock_s() const { return seconds_since(impl_->created); }

}  // namespace steer
