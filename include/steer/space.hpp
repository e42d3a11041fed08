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

#include "steer/error.hpp"
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

// How far a build has got, reported as it goes (BuildLimits::on_progress) and when a limit
// stops it. Groups are enumerated one after another, each depth first.
struct BuildProgress {
  std::size_t group = 0;            // the group being enumerated, 0-based
  std::size_t groups = 0;
  std::size_t group_parameters = 0;
  double group_combinations = 0;    // the cross product of the group's parameters' values
  // The share of those combinations the search has passed (enumerated or cut off by a
  // constraint): its position in the order it enumerates them, 0 to 1.
  double searched = 0;
  std::uint64_t rows = 0;           // valid rows of this group found so far
  double seconds = 0;               // since the build began
  double group_seconds = 0;         // since this group's enumeration began
};

// Bounds on Space::build, for spaces that may take too long or too much memory to
// enumerate, and progress reports. Unset bounds are no bounds.
struct BuildLimits {
  double seconds = 0;               // stop after this long (0: no limit)
  std::size_t memory_bytes = 0;     // stop once the valid rows found hold this much (0: no limit)
  std::function<void(const BuildProgress&)> on_progress;
  double progress_interval_s = 0.25;
  // When stopped: how long to sample the unsearched part for an estimate of the size.
  double estimate_seconds = 2;
  std::uint64_t estimate_probes = 100'000;
  std::uint64_t seed = 1;
};

// An estimate of the number of valid configurations, by sampling: Knuth's estimator (random
// descents through the search tree, each weighted by the product of the branching factors it
// met), over the part of the search a stopped build had not reached, added to the rows it
// found; groups are multiplied. Unbiased; the interval is the mean's normal 95 % interval,
// which a space whose valid configurations cluster in a few corners can make too narrow.
struct SizeEstimate {
  double count = 0;
  double low = 0, high = 0;
  double at_least = 0;                // the product of the rows found so far (0 while a group was not reached)
  std::uint64_t probes = 0;           // random descents made, in all groups sampled
  // The sampled group whose descents reached a valid configuration least often (the
  // estimate is only as good as it): its index (0-based), descents, and those that did.
  std::size_t weakest_group = 0;
  std::uint64_t weakest_probes = 0, weakest_valid = 0;
  bool reliable = false;              // at least 10 descents of every sampled group reached one
};

// Thrown by Space::build when a BuildLimits bound stopped it.
class SpaceBuildStopped : public SpaceError {
 public:
  enum class Reason { Time, Memory };
  SpaceBuildStopped(Reason reason, BuildProgress progress, SizeEstimate estimate, BuildStats stats);
  Reason reason;
  BuildProgress progress;  // where it stopped
  SizeEstimate estimate;
  BuildStats stats;        // constraints' rejections so far, the cross product
};

class Space {
 public:
  // Enumerates the valid configurations. Throws SpaceError for no parameters, an empty
  // value list, a callable naming an unknown parameter, or no valid configuration (naming
  // the constraint that removed the most); ExpressionError for an expression that does not
  // parse or names an unknown parameter, or that fails to evaluate (e.g. division by zero),
  // naming the constraint's label and, for evaluation, the parameter values.
  // With `limits`, reports progress and throws SpaceBuildStopped when a bound is reached.
  static Space build(const SpaceDefinition& definition, const BuildLimits& limits = {});

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
