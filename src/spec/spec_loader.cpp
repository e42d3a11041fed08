// Loads tuning specs: Steer's JSON format (docs/spec.md) and KTT tuning files.
// Strict on purpose: unknown keys, wrong types and values outside the language are
// errors naming the file and JSON path, because a typo that passes silently changes
// what gets tuned.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fmt/core.h>
#include <fstream>
#include <iterator>
#include <map>

#include "expression/expression.hpp"
#include "spec/spec_readers.hpp"

namespace steer {
namespace spec_detail {
namespace {

namespace fs = std::filesystem;

// Words the expression language reads itself (expression/expression.hpp): a parameter or
// size variable with one of these names could not be referred to.
constexpr std::string_view kReservedWords[] = {
    "and", "or",  "not", "if",    "else", "for",   "in",   "True", "False", "true", "false", "min",
    "max", "abs", "int", "float", "ceil", "floor", "sqrt", "log2", "cdiv",  "pow",  "range", "list"};

constexpr ElementType kElementTypes[] = {ElementType::F32, ElementType::F64, ElementType::I32,
                                         ElementType::U32, ElementType::I64, ElementType::U64,
                                         ElementType::I8,  ElementType::U8};

// A value as a message shows it: strings quoted, so that '1' and 1 differ.
std::string describe(const Value& value) {
  return value.is_string() ? fmt::format("'{}'", value.as_string()) : value.to_string();
}

// A C identifier: letters, digits and '_', not starting with a digit.
void check_identifier(const Node& where, const std::string& name) {
  auto starts_ok = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
  auto continues_ok = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  if (name.empty() || !starts_ok(name.front()) || !std::all_of(name.begin() + 1, name.end(), continues_ok)) {
    where.fail(fmt::format("'{}' is not a valid name: use letters, digits and '_', not starting with a digit", name));
  }
}

std::vector<std::string> parameter_names(const SpaceDefinition& space) {
  std::vector<std::string> names;
  for (const Parameter& parameter : space.parameters()) names.push_back(parameter.name);
  return names;
}

// Size variables are the same in every size (read_sizes checks), so the first size names them.
std::vector<std::string> size_variable_names(const std::vector<ProblemSize>& sizes) {
  std::vector<std::string> names;
  if (!sizes.empty()) {
    for (const auto& [name, value] : sizes.front().variables) names.push_back(name);
  }
  return names;
}

std::string read_description(const Node& node) {
  if (node.json().is_string()) return node.as_string();
  // A list of lines reads better in JSON than one string full of "\n".
  std::string text;
  for (const Node& line : node.elements()) {
    if (!text.empty()) text += '\n';
    text += line.as_string();
  }
  return text;
}

std::vector<Value> read_values(const Node& node) {
  std::vector<Value> values;
  if (node.json().is_string()) {
    values = evaluate_value_list(node, node.as_nonempty_string());
  } else if (node.json().is_array()) {
    for (const Node& element : node.elements()) values.push_back(element.as_value());
  } else {
    node.fail(fmt::format("expected a list or a list expression, got {}", describe_type(node.json())));
  }
  normalise_values(node, values);
  return values;
}

void read_parameters(const Node& node, SpaceDefinition& space) {
  if (node.list_size() == 0) node.fail("expected at least one parameter");
  for (const Node& element : node.elements()) {
    ObjectReader parameter(element, {"name", "values"});
    Node name_node = parameter.required("name");
    std::string name = name_node.as_nonempty_string();
    check_variable_name(name_node, name);
    if (space.find(name)) name_node.fail(fmt::format("parameter '{}' is defined twice", name));
    std::vector<Value> values = read_values(parameter.required("values"));
    space.add_parameter(std::move(name), std::move(values));
  }
}

void read_constraints(const Node& node, SpaceDefinition& space) {
  const std::vector<std::string> names = parameter_names(space);
  auto add = [&](const Node& item) {
    std::string text = item.as_nonempty_string();
    check_expression(item, text, names);
    space.add_constraint(std::move(text), item.path());
  };
  if (node.json().is_string()) {
    add(node);
  } else if (node.json().is_array()) {
    for (const Node& element : node.elements()) add(element);
  } else {
    node.fail(fmt::format("expected a constraint expression or a list of them, got {}",
                          describe_type(node.json())));
  }
}

std::vector<ProblemSize> read_sizes(const Node& node, const SpaceDefinition& space) {
  if (!node.json().is_object()) {
    node.fail(fmt::format("expected an object of named sizes, got {}", describe_type(node.json())));
  }
  if (node.json().empty()) node.fail("expected at least one named size");
  std::vector<ProblemSize> sizes;
  for (const auto& [size_name, variables] : node.json().items()) {
    if (size_name.empty()) node.fail("a size needs a non-empty name");
    Node size_node = node.child(size_name);
    if (!variables.is_object()) {
      size_node.fail(fmt::format("expected an object of variables (\"N\": 1024), got {}",
                                 describe_type(variables)));
    }
    ProblemSize size;
    size.name = size_name;
    for (const auto& [variable, value] : variables.items()) {
      Node variable_node = size_node.child(variable);
      check_variable_name(variable_node, variable);
      if (space.find(variable)) {
        variable_node.fail(fmt::format("'{}' is also a parameter; a size variable needs a name of its own", variable));
      }
      size.variables.emplace_back(variable, variable_node.as_value());
    }
    // Launch and size expressions are checked once against the variable names, so every
    // size must define the same ones.
    if (!sizes.empty()) {
      const ProblemSize& first = sizes.front();
      auto defines = [](const ProblemSize& in, const std::string& name) {
        return std::any_of(in.variables.begin(), in.variables.end(),
                           [&](const auto& variable) { return variable.first == name; });
      };
      for (const auto& [name, value] : first.variables) {
        if (!defines(size, name)) {
          size_node.fail(fmt::format("lacks variable '{}', which size '{}' defines (every size defines the same variables)",
                                     name, first.name));
        }
      }
      for (const auto& [name, value] : size.variables) {
        if (!defines(first, name)) {
          size_node.fail(fmt::format("defines '{}', which size '{}' does not (every size defines the same variables)",
                                     name, first.name));
        }
      }
    }
    sizes.push_back(std::move(size));
  }
  return sizes;
}

std::string read_default_size(const std::optional<Node>& node, const std::vector<ProblemSize>& sizes) {
  if (!node) return sizes.empty() ? std::string() : sizes.front().name;
  std::string name = node->as_nonempty_string();
  std::string choices;
  for (const ProblemSize& size : sizes) {
    if (size.name == name) return name;
    choices += choices.empty() ? size.name : ", " + size.name;
  }
  node->fail(fmt::format("'{}' is not among the sizes ({})", name,
                         choices.empty() ? "the spec defines no sizes" : choices));
}

// Evaluates an expression of size variables for one size, e.g. flops or a buffer's length.
Value evaluate_for_size(const Node& node, const std::string& text, const ProblemSize& size) {
  Node located(node.json(), node.file(), fmt::format("{} (size '{}')", node.path(), size.name));
  try {
    Value value = expr::evaluate_once(text, size.variables);
    if (!value.is_numeric()) located.fail(fmt::format("expected a number, got {}", describe(value)));
    return value;
  } catch (const ExpressionError& error) {
    rethrow_at(located, error);
  }
}

// flops or bytes: an expression of size variables, evaluated into each size.
void read_work(const Node& node, std::vector<ProblemSize>& sizes, std::optional<double> ProblemSize::*field) {
  std::string text = node.as_expression();
  check_expression(node, text, size_variable_names(sizes));
  for (ProblemSize& size : sizes) {
    double amount = evaluate_for_size(node, text, size).as_double();
    if (amount < 0) node.fail(fmt::format("evaluates to {} for size '{}'; expected a non-negative amount", amount, size.name));
    size.*field = amount;
  }
}

ElementType read_element_type(const Node& node) {
  std::string name = node.as_string();
  if (name == "int") return ElementType::I32;
  std::string choices;
  for (ElementType type : kElementTypes) {
    if (name == to_string(type)) return type;
    choices += choices.empty() ? to_string(type) : fmt::format(", {}", to_string(type));
  }
  node.fail(fmt::format("unknown element type '{}'; expected one of: {} (int is int32)", name, choices));
}

Initialiser read_initialiser(const Node& node, const fs::path& directory) {
  Initialiser init;
  if (node.json().is_string()) {
    std::string kind = node.as_string();
    if (kind == "zeros") {
      init.kind = Initialiser::Kind::Zeros;
    } else if (kind == "iota") {
      init.kind = Initialiser::Kind::Iota;
    } else if (kind == "random") {
      init.kind = Initialiser::Kind::Random;
    } else {
      node.fail(fmt::format("unknown initialiser '{}'; expected \"zeros\", \"iota\", \"random\", "
                            "{{\"constant\": v}}, {{\"random\": {{...}}}} or {{\"file\": path}}", kind));
    }
    return init;
  }
  ObjectReader reader(node, {"constant", "random", "file"});
  if (node.json().size() != 1) node.fail("expected exactly one of 'constant', 'random', 'file'");
  if (auto constant = reader.optional("constant")) {
    init.kind = Initialiser::Kind::Constant;
    init.value = constant->as_number();
  } else if (auto random = reader.optional("random")) {
    init.kind = Initialiser::Kind::Random;
    ObjectReader settings(*random, {"seed", "low", "high"});
    if (auto seed = settings.optional("seed")) {
      std::int64_t value = seed->as_int();
      if (value < 0) seed->fail("expected a non-negative integer");
      init.seed = static_cast<std::uint64_t>(value);
    }
    if (auto low = settings.optional("low")) init.low = low->as_number();
    if (auto high = settings.optional("high")) init.high = high->as_number();
    if (!(init.low < init.high)) random->fail(fmt::format("low ({}) must be below high ({})", init.low, init.high));
  } else {
    init.kind = Initialiser::Kind::File;
    init.file = (directory / reader.required("file").as_nonempty_string()).lexically_normal();
  }
  return init;
}

struct KernelContext {
  std::vector<std::string> launch_names;  // parameters and size variables
  std::vector<std::string> size_names;    // size variables only
  const std::vector<ProblemSize>* sizes;
  fs::path directory;
};

Argument read_argument(const Node& node, const KernelContext& context) {
  ObjectReader reader(node, {"name", "type", "size", "init", "output", "value"});
  Argument argument;
  Node name = reader.required("name");
  argument.name = name.as_nonempty_string();
  check_identifier(name, argument.name);
  argument.type = read_element_type(reader.required("type"));
  if (auto value = reader.optional("value")) {
    for (std::string_view key : {"size", "init", "output"}) {
      if (reader.has(key)) {
        node.fail(fmt::format("'{}' belongs to buffers; an argument with 'value' is a scalar", key));
      }
    }
    argument.is_buffer = false;
    argument.value = value->as_expression();
    check_expression(*value, argument.value, context.launch_names);
    return argument;
  }
  if (!reader.has("size")) node.fail("expected 'size' (a buffer) or 'value' (a scalar)");
  Node size = reader.required("size");
  argument.size = size.as_expression();
  check_expression(size, argument.size, context.size_names);
  for (const ProblemSize& problem : *context.sizes) {
    double count = evaluate_for_size(size, argument.size, problem).as_double();
    if (count < 1 || count != static_cast<double>(static_cast<std::uint64_t>(count))) {
      size.fail(fmt::format("expected a positive whole number of elements, got {} for size '{}'", count, problem.name));
    }
  }
  if (auto init = reader.optional("init")) argument.init = read_initialiser(*init, context.directory);
  if (auto output = reader.optional("output")) argument.output = output->as_bool();
  return argument;
}

std::vector<std::string> read_dimensions(const Node& node, const std::vector<std::string>& names) {
  std::size_t count = node.list_size();
  if (count < 1 || count > 3) node.fail(fmt::format("expected 1 to 3 dimensions, got {}", count));
  std::vector<std::string> dimensions;
  for (const Node& element : node.elements()) {
    dimensions.push_back(element.as_expression());
    check_expression(element, dimensions.back(), names);
  }
  dimensions.resize(3, "1");
  return dimensions;
}

std::map<Language, fs::path> read_sources(const Node& node, const fs::path& directory) {
  ObjectReader sources(node, {"cuda", "opencl"});
  std::map<Language, fs::path> paths;
  for (auto [key, language] : {std::pair{"cuda", Language::Cuda}, std::pair{"opencl", Language::OpenCL}}) {
    if (auto source = sources.optional(key)) paths[language] = (directory / source->as_nonempty_string()).lexically_normal();
  }
  if (paths.empty()) node.fail("expected at least one of 'cuda', 'opencl'");
  return paths;
}

LaunchSpec read_launch(const Node& node, const std::vector<std::string>& names) {
  ObjectReader launch(node, {"grid", "block", "shared_memory_bytes"});
  LaunchSpec spec;
  spec.grid = read_dimensions(launch.required("grid"), names);
  spec.block = read_dimensions(launch.required("block"), names);
  if (auto shared = launch.optional("shared_memory_bytes")) {
    spec.shared_memory_bytes = shared->as_expression();
    check_expression(*shared, spec.shared_memory_bytes, names);
  }
  return spec;
}

KernelSpec read_kernel(const Node& node, const KernelContext& context) {
  ObjectReader reader(node,
                      {"name", "sources", "launch", "arguments", "compiler_options", "compute_bound", "timeout_ms"});
  KernelSpec kernel;
  kernel.name = reader.required("name").as_nonempty_string();

  kernel.sources = read_sources(reader.required("sources"), context.directory);
  kernel.launch = read_launch(reader.required("launch"), context.launch_names);

  if (auto arguments = reader.optional("arguments")) {
    for (const Node& element : arguments->elements()) {
      Argument argument = read_argument(element, context);
      for (const Argument& earlier : kernel.arguments) {
        if (earlier.name == argument.name) {
          element.fail(fmt::format("argument '{}' is defined twice", argument.name));
        }
      }
      kernel.arguments.push_back(std::move(argument));
    }
  }
  if (auto options = reader.optional("compiler_options")) {
    for (const Node& option : options->elements()) kernel.compiler_options.push_back(option.as_nonempty_string());
  }
  if (auto compute_bound = reader.optional("compute_bound")) kernel.compute_bound = compute_bound->as_bool();
  if (auto timeout = reader.optional("timeout_ms")) {
    kernel.timeout_ms = timeout->as_number();
    if (!(*kernel.timeout_ms > 0)) timeout->fail("expected a positive number of milliseconds");
  }
  return kernel;
}

std::vector<std::pair<std::string, Value>> read_configuration(const Node& node, const SpaceDefinition& space) {
  if (!node.json().is_object()) {
    node.fail(fmt::format("expected an object of parameter values, got {}", describe_type(node.json())));
  }
  for (const auto& [name, value] : node.json().items()) {
    if (!space.find(name)) node.child(name).fail(fmt::format("'{}' is not a parameter", name));
  }
  std::vector<std::pair<std::string, Value>> configuration;
  for (const Parameter& parameter : space.parameters()) {
    if (!node.json().contains(parameter.name)) {
      node.fail(fmt::format("missing a value for parameter '{}' (name every parameter)", parameter.name));
    }
    Node value_node = node.child(parameter.name);
    Value value = value_node.as_value();
    if (parameter.type == ValueType::Float && value.is_int()) value = Value(static_cast<double>(value.as_int()));
    if (value.type() != parameter.type) {
      value_node.fail(fmt::format("expected a {} value for '{}', got {}", to_string(parameter.type), parameter.name,
                                  describe(value)));
    }
    if (std::find(parameter.values.begin(), parameter.values.end(), value) == parameter.values.end()) {
      value_node.fail(fmt::format("{} is not among the values of '{}'", describe(value), parameter.name));
    }
    configuration.emplace_back(parameter.name, std::move(value));
  }
  return configuration;
}

std::vector<std::string> output_names(const KernelSpec& kernel) {
  std::vector<std::string> names;
  for (const Argument& argument : kernel.arguments) {
    if (argument.is_buffer && argument.output) names.push_back(argument.name);
  }
  return names;
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text.empty() ? "none" : text;
}

// A key of `node` that must name an output argument.
void check_output_name(const Node& node, const std::string& name, const KernelSpec& kernel) {
  const std::vector<std::string> outputs = output_names(kernel);
  if (std::find(outputs.begin(), outputs.end(), name) == outputs.end()) {
    node.fail(fmt::format("'{}' is not an output argument of the kernel (outputs: {})", name, joined(outputs)));
  }
}

Comparison read_comparison(const Node& node) {
  Comparison comparison;
  if (node.json().is_string()) {
    const std::string kind = node.as_string();
    if (kind == "ignore") {
      comparison.kind = Comparison::Kind::Ignore;
    } else if (kind == "exact") {
      comparison.abs = comparison.rel = 0;
    } else {
      node.fail(fmt::format("unknown comparison '{}'; expected \"ignore\", \"exact\", {{\"abs\": a, \"rel\": r}} or "
                            "{{\"ulps\": n}}", kind));
    }
    return comparison;
  }
  ObjectReader reader(node, {"abs", "rel", "ulps"});
  if (reader.has("ulps")) {
    if (reader.has("abs") || reader.has("rel")) node.fail("give either 'ulps' or 'abs'/'rel', not both");
    const Node ulps = reader.required("ulps");
    const std::int64_t value = ulps.as_int();
    if (value < 0) ulps.fail("expected a non-negative number of units in the last place");
    comparison.kind = Comparison::Kind::Ulps;
    comparison.ulps = static_cast<std::uint64_t>(value);
    return comparison;
  }
  if (!reader.has("abs") && !reader.has("rel")) node.fail("expected 'abs' and/or 'rel', or 'ulps'");
  comparison.abs = comparison.rel = 0;  // a bound not given is not granted
  for (auto [key, field] : {std::pair{"abs", &Comparison::abs}, std::pair{"rel", &Comparison::rel}}) {
    if (auto bound = reader.optional(key)) {
      const double value = bound->as_number();
      if (value < 0) bound->fail("expected a non-negative number");
      comparison.*field = value;
    }
  }
  return comparison;
}

Reference read_reference(const Node& node, const SpaceDefinition& space, const KernelSpec& kernel,
                         const KernelContext& context) {
  ObjectReader reader(node, {"cpu", "configuration", "outputs", "kernel", "tolerance", "compare"});
  const int kinds = reader.has("cpu") + reader.has("configuration") + reader.has("outputs") + reader.has("kernel");
  if (kinds != 1) {
    node.fail(kinds == 0 ? "expected one of 'cpu' (a CPU reference compiled into Steer), 'outputs' (files of expected "
                           "outputs), 'kernel' (a reference kernel) or 'configuration' (a configuration whose outputs "
                           "are the reference)"
                         : "give only one of 'cpu', 'outputs', 'kernel', 'configuration'");
  }
  Reference reference;
  if (auto cpu = reader.optional("cpu")) {
    reference.kind = Reference::Kind::Cpu;
    reference.cpu_function = cpu->as_nonempty_string();
  } else if (auto configuration = reader.optional("configuration")) {
    reference.kind = Reference::Kind::Configuration;
    reference.configuration = read_configuration(*configuration, space);
  } else if (auto outputs = reader.optional("outputs")) {
    reference.kind = Reference::Kind::Files;
    if (!outputs->json().is_object() || outputs->json().empty()) {
      outputs->fail("expected an object of output argument -> file, e.g. {\"out\": \"expected/out.npy\"}");
    }
    for (const auto& [name, file] : outputs->json().items()) {
      const Node file_node = outputs->child(name);
      check_output_name(file_node, name, kernel);
      reference.expected_files[name] = (context.directory / file_node.as_nonempty_string()).lexically_normal();
    }
  } else {
    const Node kernel_node = reader.required("kernel");
    ObjectReader reference_kernel(kernel_node, {"name", "sources", "launch"});
    reference.kind = Reference::Kind::Kernel;
    if (auto name = reference_kernel.optional("name")) reference.kernel.name = name->as_nonempty_string();
    reference.kernel.sources = read_sources(reference_kernel.required("sources"), context.directory);
    // Without tuning parameters: the reference runs one way for every configuration.
    reference.kernel.launch = read_launch(reference_kernel.required("launch"), context.size_names);
  }
  if (auto tolerance = reader.optional("tolerance")) {
    ObjectReader bounds(*tolerance, {"abs", "rel"});
    for (auto [key, field] : {std::pair{"abs", &Reference::abs_tolerance}, std::pair{"rel", &Reference::rel_tolerance}}) {
      if (auto bound = bounds.optional(key)) {
        double value = bound->as_number();
        if (value < 0) bound->fail("expected a non-negative number");
        reference.*field = value;
      }
    }
  }
  if (auto compare = reader.optional("compare")) {
    if (!compare->json().is_object()) {
      compare->fail(fmt::format("expected an object of output argument -> comparison, got {}",
                                describe_type(compare->json())));
    }
    for (const auto& [name, comparison] : compare->json().items()) {
      const Node comparison_node = compare->child(name);
      check_output_name(comparison_node, name, kernel);
      reference.comparisons[name] = read_comparison(comparison_node);
    }
  }
  if (reference.kind == Reference::Kind::Files) {
    for (const std::string& output : output_names(kernel)) {
      if (!reference.expected_files.contains(output) &&
          reference.comparison(output).kind != Comparison::Kind::Ignore) {
        node.fail(fmt::format("output '{}' has no expected file: add it to 'outputs', or compare it with \"ignore\" "
                              "(\"compare\": {{\"{}\": \"ignore\"}})", output, output));
      }
    }
  }
  return reference;
}

}  // namespace

void rethrow_at(const Node& where, const ExpressionError& error) {
  throw ExpressionError(fmt::format("{}: {}", where.where(), error.what()), error.expression(), error.position());
}

void check_expression(const Node& where, const std::string& text, std::span<const std::string> names) {
  try {
    expr::Expression::parse(text, names);
  } catch (const ExpressionError& error) {
    rethrow_at(where, error);
  }
}

void check_variable_name(const Node& where, const std::string& name) {
  check_identifier(where, name);
  if (std::find(std::begin(kReservedWords), std::end(kReservedWords), name) != std::end(kReservedWords)) {
    where.fail(fmt::format("'{}' is a word of the expression language; choose another name", name));
  }
}

std::vector<Value> evaluate_value_list(const Node& where, const std::string& text) {
  try {
    return expr::evaluate_list(text);
  } catch (const ExpressionError& error) {
    rethrow_at(where, error);
  }
}

void normalise_values(const Node& where, std::vector<Value>& values) {
  if (values.empty()) where.fail("empty value list: a parameter needs at least one value");
  bool any_float = false;
  const Value& first = values.front();
  for (const Value& value : values) {
    any_float = any_float || value.is_float();
    bool both_numbers = (value.is_int() || value.is_float()) && (first.is_int() || first.is_float());
    if (value.type() != first.type() && !both_numbers) {
      where.fail(fmt::format("mixes {} and {} values ({} and {}); a parameter's values share one type",
                             to_string(first.type()), to_string(value.type()), describe(first), describe(value)));
    }
  }
  if (any_float) {
    for (Value& value : values) value = Value(value.as_double());
  }
  std::vector<Value> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  if (auto repeated = std::adjacent_find(sorted.begin(), sorted.end()); repeated != sorted.end()) {
    where.fail(fmt::format("value {} appears more than once", describe(*repeated)));
  }
}

Spec read_steer_spec(const Node& root, const fs::path& directory) {
  ObjectReader reader(root, {"$schema", "name", "description", "parameters", "constraints", "kernel", "sizes",
                             "default_size", "flops", "bytes", "reference"});
  Spec spec;
  if (auto schema = reader.optional("$schema")) schema->as_string();  // for editors; only its type matters here
  spec.name = reader.required("name").as_nonempty_string();
  if (auto description = reader.optional("description")) spec.description = read_description(*description);
  read_parameters(reader.required("parameters"), spec.space);
  if (auto constraints = reader.optional("constraints")) read_constraints(*constraints, spec.space);
  if (auto sizes = reader.optional("sizes")) spec.sizes = read_sizes(*sizes, spec.space);
  spec.default_size = read_default_size(reader.optional("default_size"), spec.sizes);
  if (auto flops = reader.optional("flops")) read_work(*flops, spec.sizes, &ProblemSize::flops);
  if (auto bytes = reader.optional("bytes")) read_work(*bytes, spec.sizes, &ProblemSize::bytes);
  KernelContext context;
  context.size_names = size_variable_names(spec.sizes);
  context.launch_names = parameter_names(spec.space);
  context.launch_names.insert(context.launch_names.end(), context.size_names.begin(), context.size_names.end());
  context.sizes = &spec.sizes;
  context.directory = directory;
  if (auto kernel = reader.optional("kernel")) spec.kernel = read_kernel(*kernel, context);
  if (auto reference = reader.optional("reference")) {
    if (!spec.kernel) reference->fail("a reference needs a 'kernel' section to validate");
    spec.reference = read_reference(*reference, spec.space, *spec.kernel, context);
  }
  return spec;
}

}  // namespace spec_detail

Spec parse_spec(std::string_view json_text, const std::filesystem::path& origin) {
  namespace fs = std::filesystem;
  const std::string file = origin.string();
  const spec_detail::Json json = spec_detail::parse_json(json_text, file);
  const spec_detail::Node root(json, file);
  const fs::path absolute_origin = origin.empty() ? fs::path() : fs::absolute(origin).lexically_normal();
  // KTT tuning files are recognised by their top-level section.
  const bool is_ktt = json.is_object() && json.contains("ConfigurationSpace");
  Spec spec = is_ktt ? spec_detail::read_ktt_spec(root, origin)
                     : spec_detail::read_steer_spec(root, origin.empty() ? fs::current_path()
                                                                          : absolute_origin.parent_path());
  spec.path = absolute_origin;
  spec.hash = content_hash(json_text);
  return spec;
}

Spec load_spec(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::exists(path, error)) throw SpecError(fmt::format("spec file '{}' does not exist", path.string()));
  if (fs::is_directory(path, error)) throw SpecError(fmt::format("'{}' is a folder, not a spec file", path.string()));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SpecError(fmt::format("cannot open spec file '{}': {}", path.string(), std::strerror(errno)));
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw SpecError(fmt::format("cannot read spec file '{}': {}", path.string(), std::strerror(errno)));
  return parse_spec(text, path);
}

}  // namespace steer
