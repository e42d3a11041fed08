// Reads the tuning space of a KTT tuning file (KTT's TuningLoader input format):
//
//   "ConfigurationSpace": {
//     "TuningParameters": [{"Name": "TILE", "Type": "uint", "Values": "[8, 16, 32]"}, ...],
//     "Conditions": [{"Parameters": ["TILE", "VEC"], "Expression": "TILE % VEC == 0"}, ...]}
//
// Values is a Python list expression (older KTT versions wrote a JSON list; both are
// read). A condition's expression may use only the parameters it lists, as in KTT.
// Other sections (KernelSpecification, General, Search, Budget) describe how KTT runs
// the kernel and are ignored, except KernelName, which names the spec.
#include <cctype>
#include <fmt/core.h>

#include "spec/spec_readers.hpp"

namespace steer::spec_detail {
namespace {

enum class KttType { Int, UnsignedInt, Float, Bool, String };

// KTT 2.x writes int, uint, float, bool, string; older files Int, UnsignedInt, Double, ...
KttType read_type(const Node& node) {
  std::string name = node.as_string();
  std::string key;
  for (char c : name) key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (key == "int") return KttType::Int;
  if (key == "uint" || key == "unsignedint") return KttType::UnsignedInt;
  if (key == "float" || key == "double") return KttType::Float;
  if (key == "bool") return KttType::Bool;
  if (key == "string") return KttType::String;
  node.fail(fmt::format("unknown parameter type '{}'; expected int, uint, float, bool or string", name));
}

// Brings the values to the declared type where no information is lost, else fails.
void apply_type(const Node& node, KttType type, std::vector<Value>& values) {
  for (Value& value : values) {
    switch (type) {
      case KttType::Int:
      case KttType::UnsignedInt:
        if (!value.is_int()) node.fail(fmt::format("{} is not an integer, but the parameter's Type says so", value.to_string()));
        if (type == KttType::UnsignedInt && value.as_int() < 0) {
          node.fail(fmt::format("{} is negative, but the parameter's Type is uint", value.to_string()));
        }
        break;
      case KttType::Float:
        if (value.is_int()) value = Value(static_cast<double>(value.as_int()));
        if (!value.is_float()) node.fail(fmt::format("{} is not a number, but the parameter's Type is float", value.to_string()));
        break;
      case KttType::Bool:
        if (value.is_int() && (value.as_int() == 0 || value.as_int() == 1)) value = Value(value.as_int() == 1);
        if (!value.is_bool()) node.fail(fmt::format("{} is not a boolean, but the parameter's Type is bool", value.to_string()));
        break;
      case KttType::String:
        if (!value.is_string()) node.fail(fmt::format("{} is not a string, but the parameter's Type is string", value.to_string()));
        break;
    }
  }
}

void read_parameter(const Node& node, SpaceDefinition& space) {
  ObjectReader reader(node, {"Name", "Type", "Values"});
  Node name_node = reader.required("Name");
  std::string name = name_node.as_nonempty_string();
  check_variable_name(name_node, name);
  if (space.find(name)) name_node.fail(fmt::format("parameter '{}' is defined twice", name));

  Node values_node = reader.required("Values");
  std::vector<Value> values;
  if (values_node.json().is_string()) {
    values = evaluate_value_list(values_node, values_node.as_nonempty_string());
  } else if (values_node.json().is_array()) {
    for (const Node& element : values_node.elements()) values.push_back(element.as_value());
  } else {
    values_node.fail(fmt::format("expected a list expression such as \"[1, 2, 4]\", got {}",
                                 describe_type(values_node.json())));
  }
  if (auto type = reader.optional("Type")) apply_type(values_node, read_type(*type), values);
  normalise_values(values_node, values);
  space.add_parameter(std::move(name), std::move(values));
}

void read_condition(const Node& node, SpaceDefinition& space) {
  ObjectReader reader(node, {"Parameters", "Expression"});
  std::vector<std::string> names;
  for (const Node& element : reader.required("Parameters").elements()) {
    std::string name = element.as_nonempty_string();
    if (!space.find(name)) element.fail(fmt::format("'{}' is not a tuning parameter", name));
    names.push_back(std::move(name));
  }
  Node expression = reader.required("Expression");
  std::string text = expression.as_nonempty_string();
  check_expression(expression, text, names);
  space.add_constraint(std::move(text), node.path());
}

// The spec is named after the kernel when the file names it.
std::string kernel_name_of(const Json& json) {
  auto kernel = json.find("KernelSpecification");
  if (kernel == json.end() || !kernel->is_object()) return {};
  auto name = kernel->find("KernelName");
  return name != kernel->end() && name->is_string() ? name->get<std::string>() : std::string();
}

}  // namespace

Spec read_ktt_spec(const Node& root, const std::filesystem::path& origin) {
  Spec spec;
  ObjectReader configuration_space(root.child("ConfigurationSpace"), {"TuningParameters", "Conditions"});
  Node parameters = configuration_space.required("TuningParameters");
  if (parameters.list_size() == 0) parameters.fail("expected at least one tuning parameter");
  for (const Node& parameter : parameters.elements()) read_parameter(parameter, spec.space);
  if (auto conditions = configuration_space.optional("Conditions")) {
    for (const Node& condition : conditions->elements()) read_condition(condition, spec.space);
  }

  std::string kernel_name = kernel_name_of(root.json());
  spec.name = !kernel_name.empty() ? kernel_name : (origin.empty() ? std::string("ktt") : origin.stem().string());
  spec.description = "KTT tuning file: tuning space only (ConfigurationSpace); the kernel sections are not read.";
  return spec;
}

}  // namespace steer::spec_detail
