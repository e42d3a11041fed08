// SpaceDefinition: the parameters and constraints a Space is built from. Everything that
// can be checked without enumerating is checked here, where the message can point at the
// one call that was wrong; constraints are parsed by Space::build, once every parameter
// they may name is known.
#include <fmt/core.h>

#include <algorithm>

#include "expression/expression.hpp"
#include "steer/error.hpp"
#include "steer/space.hpp"

namespace steer {
namespace {

bool is_int_float_mix(ValueType a, ValueType b) {
  return (a == ValueType::Int && b == ValueType::Float) || (a == ValueType::Float && b == ValueType::Int);
}

// The one type of a value list: every value has it, except that ints and floats mix as float.
ValueType infer_type(const std::string& name, const std::vector<Value>& values) {
  ValueType type = values.front().type();
  for (const Value& value : values) {
    if (value.type() == type) continue;
    if (!is_int_float_mix(type, value.type())) {
      throw SpaceError(fmt::format("parameter '{}' mixes {} and {} values ({}); all its values must have one type",
                                   name, to_string(type), to_string(value.type()), value.to_string()));
    }
    type = ValueType::Float;
  }
  return type;
}

// A repeated value would make value -> index ambiguous and give the space duplicate
// configurations, so it is an error rather than something to dedupe silently.
void reject_duplicates(const std::string& name, const std::vector<Value>& values) {
  std::vector<Value> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  auto repeat = std::adjacent_find(sorted.begin(), sorted.end());
  if (repeat != sorted.end()) {
    throw SpaceError(fmt::format("parameter '{}' lists the value {} more than once", name, repeat->to_string()));
  }
}

}  // namespace

Parameter& SpaceDefinition::add_parameter(std::string name, std::vector<Value> values) {
  if (find(name)) throw SpaceError(fmt::format("parameter '{}' is defined twice", name));
  if (values.empty()) throw SpaceError(fmt::format("parameter '{}' has an empty value list", name));
  ValueType type = infer_type(name, values);
  if (type == ValueType::Float) {
    for (Value& value : values) value = Value(value.as_double());
  }
  reject_duplicates(name, values);
  parameters_.push_back(Parameter{std::move(name), type, std::move(values)});
  return parameters_.back();
}

Parameter& SpaceDefinition::add_parameter(std::string name, std::string_view values_expression) {
  std::vector<Value> values;
  try {
    values = expr::evaluate_list(values_expression);
  } catch (const ExpressionError& e) {
    throw ExpressionError(fmt::format("values of parameter '{}': {}", name, e.what()), e.expression(), e.position());
  }
  return add_parameter(std::move(name), std::move(values));
}

void SpaceDefinition::add_constraint(std::string expression, std::string label) {
  if (label.empty()) label = fmt::format("constraints[{}]", constraints_.size());
  if (expression.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw SpaceError(fmt::format("constraint {} is an empty expression", label));
  }
  constraints_.push_back(Constraint{std::move(expression), {}, {}, std::move(label)});
}

void SpaceDefinition::add_constraint(std::vector<std::string> parameters,
                                     std::function<bool(std::span<const Value>)> callable, std::string label) {
  if (label.empty()) label = fmt::format("constraints[{}]", constraints_.size());
  if (!callable) throw SpaceError(fmt::format("constraint {} has no function", label));
  constraints_.push_back(Constraint{{}, std::move(parameters), std::move(callable), std::move(label)});
}

std::optional<std::size_t> SpaceDefinition::find(std::string_view name) const {
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    if (parameters_[i].name == name) return i;
  }
  return std::nullopt;
}

}  // namespace steer
