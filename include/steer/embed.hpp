#pragma once
// Steer inside an application: a kernel of its own, on its own memory, tuned by the same loop
// as `steer tune` (steer::tune with a DeviceExecutor), with no spec file.
//
//   std::vector<float> x(n), y(n);
//   steer::Tuner tuner(steer::Kernel::from_file("saxpy.cl", "saxpy"), "opencl");
//   tuner.parameter("BLOCK", {32, 64, 128, 256}).parameter("ITEMS", {1, 2, 4});
//   tuner.size("N", n);
//   tuner.scalar("n", int(n)).scalar("a", 2.5f).input("x", x).inout("y", y);  // kernel order
//   tuner.launch({"cdiv(N, BLOCK * ITEMS)"}, {"BLOCK"});
//   tuner.reference([&](const steer::ReferenceInput& in, steer::ReferenceOutputs& out) { ... });
//   steer::TuneSummary summary = tuner.tune({.tests = 20});
//   tuner.run(summary.best->configuration);  // y now holds the best configuration's output
//
// Deployed: tuner.run(*tuner.configuration_from(steer::Wisdom::load("saxpy.wisdom.json"))).
//
// OnlineTuner tunes inside the application's own loop, one call per iteration. docs/embedding.md.
#include <cstddef>
#include <cstdint>
#include <concepts>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "steer/backend.hpp"
#include "steer/error.hpp"
#include "steer/recording.hpp"
#include "steer/reference.hpp"
#include "steer/result.hpp"
#include "steer/searcher.hpp"
#include "steer/space.hpp"
#include "steer/spec.hpp"
#include "steer/tuner.hpp"
#include "steer/value.hpp"

namespace steer {

// A kernel's source and entry point: a file (its language from the extension: .cl is OpenCL,
// .cu CUDA) or text. One kernel may have both languages, for either backend.
class Kernel {
 public:
  // Throws Error for an extension other than .cl and .cu; the file is read when a run starts.
  static Kernel from_file(const std::filesystem::path& file, std::string name);
  static Kernel from_source(Language language, std::string text, std::string name);
  // The same kernel in another language.
  Kernel& with_file(const std::filesystem::path& file);
  Kernel& with_source(Language language, std::string text);

  const std::string& name() const noexcept { return name_; }
  const std::map<Language, std::filesystem::path>& files() const noexcept { return files_; }
  const std::map<Language, std::string>& texts() const noexcept { return texts_; }

 private:
  friend class Tuner;  // Tuner::from_spec takes a spec's sources as they are
  std::string name_;
  std::map<Language, std::filesystem::path> files_;
  std::map<Language, std::string> texts_;
};

// How an output is compared with the reference (Tuner::compare).
namespace compare {
Comparison tolerance(double abs, double rel = 0);  // |actual - expected| <= abs + rel * |expected|
Comparison ulps(std::uint64_t ulps);               // at most `ulps` representable values apart
Comparison exact();
Comparison ignore();
// Element by element in code: `accept(actual, expected)` for each element of T.
template <typename T>
OutputComparator elements(std::function<bool(T actual, T expected)> accept);
}  // namespace compare

// What Tuner::run returns: the test and the outputs it computed.
struct RunOutput {
  struct Output {
    std::string name;
    ElementType type = ElementType::F32;
    std::vector<std::byte> bytes;
  };
  Result result;  // status, timing, validation against the reference
  std::vector<Output> outputs;  // each output and in-out argument after the run, in argument order
  // The elements of output `name`; throws Error for another type or an unknown name.
  template <typename T>
  std::vector<T> output(std::string_view name) const;
};

class Tuner {
 public:
  // Opens `backend`: "opencl", "cuda" or "auto" (CUDA when a GPU answers, else OpenCL).
  explicit Tuner(Kernel kernel, const std::string& backend = "auto", const BackendOptions& options = {});
  Tuner(Kernel kernel, std::unique_ptr<Backend> backend);
  // A spec's kernel (docs/spec.md) at one of its sizes (empty: the spec's default), run as
  // `steer tune` runs it: arguments initialised as the spec says, its reference. Its
  // definition is the spec's: the setters below throw; searcher, store and options apply.
  static Tuner from_spec(Spec spec, std::unique_ptr<Backend> backend, const std::string& size = {});
  Tuner(Tuner&&) noexcept;
  Tuner& operator=(Tuner&&) noexcept;
  ~Tuner();

