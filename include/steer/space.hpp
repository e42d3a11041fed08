#pragma once
// Tuning spaces: typed parameters, constraints, and the set of valid configurations.
//
//   steer::SpaceDefinition def;
//   def.add_parameter("TILE", {8, 16, 32});
//   def.add_parameter("VEC", {1, 2, 4});
//   def.add_constraint("TILE % VEC == 0 and TILE * VEC <= 64");
//   steer::Space space = steer::Space::build(def);
//   for (steer::ConfigIndex i = 0; i < space.size(); ++i) space.value(i, 0);
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "steer/value.hpp"

namespace steer {

struct Parameter {
  std::string name;
  ValueType type = ValueType::Int;
  std::vector<Value> values;  // in the order written; never empty in a built space
};

// A constraint over some parameters. Either an expression in the Python-like syntax of
// Kernel Tuner and KTT ("TILE % VEC == 0 and not (A || B)"), or a C++ callable that gets
// the values of `parameters` in that order.
struct Constraint {
  std::string expression;               // empty for a callable
  std::vector<std::string> parameters;  // for callables; for an expression, read from it by Space::build
  std::function<bool(std::span<const Value>)> callable;
  std::string label;                    // where it came from, for messages ("constraints[3]")
};

class SpaceDefinition {
 public:
  // Type is inferred from the values (all must share one type; ints and floats mix as float).
  Parameter& add_parameter(std::string name, std::vector<Value> values);
  // Values from a Python-like list expression: "[1, 2, 4]", "range(1, 33)",
  // "[32*i for i in range(1, 32)]", "['a', 'b']".
  Parameter& add_parameter(std::string name, std::string_view values_expression);
  void add_constraint(std::string expression, std::string label = {});
  void add_constraint(std::vector<std::string> parameters,
                      std::function<bool(std::span<const Value>)> callable, std::string label = {});

  const std::vector<Parameter>& parameters() const noexcept { return parameters_; }
  const std::vector<Constraint>& constraints() const noexcept { return constraints_; }
  // Index of a parameter by name, or nullopt.
  std::optional<std::size_t> find(std::string_view name) const;

 private:
  std::vector<Parameter> parameters_;
  std::vector<Constraint> constraints_;
};

// Position of a valid configuration in the space: 0 .. size()-1. Stable for a given
// definition, so dense per-configuration arrays can be indexed by it.
// Order: the parameters fall into independent groups (those linked through constraints;
// an unconstrained parameter is a group of its own), ordered by their first parameter. The
// index is a mixed-radix number over the groups' numbers of valid rows, the first group
// the most significant digit; a group's rows are in lexicographic order of value indices,
// parameters in definition order. Without constraints, or when groups do not interleave,
// that is lexicographic order over whole configurations (Python's itertools.product).
using ConfigIndex = std::uint64_t;

// A configuration as value indices, one per parameter in definition order.
using ValueIndices = std::vector<std::uint32_t>;

struct Neighbourhood {
  enum class Kind {
    Hamming,   // differ in at most `distance` parameters (any values)
    Adjacent,  // differ in at most `distance` parameters, each by one step in its value list
  };
  Kind kind = Kind::Hamming;
  int distance = 1;
};

struct ConstraintStats {
  std::string text;             // the expression or label
  std::uint64_t rejected = 0;   // partial or full configurations it rejected during enumeration
};

struct BuildStats {
  double seconds = 0;                   // construction time
  std::size_t groups = 0;               // independent parameter groups (sub-spaces)
  std::size_t memory_bytes = 0;         // storage held by the built space
  std::uint64_t cross_product = 0;      // size of the unconstrained cross product (saturating)
  std::vector<ConstraintStats> constraints;
};

class Space {
 public:
  // Enumerates the valid configurations. Throws SpaceError for no parameters, an empty
  // value list, a callable naming an unknown parameter, or no valid configuration (naming
  // the constraint that removed the most); ExpressionError for an expression that does not
  // parse or names an unknown parameter, or that fails to evaluate (e.g. division by zero),
  // naming the constraint's label and, for evaluation, the parameter values.
  static Space build(const SpaceDefinition& definition);

  Space(Space&&) noexcept;
  Space& operator=(Space&&) noexcept;
  ~Space();

  std::uint64_t size() const noexcept;
  const std::vector<Parameter>& parameters() const noexcept;
  std::optional<std::size_t> find_parameter(std::string_view name) const;
  const BuildStats& stats() const noexcept;

  // index -> configuration, O(number of parameters).
  void value_indices(ConfigIndex index, std::span<std::uint32_t> out) const;
  ValueIndices value_indices(ConfigIndex index) const;
  const Value& value(ConfigIndex index, std::size_t parameter) const;
  std::vector<Value> values(ConfigIndex index) const;
  // configuration -> index, O(log n); nullopt if the configuration is not valid.
  std::optional<ConfigIndex> index_of(std::span<const std::uint32_t> value_indices) const;
  // From values by name (every parameter must be given); nullopt if invalid or unknown values.
  std::optional<ConfigIndex> index_of(std::span<const std::pair<std::string, Value>> named) const;

  // Valid configurations in the neighbourhood of `index`, excluding itself, ascending.
  std::vector<ConfigIndex> neighbours(ConfigIndex index, Neighbourhood hood = {}) const;

  // Uniform over valid configurations.
  ConfigIndex sample(std::mt19937_64& rng) const;
  // `count` distinct configurations, uniform without replacement (all if count >= size), in
  // random order. Both overloads give the same results for a seed with any standard library.
  std::vector<ConfigIndex> sample(std::mt19937_64& rng, std::uint64_t count) const;

  // "NAME=VALUE,NAME=VALUE" in definition order: the canonical text key of a configuration.
  std::string key(ConfigIndex index) const;
  // The inverse of key(), in any parameter order, numeric values compared as numbers
  // ("VECTOR=4.0" finds 4). Throws Error naming the culprit: an item that is not
  // NAME=VALUE, an unknown parameter or value, a missing parameter, a broken constraint.
  ConfigIndex index_of_key(std::string_view text) const;

 private:
  struct Impl;
  explicit Space(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace steer
