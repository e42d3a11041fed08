#pragma once
// A spec resolved for one problem size and language: the Program the backend loads
// (source and initialised arguments) and, per configuration, its defines and geometry.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "expression/expression.hpp"
#include "steer/backend.hpp"
#include "steer/space.hpp"
#include "steer/spec.hpp"

namespace steer {

// The launch geometry of a configuration computed in code (DeviceCallbacks::launch).
using LaunchFunction =
    std::function<void(const std::vector<std::pair<std::string, Value>>& configuration, KernelInstance& instance)>;

class KernelProblem {
 public:
  // Throws SpecError when the spec has no kernel or no source for `language`, or an
  // argument's size or value does not evaluate. With `launch`, the geometry comes from it
  // instead of the spec's expressions.
  KernelProblem(const Spec& spec, const Space& space, const ProblemSize& size, Language language,
                LaunchFunction launch = {});

  const Program& program() const noexcept { return program_; }
  const ProblemSize& size() const noexcept { return size_; }
  // Defines and launch geometry of one configuration. Thread-safe.
  // Throws ExpressionError when a geometry expression fails for this configuration, Error
  // when the launch function throws.
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
  LaunchFunction launch_;
};

// The source of `kernel` in `language`: its text given in code, else its file's. Throws
// SpecError when it has neither or the file cannot be read. `source_name` receives the file
// name (or a made-up one for text), `directory` the file's folder (empty for text).
std::string kernel_source(const std::string& kernel_name, const std::map<Language, std::filesystem::path>& files,
                          const std::map<Language, std::string>& texts, Language language, std::string& source_name,
                          std::string& directory);

// Fills a buffer as its initialiser says: "random" element i is a function of the seed and i
// alone, so the buffer is the same for any `threads` (0: the hardware's) and on every machine.
// Throws SpecError for random integers with low > high, or a file or memory of another size.
std::vector<std::byte> initialise_buffer(const Argument& argument, std::uint64_t elements, std::size_t threads = 0);

}  // namespace steer
