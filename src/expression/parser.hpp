#pragma once
// The second stage: tokens to a syntax tree, by recursive descent.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

#include "expression/tokenizer.hpp"

namespace steer::expr::detail {

// ---------------------------------------------------------------------------------------
// Syntax tree

struct Node {
  enum class Kind : std::uint8_t {
    Constant,     // value
    Name,         // name, resolved to a slot when compiled
    Apply,        // code applied to children (1 or 2)
    And,          // children[0] and children[1]
    Or,           // children[0] or children[1]
    Conditional,  // children[0] if children[1] else children[2]
  } kind;
  Code code = kConst;
  std::uint32_t position = 0;  // of the operator, name or literal
  bool constant = false;       // no name below: the value is known after parsing
  Scalar value;
  std::string_view name;
  std::vector<std::uint32_t> children;
  std::uint32_t height = 1;  // of the tree under it: bounded, as compiling it recurses that deep
};

using Nodes = std::vector<Node>;

// Recursive descent with Python's precedence, lowest first:
//   a if c else b;  or ||;  and &&;  not;  comparisons (chained);  + -;  * / // %;
//   unary - + !;  ** (right-associative, and its right operand may be unary: 2**-1);
//   literals, names, calls, parentheses.
// `!` binds like unary minus, as in C (where it comes from): `!a == b` is `(!a) == b`.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text), tokens_(Tokenizer(text).run()) {}

  std::uint32_t expression() {
    Nesting nesting(*this);
    std::uint32_t value = disjunction();
    if (!accept_keyword("if")) return value;
    std::uint32_t position = previous().position;
    std::uint32_t condition = disjunction();
    expect_keyword("else", "'else' after the condition of 'if'");
    std::uint32_t other = expression();
    return add(Node::Kind::Conditional, kConst, position, {value, condition, other});
  }

  const Nodes& nodes() const noexcept { return nodes_; }
  const Node& node(std::uint32_t index) const { return nodes_[index]; }
  std::string_view text() const noexcept { return text_; }

  const Token& peek(std::size_t ahead = 0) const { return tokens_[std::min(cursor_ + ahead, tokens_.size() - 1)]; }
  const Token& previous() const { return tokens_[cursor_ - 1]; }
  std::size_t cursor() const noexcept { return cursor_; }
  const std::vector<Token>& tokens() const noexcept { return tokens_; }
  void advance() {
    if (cursor_ + 1 < tokens_.size()) ++cursor_;
  }

  bool at_end() const { return peek().kind == Token::Kind::End; }
  bool at_op(std::string_view op, std::size_t ahead = 0) const { return peek(ahead).kind == Token::Kind::Op && peek(ahead).text == op; }
  bool at_keyword(std::string_view word) const { return peek().kind == Token::Kind::Name && peek().text == word; }
  // A call of `function`: its name followed by '('.
  bool at_call(std::string_view function) const { return at_keyword(function) && at_op("(", 1); }

  bool accept_op(std::string_view op) {
    if (!at_op(op)) return false;
    advance();
    return true;
  }
  bool accept_keyword(std::string_view word) {
    if (!at_keyword(word)) return false;
    advance();
    return true;
  }
  void expect_op(std::string_view op, std::string_view what) {
    if (!accept_op(op)) fail_expected(what);
  }
  void expect_keyword(std::string_view word, std::string_view what) {
    if (!accept_keyword(word)) fail_expected(what);
  }
  void expect_end() {
    if (!at_end()) fail_expected("an operator or the end of the expression");
  }

  [[noreturn]] void fail(std::string message, std::size_t position) const {
    throw ExpressionError(std::move(message), std::string(text_), position);
  }
  [[noreturn]] void fail_expected(std::string_view what) const {
    const Token& found = peek();
    if (found.kind == Token::Kind::End) fail(fmt::format("expected {}, found the end of the expression", what), found.position);
    fail(fmt::format("expected {}, found '{}'", what, found.text), found.position);
  }

 private:
  // Bounds the recursion (parentheses, arguments, prefix operators), so that "((((...))))"
  // cannot overflow the C++ stack.
  struct Nesting {
    explicit Nesting(Parser& parser) : parser(parser) {
      if (++parser.depth_ > kMaxNesting) parser.fail(fmt::format("expression nested more than {} deep", kMaxNesting), parser.peek().position);
    }
    ~Nesting() { --parser.depth_; }
    Parser& parser;
  };

  std::uint32_t add(Node::Kind kind, Code code, std::uint32_t position, std::vector<std::uint32_t> children) {
    Node node{kind, code, position};
    node.constant = std::all_of(children.begin(), children.end(), [&](std::uint32_t c) { return nodes_[c].constant; });
    for (std::uint32_t c : children) node.height = std::max(node.height, nodes_[c].height + 1);
    // A chain as long as this ("A + A + ...", min() of as many arguments) could not compile
    // into kMaxProgram instructions anyway; stopping here keeps the compiler's recursion short.
    if (node.height > kMaxProgram)
      fail(fmt::format("expression too large: a chain of more than {} operations", kMaxProgram), position);
    node.children = std::move(children);
    nodes_.push_back(std::move(node));
    return static_cast<std::uint32_t>(nodes_.size() - 1);
  }

  std::uint32_t constant(Scalar value, std::uint32_t position) {
    Node node{Node::Kind::Constant, kConst, position, true, value};
    nodes_.push_back(std::move(node));
    return static_cast<std::uint32_t>(nodes_.size() - 1);
  }

