#pragma once
// A spec resolved for one problem size and language: the Program the backend loads
// (source and initialised arguments) and, per configuration, its defines and geometry.
#include <string>
#include <vector>

#include "expression/expression.hpp"
#include "steer/backend.hpp"
#include "steer/space.hpp"
#include "steer/spec.hpp"

namespace steer {

class KernelProblem {
 public:
  // Throws SpecError when the spec has no kernel or no source for `language`, or an
  // argument's size or value does not evaluate.
  KernelProblem(const Spec& spec, const Space& space, const ProblemSize& size, Language language);

  const Program& program() const noexcept { return program_; }
  const ProblemSize& size() const noexcept { return size_; }
  // Defines and launch geometry of one configuration. Thread-safe.
  // Throws ExpressionError when a geometry expression fails for this configuration.
  KernelInstance instance(ConfigIndex config) const;
  // Indices into program().arguments of the outputs, in order.
  const std::vector<std::size_t>& outputs() const noexcept { return outputs_; }

 private:
  const Space& space_;
  ProblemSize size_;
  Program program_;
  std::vector<std::size_t> outputs_;
  std::vector<expr::Expression> grid_, block_;
  expr::Expression shared_memory_;
  std::vector<std::vector<expr::Scalar>> parameter_scalars_;  // [parameter][value index]
  std::vector<expr::Scalar> size_scalars_;
};

// Fills a buffer as its initialiser says (deterministic for a given seed).
std::vector<std::byte> initialise_buffer(const Argument& argument, std::uint64_t elements);

}  // namespace steer
