// The façade of steer/embed.hpp: a Tuner builds a Spec in code (its source, space, arguments
// bound to the application's memory, one problem size) and DeviceCallbacks for what is given
// as functions, then runs through the same DeviceExecutor and tuning loop as `steer tune`.
#include <fmt/format.h>

#include <fstream>
#include <iterator>
#include <sstream>

#include "steer/embed.hpp"
#include "steer/store.hpp"
#include "steer/tuner.hpp"

namespace steer {
namespace {

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot read kernel source '{}'", file.string()));
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

Language language_of(const std::filesystem::path& file) {
  const std::string extension = file.extension().string();
  if (extension == ".cl") return Language::OpenCL;
  if (extension == ".cu") return Language::Cuda;
  throw Error(fmt::format("kernel source '{}': the language is told by the extension, .cl (OpenCL) or .cu (CUDA)",
                          file.string()));
}

std::string describe(const Configuration& configuration) {
  std::string text;
  for (const auto& [name, value] : configuration) text += fmt::format("{}{}={}", text.empty() ? "" : " ", name, value.to_string());
  return text;
}

}  // namespace

// ---- Kernel ---------------------------------------------------------------------------

Kernel Kernel::from_file(const std::filesystem::path& file, std::string name) {
  Kernel kernel;
  kernel.name_ = std::move(name);
  return std::move(kernel.with_file(file));
}

Kernel Kernel::from_source(Language language, std::string text, std::string name) {
  Kernel kernel;
  kernel.name_ = std::move(name);
  return std::move(kernel.with_source(language, std::move(text)));
}

Kernel& Kernel::with_file(const std::filesystem::path& file) {
  const Language language = language_of(file);
  texts_.erase(language);
  files_[language] = std::filesystem::absolute(file).lexically_normal();
  return *this;
}

Kernel& Kernel::with_source(Language language, std::string text) {
  files_.erase(language);
  texts_[language] = std::move(text);
  return *this;
}

// ---- comparisons ----------------------------------------------------------------------

Comparison compare::tolerance(double abs, double rel) {
  return Comparison{.kind = Comparison::Kind::Tolerance, .abs = abs, .rel = rel};
}
Comparison compare::ulps(std::uint64_t ulps) { return Comparison{.kind = Comparison::Kind::Ulps, .ulps = ulps}; }
Comparison compare::exact() { return tolerance(0, 0); }
Comparison compare::ignore() { return Comparison{.kind = Comparison::Kind::Ignore}; }

// ---- Tuner ----------------------------------------------------------------------------

struct Tuner::Impl {
  struct Bound {
    std::string name;
    ElementType type = ElementType::F32;
    Role role = Role::Input;
    std::span<const std::byte> read;  // the application's memory (a scalar: `scalar`)
    std::span<std::byte> write;       // outputs and in-outs
    std::vector<std::byte> scalar;
  };

  Kernel kernel;
  std::unique_ptr<Backend> backend;
  SpaceDefinition space_definition;
  std::vector<std::string> constraint_texts;  // for the hash: callables are named by their parameters
  std::vector<std::pair<std::string, Value>> size_variables;
  std::vector<Bound> arguments;
  LaunchSpec launch;
  DeviceCallbacks callbacks;
  Reference reference;
  std::vector<std::string> compiler_options;
  std::string searcher_name = "default";
  SearcherOptions searcher_options;
  std::filesystem::path store_path;
  std::optional<Store> store;
  TuneOptions options;
  std::vector<std::unique_ptr<Slot>> more_slots;  // also_on(), for the next tune()

  std::optional<Spec> given;   // from_spec: the spec as loaded, run as it is
  std::string given_size;      // from_spec: the size to run (empty: the spec's default)

  std::optional<Spec> spec;    // built from the above when first asked for; reset by every change
  std::optional<Space> space;  // without what the device cannot launch
  std::string limit_rule;      // the device's limits in words, when they constrain the space
  std::optional<DeviceLimit> limit;

  // Before every change of the definition: what was built from it goes.
  void changing() {
    if (given) {
      throw Error(fmt::format("this Tuner runs spec '{}' as it was loaded: change the spec instead", given->name));
    }
    spec.reset();
    space.reset();
    limit.reset();
  }

