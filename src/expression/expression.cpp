// Parsing an expression (all stages) and evaluating its postfix program.
#include "expression/expression.hpp"

#include <array>
#include <fmt/core.h>

#include "expression/compiler.hpp"

namespace steer::expr {

using namespace detail;

// ---------------------------------------------------------------------------------------
// Evaluation

Expression Expression::parse(std::string_view text, std::span<const std::string> names) {
  Parser parser(text);
  std::uint32_t root = parser.expression();
  parser.expect_end();
  return Compiler::compile(parser.nodes(), root, text, names);
}

Scalar Expression::evaluate(std::span<const Scalar> slots) const {
  if (program_.empty()) return Scalar();
  if (!used_.empty() && used_.back() >= slots.size())
    throw ExpressionError(fmt::format("expression reads value {} but {} were given", used_.back() + 1, slots.size()), text_);
  // Left uninitialised: evaluate() runs for every candidate configuration. Assigning
  // `value` starts its lifetime (Scalar is trivially copyable).
  union Cell {
    Cell() {}
    Scalar value;
  };
  std::array<Cell, kMaxStack> stack;
  std::size_t top = 0;
  std::size_t pc = 0;
  while (pc < program_.size()) {
    const Op& op = program_[pc++];
    switch (op.code) {
      case kConst: stack[top++].value = constants_[op.operand]; break;
      case kSlot: stack[top++].value = slots[op.operand]; break;
      case kJump: pc = op.operand; break;
      case kJumpIfFalseOrPop:
        if (stack[top - 1].value.truthy()) --top;
        else pc = op.operand;
        break;
      case kJumpIfTrueOrPop:
        if (stack[top - 1].value.truthy()) pc = op.operand;
        else --top;
        break;
      case kPopJumpIfFalse:
        if (!stack[--top].value.truthy()) pc = op.operand;
        break;
      default: {
        Site site{text_, op.position};
        auto code = static_cast<Code>(op.code);
        if (op.arity == 1) {
          stack[top - 1].value = unary(code, stack[top - 1].value, site);
        } else {
          stack[top - 2].value = binary(code, stack[top - 2].value, stack[top - 1].value, site);
          --top;
        }
      }
    }
  }
  return stack[0].value;
}

Value evaluate_once(std::string_view text, std::span<const std::pair<std::string, Value>> variables) {
  std::vector<std::string> names;
  std::vector<Scalar> slots;
  for (const auto& [name, value] : variables) {
    names.push_back(name);
    slots.push_back(to_scalar(value));
  }
  return to_value(Expression::parse(text, names).evaluate(slots));
}

std::string normalised_text(std::string_view text) {
  try {
    std::string normalised;
    for (const detail::Token& token : detail::Tokenizer(text).run()) {
      if (token.kind == detail::Token::Kind::End) break;
      if (!normalised.empty()) normalised += ' ';
      normalised += token.text;
    }
    return normalised;
  } catch (const ExpressionError&) {
    return std::string(text);
  }
}

}  // namespace steer::expr