  // The tuning space: parameters (each a -D definition of the kernel) and constraints.
  Tuner& parameter(std::string name, std::vector<Value> values);
  template <std::convertible_to<std::string_view> Text>  // a template, so that {0, 1} is a list of values
  Tuner& parameter(std::string name, const Text& values_expression) {  // "[2**i for i in range(6)]"
    return parameter_from_expression(std::move(name), values_expression);
  }
  Tuner& constraint(std::string expression);                                // "BLOCK * ITEMS <= 1024"
  Tuner& constraint(std::vector<std::string> parameters, std::function<bool(std::span<const Value>)> accept);

  // A size variable (N = 4096): launch expressions and the reference see it, and the store
  // keeps results per set of size variables.
  Tuner& size(std::string name, Value value);

  // The kernel's arguments, in its parameter order. A buffer is the application's memory: it
  // is read when run(), tune() or an OnlineTuner call starts, and must stay valid while the
  // Tuner uses it. An output is written back by run() (and by OnlineTuner calls); an in-out
  // argument is read and written.
  template <std::ranges::contiguous_range Memory>
  Tuner& input(std::string name, const Memory& memory);
  template <std::ranges::contiguous_range Memory>
  Tuner& output(std::string name, Memory&& memory);
  template <std::ranges::contiguous_range Memory>
  Tuner& inout(std::string name, Memory&& memory);
  template <typename T>
  Tuner& scalar(std::string name, T value);

  // Launch geometry: blocks (work-groups) and threads per block per dimension, as expressions
  // of parameters and size variables ("cdiv(N, BLOCK)"), or a function of the configuration.
  Tuner& launch(std::vector<std::string> grid, std::vector<std::string> block, std::string shared_memory_bytes = "0");
  Tuner& launch(std::function<void(const Configuration&, KernelInstance&)> geometry);

  // The reference the outputs are validated against: a function that computes them, a
  // reference kernel run once on the device (geometry of size variables only), or files of
  // expected outputs per output argument (.npy or raw). Without one, outputs are not checked.
  Tuner& reference(ReferenceFunction compute);
  Tuner& reference(Kernel kernel, std::vector<std::string> grid, std::vector<std::string> block);
  Tuner& reference(std::map<std::string, std::filesystem::path> expected_files);
  // How output `name` is compared (default: compare::tolerance(1e-5, 1e-4)).
  Tuner& compare(const std::string& name, Comparison comparison);
  Tuner& compare(const std::string& name, OutputComparator comparator);

  Tuner& compiler_options(std::vector<std::string> options);
  // The search strategy (`steer searchers` lists them; default: "default").
  Tuner& searcher(std::string name, SearcherOptions options = {});
  // A results store: tests are kept in it and a later tune() resumes from it.
  Tuner& store(std::filesystem::path file);
  // More places for the next tune() to run tests on at once, beside this Tuner's own device:
  // other devices of the same kind (device_slot) or the ranks of an MPI job
  // (steer/parallel.hpp). Each runs one test at a time; a slot that is lost records its test
  // as failed and the run goes on on the others.
  Tuner& also_on(std::vector<std::unique_ptr<Slot>> slots);
  // A slot that runs this Tuner's kernel on `backend` (another device), called `name` in
  // messages ("device 1"). Throws Error when its device is not of the same kind as this
  // Tuner's: their timings could not be compared.
  std::unique_ptr<Slot> device_slot(std::unique_ptr<Backend> backend, const std::string& name);
  // The loop's other options (repetitions, objective, compile threads, on_test, ...);
  // tune() sets their `stop`.
  TuneOptions& options() noexcept;