  std::string size_name() const {
    std::string name;
    for (const auto& [variable, value] : size_variables) {
      name += fmt::format("{}{}={}", name.empty() ? "" : ",", variable, value.to_string());
    }
    return name.empty() ? "default" : name;
  }

  // Spec::hash, as a spec file's text gives it for `steer tune`: the source, the space, the
  // launch, the arguments' names, types and sizes, the options. For provenance: a store keys
  // the tuning by its content (DeviceExecutor::content).
  std::string description_hash() const {
    std::ostringstream text;
    text << "kernel " << kernel.name() << '\n';
    for (const auto& [language, file] : kernel.files()) text << to_string(language) << " source\n" << read_text(file) << '\n';
    for (const auto& [language, source] : kernel.texts()) text << to_string(language) << " source\n" << source << '\n';
    for (const Parameter& parameter : space_definition.parameters()) {
      text << "parameter " << parameter.name;
      for (const Value& value : parameter.values) text << ' ' << value.to_string();
      text << '\n';
    }
    for (const std::string& constraint : constraint_texts) text << "constraint " << constraint << '\n';
    if (callbacks.launch) {
      text << "launch by a function\n";
    } else {
      for (const std::string& dimension : launch.grid) text << "grid " << dimension << '\n';
      for (const std::string& dimension : launch.block) text << "block " << dimension << '\n';
      text << "shared " << launch.shared_memory_bytes << '\n';
    }
    for (const Bound& argument : arguments) {
      text << "argument " << argument.name << ' ' << to_string(argument.type) << ' ' << static_cast<int>(argument.role)
           << ' ' << argument.read.size() << '\n';
    }
    for (const std::string& option : compiler_options) text << "option " << option << '\n';
    for (const auto& [variable, value] : size_variables) text << "size variable " << variable << '\n';
    return content_hash(text.str());
  }

  Spec build_spec() const {
    Spec built;
    built.name = kernel.name();
    built.space = space_definition;
    KernelSpec kernel_spec;
    kernel_spec.name = kernel.name();
    kernel_spec.sources = kernel.files();
    kernel_spec.source_texts = kernel.texts();
    kernel_spec.launch = launch;
    kernel_spec.compiler_options = compiler_options;
    for (const Bound& bound : arguments) {
      Argument argument;
      argument.name = bound.name;
      argument.type = bound.type;
      argument.is_buffer = bound.role != Role::Scalar;
      argument.output = bound.role == Role::Output || bound.role == Role::InOut;
      argument.init.kind = Initialiser::Kind::Memory;
      argument.init.memory = bound.role == Role::Scalar ? std::span<const std::byte>(bound.scalar) : bound.read;
      if (argument.is_buffer) argument.size = std::to_string(bound.read.size() / size_of(bound.type));
      kernel_spec.arguments.push_back(std::move(argument));
    }
    built.kernel = std::move(kernel_spec);
    ProblemSize size;
    size.name = size_name();
    size.variables = size_variables;
    built.sizes.push_back(std::move(size));
    built.default_size = built.sizes.front().name;
    built.reference = reference;
    built.hash = description_hash();
    return built;
  }

