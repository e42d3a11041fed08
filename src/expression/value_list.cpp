// Value lists ("[1, 2, 4]", "range(1, 9)", comprehensions): read and evaluated in one pass.
#include <fmt/core.h>

#include "expression/compiler.hpp"

namespace steer::expr {

using namespace detail;

namespace {


// Value lists are evaluated once, so this reads and evaluates in one pass. Elements are
// expressions of the main language; a comprehension's variable is slot 0.
class ListReader {
 public:
  explicit ListReader(std::string_view text) : parser_(text) {}

  std::vector<Value> read() {
    if (parser_.at_end()) parser_.fail("empty value list", 0);
    std::vector<Value> values;
    if (parser_.at_op("[") || parser_.at_call("range") || parser_.at_call("list") || parenthesised_to_end()) {
      values = iterable();
    } else {  // "32" or "1, 2, 4"
      do values.push_back(constant(parser_.expression()));
      while (parser_.accept_op(",") && !parser_.at_end());
    }
    parser_.expect_end();
    return values;
  }

 private:
  // "(...)" spanning the whole text is a tuple; "(1 + 2) * 3" is a scalar.
  bool parenthesised_to_end() const {
    if (!parser_.at_op("(")) return false;
    const std::vector<Token>& tokens = parser_.tokens();
    int depth = 0;
    for (std::size_t k = parser_.cursor(); k < tokens.size(); ++k) {
      if (tokens[k].kind != Token::Kind::Op) continue;
      if (tokens[k].text == "(" || tokens[k].text == "[") ++depth;
      if ((tokens[k].text == ")" || tokens[k].text == "]") && --depth == 0) return tokens[k + 1].kind == Token::Kind::End;
    }
    return false;
  }

  std::vector<Value> iterable() {
    if (parser_.accept_op("[")) return sequence("]");
    if (parser_.accept_op("(")) return sequence(")");
    if (parser_.at_call("range")) return range();
    if (parser_.at_call("list")) {
      parser_.advance();
      parser_.advance();
      std::vector<Value> values = iterable();
      parser_.expect_op(")", "')' after the argument of list()");
      return values;
    }
    parser_.fail_expected("a list, a tuple, range(...) or list(...)");
  }

  // After '[' or '(': elements or a comprehension, then `close`.
  std::vector<Value> sequence(std::string_view close) {
    std::vector<Value> values;
    if (parser_.accept_op(close)) return values;
    std::uint32_t first = parser_.expression();
    if (parser_.at_keyword("for")) return comprehension(first, close);
    values.push_back(constant(first));
    while (parser_.accept_op(",") && !parser_.at_op(close)) values.push_back(constant(parser_.expression()));
    parser_.expect_op(close, fmt::format("',' or '{}'", close));
    return values;
  }

  // [element for name in iterable if condition]
  std::vector<Value> comprehension(std::uint32_t element, std::string_view close) {
    parser_.advance();  // 'for'
    const Token& variable = parser_.peek();
    if (variable.kind != Token::Kind::Name || is_keyword(variable.text)) parser_.fail_expected("a variable name after 'for'");
    std::array<std::string, 1> names{std::string(variable.text)};
    parser_.advance();
    parser_.expect_keyword("in", "'in'");
    std::vector<Value> source = iterable();
    std::optional<Expression> condition;
    if (parser_.accept_keyword("if")) condition = compile(parser_.expression(), names);
    parser_.expect_op(close, fmt::format("'if' or '{}'", close));

    Expression value = compile(element, names);
    std::vector<Value> values;
    for (const Value& item : source) {
      Scalar slot = to_scalar(item);
      if (condition && !condition->test({&slot, 1})) continue;
      values.push_back(to_value(value.evaluate({&slot, 1})));
    }
    return values;
  }

  // range(stop), range(start, stop), range(start, stop, step)
  std::vector<Value> range() {
    std::uint32_t position = parser_.peek().position;
    parser_.advance();
    parser_.advance();  // '('
    std::vector<std::int64_t> args;
    if (!parser_.at_op(")")) {
      do {
        std::uint32_t arg = parser_.expression();
        Scalar value = compile(arg, {}).evaluate({});
        if (value.kind != Kind::Int && value.kind != Kind::Bool)
          parser_.fail(fmt::format("range() needs integers, got {}", type_name(value)), parser_.node(arg).position);
        args.push_back(value.i);
      } while (parser_.accept_op(","));
    }
    parser_.expect_op(")", "',' or ')' in the arguments of range()");
    if (args.empty() || args.size() > 3) parser_.fail(fmt::format("range() takes 1 to 3 arguments, got {}", args.size()), position);
    std::int64_t start = args.size() == 1 ? 0 : args[0];
    std::int64_t stop = args.size() == 1 ? args[0] : args[1];
    std::int64_t step = args.size() == 3 ? args[2] : 1;
    if (step == 0) parser_.fail("range() step must not be zero", position);

    // Count in unsigned arithmetic: stop - start may not fit in an int64.
    std::uint64_t count = 0;
    if (step > 0 && start < stop) count = (bits(stop) - bits(start) - 1) / bits(step) + 1;
    if (step < 0 && start > stop) count = (bits(start) - bits(stop) - 1) / (0 - bits(step)) + 1;
    if (count > kMaxListLength)
      parser_.fail(fmt::format("range() gives {} values; a value list may have at most {}", count, kMaxListLength), position);
    std::vector<Value> values;
    values.reserve(count);
    for (std::uint64_t k = 0; k < count; ++k) values.emplace_back(wrap(bits(start) + k * bits(step)));
    return values;
  }

  Expression compile(std::uint32_t node, std::span<const std::string> names) {
    return Compiler::compile(parser_.nodes(), node, parser_.text(), names);
  }

  // Each element is compiled without a copy of the whole text (a list of 200,000 elements
  // would copy it as many times); an error is raised again with it, for the caret.
  Value constant(std::uint32_t node) {
    try {
      return to_value(Compiler::compile(parser_.nodes(), node, {}, {}).evaluate({}));
    } catch (const ExpressionError& e) {
      throw ExpressionError(e.what(), std::string(parser_.text()), e.position());
    }
  }

  Parser parser_;
};

}  // namespace

std::vector<Value> evaluate_list(std::string_view text) { return ListReader(text).read(); }

}  // namespace steer::expr