  // A configuration's -D definitions and launch geometry. Throws Error for a configuration
  // that is not in the space.
  KernelInstance instance(const Configuration& configuration);
  // Compiles and runs one configuration on the application's memory (timed, and validated
  // when there is a reference), writes the outputs back into it and returns them. Throws
  // Error when it does not run; an invalid output is the result's status.
  RunOutput run(const Configuration& configuration);
  // Tunes until `stop` (and the searcher's end), on the memory as it is when called.
  TuneSummary tune(const StopConditions& stop);
  // The same with a searcher of the application's own (a strategy of its own, or one made
  // with settings of its own).
  TuneSummary tune(const StopConditions& stop, Searcher& searcher);
  // The configuration a wisdom file (`steer export --format wisdom`) gives for this device and
  // problem size, or for the nearest size tuned on this device; nullopt when it has none for
  // the device. Throws Error when that is not a configuration of this Tuner's space.
  std::optional<Configuration> configuration_from(const Wisdom& wisdom);

  // What the Tuner has built from its definition (for OnlineTuner and the command line).
  const Spec& spec();
  const ProblemSize& problem_size();
  // The space, without what this device cannot launch (blocks of more threads, or more
  // dynamic shared memory, than it allows, by the launch expressions), as `steer tune` does.
  const Space& space();
  struct DeviceLimit {
    std::uint64_t left_out = 0;  // configurations of the definition left out of space()
    std::string rule;            // the device's limits in words; empty when none applied
  };
  DeviceLimit device_limit();
  // A DeviceExecutor of the kernel at its size on the memory as it is now.
  std::unique_ptr<DeviceExecutor> make_executor();
  const DeviceCallbacks& callbacks() const noexcept;
  Backend& backend() noexcept;
  std::unique_ptr<Searcher> make_searcher() const;
  // The store set with store(), opened; null without one.
  Store* open_store();
  // Per argument of the kernel, in order: the application's memory to read before a launch
  // (empty for scalars) and to write after it (empty for inputs).
  LaunchData launch_data() const;

 private:
  enum class Role { Input, Output, InOut, Scalar };
  Tuner& parameter_from_expression(std::string name, std::string_view values_expression);
  Tuner& bind(std::string name, ElementType type, Role role, std::span<const std::byte> read,
              std::span<std::byte> write);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Tuning inside the application's own loop: each call of run() launches the kernel once on the
// application's memory as bound to the Tuner, and writes the outputs into it. While exploring,
// a call runs the configuration under test (the searcher proposes and the next ones compile
// on a thread of its own between calls); after `budget` tests it stays on the best. With a
// store (Tuner::store), the tests are kept and a later run of the application resumes: once
// the budget is spent, it starts on the best at once.
//
// A configuration is used on the application's data only after it validated against the
// reference (run on the data bound when the OnlineTuner started), when there is one; one that
// fails, on that data or on the application's, is recorded as failed and the call is served by
// the next. It needs a backend that implements Backend::launch (CUDA and OpenCL both do);
// once converged, the calls run in the application's process (OnlineOptions).
struct OnlineOptions {
  std::uint64_t budget = 50;  // configurations to test, those resumed from the store included
  int calls_per_test = 5;     // calls spent on each tested configuration; the first is not timed
  // A launch slower than this fails, its kernel stopped: each call's, and each validation
  // run's (in place of the spec's kernel.timeout_ms).
  double timeout_ms = 10'000;
  // Once converged, launch the best configuration in this process rather than in the
  // backend's worker (Backend::run_in_this_process): each call then saves a round trip to
  // the worker, which costs more than a short kernel can spare (docs/embedding.md), and a
  // configuration that ran cleanly through its tests is trusted not to crash. false keeps
  // every launch in the worker, where a crash or hang fails the call alone.
  bool in_process_once_converged = true;
};

struct OnlineStep {
  Configuration configuration;  // what ran
  double kernel_ms = 0;         // the launch's time on the device
  bool exploring = false;       // a configuration under test; false once converged
};

class OnlineTuner {
 public:
  // `tuner` (its kernel, space, memory, reference, searcher and store) must outlive this and
  // stay unchanged while it runs. Throws Error when the tuning cannot start.
  explicit OnlineTuner(Tuner& tuner, OnlineOptions options = {});
  ~OnlineTuner();
  OnlineTuner(const OnlineTuner&) = delete;
  OnlineTuner& operator=(const OnlineTuner&) = delete;

