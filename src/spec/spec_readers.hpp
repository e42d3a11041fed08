#pragma once
// The two spec formats' readers and the checks they share (private to src/spec).
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "spec/json_node.hpp"
#include "steer/error.hpp"
#include "steer/spec.hpp"

namespace steer::spec_detail {

// Rethrows an expression error with the spec location in front of its message, keeping
// the expression and position for the caret display.
[[noreturn]] void rethrow_at(const Node& where, const ExpressionError& error);

// Parses `text` with `names` as the only variables, to report unknown names and syntax
// errors at load time with the location.
void check_expression(const Node& where, const std::string& text, std::span<const std::string> names);

// A parameter or size variable, used in expressions and as a preprocessor macro: an
// identifier that is not a word of the expression language.
void check_variable_name(const Node& where, const std::string& name);

// Values of a list expression ("[32*i for i in range(1, 32)]"), located at `where`.
std::vector<Value> evaluate_value_list(const Node& where, const std::string& text);

// Checks a parameter's values and unifies their type: not empty, one type (ints among
// floats become floats), no value twice.
void normalise_values(const Node& where, std::vector<Value>& values);

// Steer's own format (docs/spec.md). `directory` is the base of relative file paths.
Spec read_steer_spec(const Node& root, const std::filesystem::path& directory);

// A KTT tuning file: its ConfigurationSpace becomes the space; the rest is ignored.
Spec read_ktt_spec(const Node& root, const std::filesystem::path& origin);

}  // namespace steer::spec_detail
