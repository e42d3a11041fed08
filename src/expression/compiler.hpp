#pragma once
// The third stage: a syntax tree to the postfix program that Expression::evaluate runs,
// with constant sub-trees folded.
#include <algorithm>
#include <span>
#include <string>
#include <string_view>

#include "expression/parser.hpp"

namespace steer::expr::detail {

// ---------------------------------------------------------------------------------------
// Compilation to postfix

class Compiler {
 public:
  // Compiles the tree under `root`; names resolve to slots by their index in `names`.
  // With `fold`, sub-trees without names become constants when they evaluate without error
  // (one that fails, like 1/0, stays code: it fails only if evaluation reaches it).
  static Expression compile(const Nodes& nodes, std::uint32_t root, std::string_view text,
                            std::span<const std::string> names, bool fold = true) {
    Compiler compiler(nodes, text, names, fold);
    compiler.emit_node(root);
    Expression& out = compiler.out_;
    if (out.max_stack_ > kMaxStack)
      throw ExpressionError(fmt::format("expression too large: it needs {} stack entries, the limit is {}", out.max_stack_, kMaxStack),
                            out.text_);
    std::sort(out.used_.begin(), out.used_.end());
    out.used_.erase(std::unique(out.used_.begin(), out.used_.end()), out.used_.end());
    return std::move(out);
  }

 private:
  Compiler(const Nodes& nodes, std::string_view text, std::span<const std::string> names, bool fold)
      : nodes_(nodes), names_(names), fold_(fold) {
    out_.text_ = std::string(text);
  }

  std::size_t emit(Code code, std::uint32_t operand = 0, std::uint8_t arity = 0, std::uint32_t position = 0) {
    if (out_.program_.size() == kMaxProgram)
      throw ExpressionError(fmt::format("expression too large: more than {} instructions", kMaxProgram), out_.text_);
    out_.program_.push_back(Expression::Op{code, arity, operand, position});
    return out_.program_.size() - 1;
  }
  void patch_to_here(std::size_t jump) { out_.program_[jump].operand = static_cast<std::uint32_t>(out_.program_.size()); }
  void push() { out_.max_stack_ = std::max(out_.max_stack_, ++depth_); }

  void emit_constant(const Scalar& value) {
    out_.constants_.push_back(value);
    emit(kConst, static_cast<std::uint32_t>(out_.constants_.size() - 1));
    push();
  }

  void emit_node(std::uint32_t index) {
    const Node& node = nodes_[index];
    if (fold_ && node.constant && node.kind != Node::Kind::Constant) {
      try {
        Expression folded = compile(nodes_, index, out_.text_, {}, /*fold=*/false);
        emit_constant(folded.evaluate({}));
        return;
      } catch (const ExpressionError&) {
        // Not foldable (1/0): keep it as code, which fails only if evaluation reaches it.
      }
    }
    switch (node.kind) {
      case Node::Kind::Constant: emit_constant(node.value); return;
      case Node::Kind::Name: {
        auto found = std::find(names_.begin(), names_.end(), node.name);
        if (found == names_.end()) throw ExpressionError(fmt::format("unknown parameter '{}'", node.name), out_.text_, node.position);
        auto slot = static_cast<std::size_t>(found - names_.begin());
        out_.used_.push_back(slot);
        emit(kSlot, static_cast<std::uint32_t>(slot));
        push();
        return;
      }
      case Node::Kind::Apply:
        for (std::uint32_t child : node.children) emit_node(child);
        emit(node.code, 0, static_cast<std::uint8_t>(node.children.size()), node.position);
        depth_ -= node.children.size() - 1;
        return;
      case Node::Kind::And:
      case Node::Kind::Or: {
        emit_node(node.children[0]);
        std::size_t jump = emit(node.kind == Node::Kind::And ? kJumpIfFalseOrPop : kJumpIfTrueOrPop);
        --depth_;  // the fall-through pops the left operand
        emit_node(node.children[1]);
        patch_to_here(jump);
        return;
      }
      case Node::Kind::Conditional: {
        emit_node(node.children[1]);
        std::size_t to_else = emit(kPopJumpIfFalse);
        --depth_;
        emit_node(node.children[0]);
        std::size_t to_end = emit(kJump);
        patch_to_here(to_else);
        --depth_;  // one branch's value, not both
        emit_node(node.children[2]);
        patch_to_here(to_end);
        return;
      }
    }
  }

  const Nodes& nodes_;
  std::span<const std::string> names_;
  bool fold_;
  std::size_t depth_ = 0;
  Expression out_;
};

}  // namespace steer::expr::detail