  std::uint32_t disjunction() {
    std::uint32_t left = conjunction();
    while (accept_keyword("or") || accept_op("||")) {
      std::uint32_t position = previous().position;
      left = add(Node::Kind::Or, kConst, position, {left, conjunction()});
    }
    return left;
  }

  std::uint32_t conjunction() {
    std::uint32_t left = negation();
    while (accept_keyword("and") || accept_op("&&")) {
      std::uint32_t position = previous().position;
      left = add(Node::Kind::And, kConst, position, {left, negation()});
    }
    return left;
  }

  std::uint32_t negation() {
    if (!accept_keyword("not")) return comparison();
    Nesting nesting(*this);
    std::uint32_t position = previous().position;
    return add(Node::Kind::Apply, kNot, position, {negation()});
  }

  std::optional<Code> comparison_code() const {
    static constexpr std::pair<std::string_view, Code> kComparisons[] = {
        {"==", kEq}, {"!=", kNe}, {"<", kLt}, {"<=", kLe}, {">", kGt}, {">=", kGe}};
    for (auto [op, code] : kComparisons)
      if (at_op(op)) return code;
    return std::nullopt;
  }

  // `a < b <= c` is `a < b and b <= c`, as in Python. The shared operand is compiled twice
  // rather than kept on the stack: evaluating it has no side effects.
  std::uint32_t comparison() {
    std::uint32_t left = sum();
    std::optional<std::uint32_t> chain;
    while (std::optional<Code> code = comparison_code()) {
      std::uint32_t position = peek().position;
      advance();
      std::uint32_t right = sum();
      std::uint32_t test = add(Node::Kind::Apply, *code, position, {left, right});
      chain = chain ? add(Node::Kind::And, kConst, position, {*chain, test}) : test;
      left = right;
    }
    return chain.value_or(left);
  }

  std::uint32_t sum() {
    std::uint32_t left = term();
    while (at_op("+") || at_op("-")) {
      Code code = at_op("+") ? kAdd : kSub;
      std::uint32_t position = peek().position;
      advance();
      left = add(Node::Kind::Apply, code, position, {left, term()});
    }
    return left;
  }

  std::uint32_t term() {
    std::uint32_t left = unary();
    while (true) {
      Code code;
      if (at_op("*")) code = kMul;
      else if (at_op("/")) code = kDiv;
      else if (at_op("//")) code = kFloorDiv;
      else if (at_op("%")) code = kMod;
      else return left;
      std::uint32_t position = peek().position;
      advance();
      left = add(Node::Kind::Apply, code, position, {left, unary()});
    }
  }

  std::uint32_t unary() {
    Code code;
    if (at_op("-")) code = kNeg;
    else if (at_op("+")) code = kPos;
    else if (at_op("!")) code = kNot;
    else return power();
    Nesting nesting(*this);
    std::uint32_t position = peek().position;
    advance();
    return add(Node::Kind::Apply, code, position, {unary()});
  }

  std::uint32_t power() {
    std::uint32_t base = primary();
    if (!at_op("**")) return base;
    std::uint32_t position = peek().position;
    advance();
    return add(Node::Kind::Apply, kPow, position, {base, unary()});
  }

  std::uint32_t primary() {
    const Token& token = peek();
    switch (token.kind) {
      case Token::Kind::Int:
      case Token::Kind::Float:
      case Token::Kind::String:
        advance();
        return constant(token.value, token.position);
      case Token::Kind::Name:
        if (token.text == "True" || token.text == "true" || token.text == "False" || token.text == "false") {
          advance();
          return constant(Scalar::of_bool(token.text[0] == 'T' || token.text[0] == 't'), token.position);
        }
        if (is_keyword(token.text)) break;
        if (at_op("(", 1)) return call();
        advance();
        nodes_.push_back(Node{Node::Kind::Name, kConst, token.position, false, {}, token.text});
        return static_cast<std::uint32_t>(nodes_.size() - 1);
      case Token::Kind::Op:
        if (token.text != "(") break;
        advance();
        {
          std::uint32_t inner = expression();
          expect_op(")", "')'");
          return inner;
        }
      case Token::Kind::End:
        if (cursor_ == 0) fail("empty expression", 0);
        break;
    }
    fail_expected("a value, a name or '('");
  }

  std::uint32_t call() {
    const Token& name = peek();
    const Function* function = nullptr;
    for (const Function& f : kFunctions)
      if (f.name == name.text) function = &f;
    if (function == nullptr) fail(fmt::format("unknown function '{}'", name.text), name.position);
    advance();
    advance();  // '('
    std::vector<std::uint32_t> args;
    if (!accept_op(")")) {
      do args.push_back(expression());
      while (accept_op(","));
      expect_op(")", fmt::format("',' or ')' in the arguments of {}()", name.text));
    }
    if (args.size() < function->min_args || args.size() > function->max_args) {
      std::string count = function->max_args == SIZE_MAX   ? fmt::format("at least {} argument", function->min_args)
                          : function->min_args == 1        ? std::string("1 argument")
                                                           : fmt::format("{} arguments", function->min_args);
      fail(fmt::format("{}() takes {}, got {}", name.text, count, args.size()), name.position);
    }
    // min(a, b, c) is min(min(a, b), c): the stack stays two deep however many arguments.
    std::uint32_t result = args[0];
    if (args.size() == 1 && function->max_args == 1)
      return add(Node::Kind::Apply, function->code, name.position, {result});
    for (std::size_t k = 1; k < args.size(); ++k)
      result = add(Node::Kind::Apply, function->code, name.position, {result, args[k]});
    return result;
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  std::size_t cursor_ = 0;
  Nodes nodes_;
  int depth_ = 0;
};

}  // namespace steer::expr::detail