  ConfigIndex index_of(const Configuration& configuration, const Space& tuned) const {
    std::optional<ConfigIndex> index;
    std::string why = "name every parameter once, each with one of its values, and meet the constraints";
    if (!limit_rule.empty()) why += " and " + limit_rule;
    try {
      index = tuned.index_of(configuration);
    } catch (const Error& e) {  // a parameter the space does not have
      why = e.what();
    }
    if (!index) throw Error(fmt::format("'{}' is not a configuration of the space: {}", describe(configuration), why));
    return *index;
  }
};

Tuner::Tuner(Kernel kernel, const std::string& backend, const BackendOptions& options)
    : Tuner(std::move(kernel), open_backend(backend, options)) {}

Tuner::Tuner(Kernel kernel, std::unique_ptr<Backend> backend) : impl_(std::make_unique<Impl>()) {
  if (!backend) throw Error("Tuner: no backend");
  if (kernel.files().empty() && kernel.texts().empty()) throw Error(fmt::format("kernel '{}' has no source", kernel.name()));
  impl_->kernel = std::move(kernel);
  impl_->backend = std::move(backend);
}

Tuner Tuner::from_spec(Spec spec, std::unique_ptr<Backend> backend, const std::string& size) {
  if (!spec.kernel) throw SpecError(fmt::format("spec '{}' has no kernel section: nothing to run", spec.name));
  Kernel kernel;
  kernel.name_ = spec.kernel->name;
  kernel.files_ = spec.kernel->sources;
  kernel.texts_ = spec.kernel->source_texts;
  spec.size(size.empty() ? spec.default_size : size);  // throws naming the sizes there are
  Tuner tuner(std::move(kernel), std::move(backend));
  tuner.impl_->given = std::move(spec);
  tuner.impl_->given_size = size;
  return tuner;
}

Tuner::Tuner(Tuner&&) noexcept = default;
Tuner& Tuner::operator=(Tuner&&) noexcept = default;
Tuner::~Tuner() = default;

Tuner& Tuner::parameter(std::string name, std::vector<Value> values) {
  impl_->changing();
  impl_->space_definition.add_parameter(std::move(name), std::move(values));
  return *this;
}

Tuner& Tuner::parameter_from_expression(std::string name, std::string_view values_expression) {
  impl_->changing();
  impl_->space_definition.add_parameter(std::move(name), values_expression);
  return *this;
}

Tuner& Tuner::constraint(std::string expression) {
  impl_->changing();
  impl_->constraint_texts.push_back(expression);
  impl_->space_definition.add_constraint(std::move(expression));
  return *this;
}

Tuner& Tuner::constraint(std::vector<std::string> parameters, std::function<bool(std::span<const Value>)> accept) {
  impl_->changing();
  std::string label = "a function of";
  for (const std::string& parameter : parameters) label += ' ' + parameter;
  impl_->constraint_texts.push_back(label);
  impl_->space_definition.add_constraint(std::move(parameters), std::move(accept), label);
  return *this;
}

Tuner& Tuner::size(std::string name, Value value) {
  impl_->changing();
  for (auto& [variable, existing] : impl_->size_variables) {
    if (variable == name) {
      existing = std::move(value);
      return *this;
    }
  }
  impl_->size_variables.emplace_back(std::move(name), std::move(value));
  return *this;
}

Tuner& Tuner::bind(std::string name, ElementType type, Role role, std::span<const std::byte> read,
                   std::span<std::byte> write) {
  impl_->changing();
  for (const Impl::Bound& bound : impl_->arguments) {
    if (bound.name == name) throw Error(fmt::format("argument '{}' is bound twice", name));
  }
  if (role != Role::Scalar && read.empty()) throw Error(fmt::format("argument '{}': a buffer needs at least one element", name));
  Impl::Bound bound{.name = std::move(name), .type = type, .role = role, .read = read, .write = write};
  if (role == Role::Scalar) {
    bound.scalar.assign(read.begin(), read.end());  // by value: `read` is the caller's temporary
    bound.read = {};
  }
  impl_->arguments.push_back(std::move(bound));
  return *this;
}

Tuner& Tuner::launch(std::vector<std::string> grid, std::vector<std::string> block, std::string shared_memory_bytes) {
  impl_->changing();
  if (grid.empty() || grid.size() > 3 || block.empty() || block.size() > 3) {
    throw Error("launch: grid and block take 1 to 3 expressions each");
  }
  grid.resize(3, "1");
  block.resize(3, "1");
  impl_->launch = LaunchSpec{std::move(grid), std::move(block), std::move(shared_memory_bytes)};
  impl_->callbacks.launch = nullptr;
  return *this;
}

Tuner& Tuner::launch(std::function<void(const Configuration&, KernelInstance&)> geometry) {
  impl_->changing();
  impl_->launch = LaunchSpec{};
  impl_->callbacks.launch = std::move(geometry);
  return *this;
}

Tuner& Tuner::reference(ReferenceFunction compute) {
  impl_->changing();
  impl_->reference.kind = Reference::Kind::None;
  impl_->callbacks.reference = std::move(compute);
  return *this;
}

Tuner& Tuner::reference(Kernel kernel, std::vector<std::string> grid, std::vector<std::string> block) {
  impl_->changing();
  if (grid.empty() || grid.size() > 3 || block.empty() || block.size() > 3) {
    throw Error("reference kernel: grid and block take 1 to 3 expressions each");
  }
  grid.resize(3, "1");
  block.resize(3, "1");
  impl_->callbacks.reference = nullptr;
  impl_->reference.kind = Reference::Kind::Kernel;
  impl_->reference.kernel = ReferenceKernel{.name = kernel.name(), .sources = kernel.files(),
                                            .source_texts = kernel.texts(), .launch = {std::move(grid), std::move(block), "0"}};
  return *this;
}

Tuner& Tuner::reference(std::map<std::string, std::filesystem::path> expected_files) {
  impl_->changing();
  impl_->callbacks.reference = nullptr;
  impl_->reference.kind = Reference::Kind::Files;
  impl_->reference.expected_files = std::move(expected_files);
  return *this;
}

Tuner& Tuner::compare(const std::string& name, Comparison comparison) {
  impl_->changing();
  impl_->callbacks.comparators.erase(name);
  impl_->reference.comparisons[name] = comparison;
  return *this;
}

Tuner& Tuner::compare(const std::string& name, OutputComparator comparator) {
  impl_->changing();
  impl_->reference.comparisons.erase(name);
  impl_->callbacks.comparators[name] = std::move(comparator);
  return *this;
}

Tuner& Tuner::compiler_options(std::vector<std::string> options) {
  impl_->changing();
  impl_->compiler_options = std::move(options);
  return *this;
}

Tuner& Tuner::searcher(std::string name, SearcherOptions options) {
  impl_->searcher_name = std::move(name);
  impl_->searcher_options = std::move(options);
  return *this;
}

Tuner& Tuner::store(std::filesystem::path file) {
  impl_->store.reset();
  impl_->store_path = std::move(file);
  return *this;
}

TuneOptions& Tuner::options() noexcept { return impl_->options; }

const Spec& Tuner::spec() {
  if (impl_->given) return *impl_->given;
  if (!impl_->spec) {
    for (const auto& expected : impl_->reference.expected_files) {
      const bool is_output = std::any_of(impl_->arguments.begin(), impl_->arguments.end(), [&](const Impl::Bound& bound) {
        return bound.name == expected.first && (bound.role == Role::Output || bound.role == Role::InOut);
      });
      if (!is_output) {
        throw Error(fmt::format("expected outputs '{}' are given for '{}', which is no output argument",
                                expected.second.string(), expected.first));
      }
    }
    impl_->spec = impl_->build_spec();
  }
  return *impl_->spec;
}

const ProblemSize& Tuner::problem_size() {
  const Spec& tuned = spec();
  return tuned.size(impl_->given_size.empty() ? tuned.default_size : impl_->given_size);
}

const Space& Tuner::space() {
  if (!impl_->space) {
    const Spec& tuned = spec();
    if (tuned.space.parameters().empty()) throw Error("the Tuner has no tuning parameter: add one with parameter()");
    if (impl_->callbacks.launch || !tuned.kernel) {
      impl_->space = Space::build(tuned.space);
    } else {
      // What the device cannot launch is left out before the search, as `steer tune` does.
      const DeviceLimitedSpace limited = limit_to_device(tuned, problem_size(), impl_->backend->device());
      impl_->space = Space::build(limited.definition);
      impl_->limit_rule = limited.rule;
    }
  }
  return *impl_->space;
}

Tuner::DeviceLimit Tuner::device_limit() {
  if (!impl_->limit) {
    const Space& limited = space();
    DeviceLimit limit{.rule = impl_->limit_rule};
    if (!limit.rule.empty()) limit.left_out = Space::build(spec().space).size() - limited.size();
    impl_->limit = limit;
  }
  return *impl_->limit;
}

const DeviceCallbacks& Tuner::callbacks() const noexcept { return impl_->callbacks; }

Backend& Tuner::backend() noexcept { return *impl_->backend; }

std::unique_ptr<Searcher> Tuner::make_searcher() const {
  return steer::make_searcher(impl_->searcher_name, impl_->searcher_options);
}

Store* Tuner::open_store() {
  if (impl_->store_path.empty()) return nullptr;
  if (!impl_->store) impl_->store.emplace(Store::open(impl_->store_path));
  return &*impl_->store;
}

LaunchData Tuner::launch_data() const {
  LaunchData data;
  for (const Impl::Bound& bound : impl_->arguments) {
    data.inputs.push_back(bound.role == Role::Input || bound.role == Role::InOut ? bound.read
                                                                                : std::span<const std::byte>());
    if (bound.role == Role::Output || bound.role == Role::InOut) data.outputs.push_back(bound.write);
  }
  return data;
}

std::unique_ptr<DeviceExecutor> Tuner::make_executor() {
  return std::make_unique<DeviceExecutor>(spec(), space(), *impl_->backend, problem_size().name, impl_->callbacks);
}

KernelInstance Tuner::instance(const Configuration& configuration) {
  const ConfigIndex index = impl_->index_of(configuration, space());
  return make_executor()->instance(index);
}

RunOutput Tuner::run(const Configuration& configuration) {
  const ConfigIndex index = impl_->index_of(configuration, space());
  const std::unique_ptr<DeviceExecutor> made = make_executor();
  DeviceExecutor& executor = *made;
  executor.keep_outputs(true);
  executor.start(impl_->options.run);
  const std::unique_ptr<PreparedTest> prepared = executor.prepare(index);
  std::vector<std::string> warnings;
  RunOutput output;
  output.result = executor.run(index, prepared.get(), impl_->options.run, warnings);
  const std::span<const std::span<const std::byte>> outputs = executor.outputs();
  std::size_t next = 0;
  for (const Argument& argument : spec().kernel->arguments) {
    if (!argument.is_buffer || !argument.output) continue;
    if (next >= outputs.size()) break;  // the run failed before reading them back
    const std::span<const std::byte> bytes = outputs[next++];
    output.outputs.push_back({argument.name, argument.type, std::vector<std::byte>(bytes.begin(), bytes.end())});
    for (const Impl::Bound& bound : impl_->arguments) {  // the application's memory, when bound
      if (bound.name == argument.name && bound.write.size() == bytes.size()) std::copy(bytes.begin(), bytes.end(), bound.write.begin());
    }
  }
  return output;
}

std::optional<Configuration> Tuner::configuration_from(const Wisdom& wisdom) {
  const Wisdom::Entry* entry = wisdom.find(impl_->backend->device().name, problem_size().name);
  if (!entry) return std::nullopt;
  impl_->index_of(entry->configuration, space());  // throws when the wisdom was tuned for another space
  return entry->configuration;
}

TuneSummary Tuner::tune(const StopConditions& stop) {
  const std::unique_ptr<Searcher> search = make_searcher();
  return tune(stop, *search);
}

TuneSummary Tuner::tune(const StopConditions& stop, Searcher& searcher) {
  Store* results = open_store();  // first: a store that cannot be opened says so before any work
  std::unique_ptr<DeviceExecutor> executor = make_executor();
  TuneOptions options = impl_->options;
  options.stop = stop;
  options.size = problem_size().name;
  if (impl_->more_slots.empty()) return steer::tune(space(), *executor, searcher, results, options);
  // This Tuner's device is the first slot, and speaks for the run (the store's key, the final check).
  DeviceExecutor& primary = *executor;
  std::vector<std::unique_ptr<Slot>> slots;
  slots.push_back(std::make_unique<DeviceSlot>(std::move(executor),
                                               fmt::format("the first device ({})", impl_->backend->device().name)));
  for (std::unique_ptr<Slot>& slot : impl_->more_slots) slots.push_back(std::move(slot));
  impl_->more_slots.clear();
  DevicePool pool(primary, std::move(slots));
  return steer::tune(space(), pool, searcher, results, options);
}

Tuner& Tuner::also_on(std::vector<std::unique_ptr<Slot>> slots) {
  for (std::unique_ptr<Slot>& slot : slots) impl_->more_slots.push_back(std::move(slot));
  return *this;
}

std::unique_ptr<Slot> Tuner::device_slot(std::unique_ptr<Backend> backend, const std::string& name) {
  const DeviceInfo& mine = impl_->backend->device();
  const DeviceInfo& other = backend->device();
  if (other.name != mine.name || other.backend != mine.backend) {
    throw Error(fmt::format("{} is a {} ({}), the first device a {} ({}): tune on devices of one kind at a time, "
                            "whose timings compare",
                            name, other.name, other.backend, mine.name, mine.backend));
  }
  auto executor = std::make_unique<DeviceExecutor>(spec(), space(), *backend, problem_size().name, impl_->callbacks);
  return std::make_unique<DeviceSlot>(std::move(executor), fmt::format("{} ({})", name, other.name), std::move(backend));
}

}  // namespace steer