  // One launch on the application's memory. Throws Error when no configuration could run it.
  OnlineStep run();
  // Whether exploring is over (every later call runs the best).
  bool converged() const;
  // The best configuration found so far, once one ran.
  std::optional<Configuration> best() const;
  // The exploration's summary, once converged.
  std::optional<TuneSummary> summary() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---- templates -------------------------------------------------------------------------

template <std::ranges::contiguous_range Memory>
Tuner& Tuner::input(std::string name, const Memory& memory) {
  using T = std::ranges::range_value_t<Memory>;
  const std::span<const T> elements(std::ranges::data(memory), std::ranges::size(memory));
  return bind(std::move(name), detail::element_type_of<T>(), Role::Input, std::as_bytes(elements), {});
}

template <std::ranges::contiguous_range Memory>
Tuner& Tuner::output(std::string name, Memory&& memory) {
  using T = std::ranges::range_value_t<Memory>;
  const std::span<T> elements(std::ranges::data(memory), std::ranges::size(memory));
  return bind(std::move(name), detail::element_type_of<T>(), Role::Output, std::as_bytes(elements),
              std::as_writable_bytes(elements));
}

template <std::ranges::contiguous_range Memory>
Tuner& Tuner::inout(std::string name, Memory&& memory) {
  using T = std::ranges::range_value_t<Memory>;
  const std::span<T> elements(std::ranges::data(memory), std::ranges::size(memory));
  return bind(std::move(name), detail::element_type_of<T>(), Role::InOut, std::as_bytes(elements),
              std::as_writable_bytes(elements));
}

template <typename T>
Tuner& Tuner::scalar(std::string name, T value) {
  std::vector<std::byte> bytes(sizeof(T));
  std::memcpy(bytes.data(), &value, sizeof(T));
  return bind(std::move(name), detail::element_type_of<T>(), Role::Scalar, bytes, {});
}

template <typename T>
OutputComparator compare::elements(std::function<bool(T actual, T expected)> accept) {
  return [accept = std::move(accept)](ElementType type, std::span<const std::byte> actual,
                                      std::span<const std::byte> expected, std::string& message) {
    if (type != detail::element_type_of<T>()) {
      message = std::string("the comparison function takes another element type than the output's ") + to_string(type);
      return false;
    }
    for (std::size_t i = 0; i + sizeof(T) <= actual.size() && i + sizeof(T) <= expected.size(); i += sizeof(T)) {
      T a, e;
      std::memcpy(&a, actual.data() + i, sizeof(T));
      std::memcpy(&e, expected.data() + i, sizeof(T));
      if (!accept(a, e)) {
        message = "rejected by the comparison function at index " + std::to_string(i / sizeof(T));
        return false;
      }
    }
    return true;
  };
}

template <typename T>
std::vector<T> RunOutput::output(std::string_view name) const {
  for (const Output& output : outputs) {
    if (output.name != name) continue;
    if (output.type != detail::element_type_of<T>()) {
      throw Error("output '" + output.name + "' holds " + to_string(output.type) + " elements, not " +
                  to_string(detail::element_type_of<T>()));
    }
    std::vector<T> elements(output.bytes.size() / sizeof(T));
    if (!elements.empty()) std::memcpy(elements.data(), output.bytes.data(), elements.size() * sizeof(T));
    return elements;
  }
  throw Error("no output '" + std::string(name) + "'");
}

}  // namespace steer
