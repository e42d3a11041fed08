// Property test of the space engine: for hundreds of small random spaces, the valid
// configurations and their order must equal those of a brute-force enumeration of the
// whole cross product, in which every constraint is evaluated on every full configuration.
// This checks pruning, grouping, parameter reordering, row storage and the index <->
// configuration mapping against the simplest possible reading of the definition. (About
// half the seeds give an empty space, which checks the error path instead.)
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "expression/expression.hpp"
#include "steer/error.hpp"
#include "steer/space.hpp"

namespace steer {
namespace {

// Random constraint text over the parameters in `names`: arithmetic (+ - * % //),
// comparisons, and/or/not. Divisors are never zero (a non-zero constant or abs(P) + 1),
// so every constraint evaluates everywhere.
class ExpressionGenerator {
 public:
  ExpressionGenerator(std::mt19937& rng, std::vector<std::string> names) : rng_(rng), names_(std::move(names)) {}

  std::string condition(int depth) {
    switch (depth <= 0 ? 0 : pick(4)) {
      case 1:
        return fmt::format("not ({})", condition(depth - 1));
      case 2:
        return fmt::format("({}) and ({})", condition(depth - 1), condition(depth - 1));
      case 3:
        return fmt::format("({}) or ({})", condition(depth - 1), condition(depth - 1));
      default: {
        static constexpr const char* kComparisons[] = {"==", "!=", "<", "<=", ">", ">="};
        return fmt::format("{} {} {}", number(2), kComparisons[pick(6)], number(1));
      }
    }
  }

 private:
  std::string number(int depth) {
    if (depth <= 0 || pick(3) == 0) return leaf();
    static constexpr const char* kOperators[] = {"+", "-", "*", "%", "//"};
    const std::string op = kOperators[pick(5)];
    const std::string right = (op == "%" || op == "//") ? divisor() : number(depth - 1);
    return fmt::format("({} {} {})", number(depth - 1), op, right);
  }
  std::string leaf() {
    if (pick(4) == 0) return std::to_string(pick(9) - 2);
    return names_[pick(static_cast<int>(names_.size()))];
  }
  std::string divisor() {
    static constexpr int kConstants[] = {1, 2, 3, -2, 5};
    if (pick(2) == 0) return fmt::format("({})", kConstants[pick(5)]);
    return fmt::format("(abs({}) + 1)", names_[pick(static_cast<int>(names_.size()))]);
  }
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  std::mt19937& rng_;
  std::vector<std::string> names_;
};

// A random definition and, for the brute force, each constraint's test on a full
// configuration (given as values by parameter) and the parameters it reads.
struct RandomSpace {
  SpaceDefinition definition;
  std::vector<std::function<bool(const std::vector<Value>&)>> tests;
  std::vector<std::vector<std::size_t>> reads;
};

RandomSpace random_space(unsigned seed) {
  std::mt19937 rng(seed);
  auto uniform = [&](int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng); };
  RandomSpace s;
  const int parameter_count = uniform(2, 6);
  std::vector<std::string> names;
  for (int p = 0; p < parameter_count; ++p) {
    names.push_back(fmt::format("P{}", p));
    std::set<int> distinct;
    const int value_count = uniform(1, 5);
    while (static_cast<int>(distinct.size()) < value_count) distinct.insert(uniform(-4, 12));
    std::vector<int> order(distinct.begin(), distinct.end());
    std::shuffle(order.begin(), order.end(), rng);  // value lists need not be sorted
    const bool floats = uniform(0, 4) == 0;
    std::vector<Value> values;
    for (int v : order) {
      if (floats) {
        values.emplace_back(v * 0.5);
      } else {
        values.emplace_back(v);
      }
    }
    s.definition.add_parameter(names.back(), values);
  }

  const int constraint_count = uniform(0, 4);
  for (int k = 0; k < constraint_count; ++k) {
    std::vector<std::string> subset = names;
    std::shuffle(subset.begin(), subset.end(), rng);
    subset.resize(static_cast<std::size_t>(uniform(1, std::min(3, parameter_count))));
    if (uniform(0, 3) == 0) {  // a callable: a hash of the values decides
      std::vector<std::size_t> parameters;
      for (const std::string& name : subset) parameters.push_back(*s.definition.find(name));
      const int modulus = uniform(2, 4);
      auto keep = [modulus](std::span<const Value> v) {
        double sum = 0;
        for (std::size_t i = 0; i < v.size(); ++i) sum += static_cast<double>(i + 1) * v[i].as_double();
        return static_cast<long long>(std::abs(sum * 2)) % modulus != 0;
      };
      s.definition.add_constraint(subset, keep);
      s.tests.push_back([parameters, keep](const std::vector<Value>& config) {
        std::vector<Value> arguments;
        for (std::size_t p : parameters) arguments.push_back(config[p]);
        return keep(arguments);
      });
      s.reads.push_back(parameters);
    } else {
      ExpressionGenerator generate(rng, subset);
      const std::string text = generate.condition(uniform(0, 2));
      s.definition.add_constraint(text);
      auto expression = std::make_shared<expr::Expression>(expr::Expression::parse(text, names));
      s.tests.push_back([expression](const std::vector<Value>& config) {
        std::vector<expr::Scalar> slots;
        for (const Value& v : config) slots.push_back(expr::to_scalar(v));
        return expression->test(slots);
      });
      s.reads.emplace_back(expression->slots_used().begin(), expression->slots_used().end());
    }
  }
  return s;
}

// The valid configurations in the documented ConfigIndex order: groups are the connected
// components of the parameter-constraint graph, ordered by their first parameter; a
// configuration's key is its value indices group by group, each group's parameters in
// definition order; configurations are sorted by key.
std::vector<ValueIndices> brute_force(const RandomSpace& s, std::set<ValueIndices>& invalid, std::size_t& groups) {
  const auto& parameters = s.definition.parameters();
  const std::size_t n = parameters.size();
  std::vector<std::size_t> component(n);
  std::iota(component.begin(), component.end(), std::size_t{0});
  auto root = [&](std::size_t p) {
    while (component[p] != p) p = component[p];
    return p;
  };
  for (const auto& read : s.reads) {
    for (std::size_t p : read) component[root(p)] = root(read.front());
  }
  std::map<std::size_t, std::vector<std::size_t>> by_root;  // root -> parameters, ascending
  for (std::size_t p = 0; p < n; ++p) by_root[root(p)].push_back(p);
  std::vector<std::vector<std::size_t>> ordered_groups;
  for (auto& [r, members] : by_root) ordered_groups.push_back(members);
  std::sort(ordered_groups.begin(), ordered_groups.end());  // by first parameter
  groups = ordered_groups.size();

  std::vector<std::pair<ValueIndices, ValueIndices>> valid;  // (key, configuration)
  ValueIndices config(n, 0);
  while (true) {
    std::vector<Value> values;
    for (std::size_t p = 0; p < n; ++p) values.push_back(parameters[p].values[config[p]]);
    bool ok = true;
    for (const auto& test : s.tests) ok = ok && test(values);
    if (ok) {
      ValueIndices key;
      for (const auto& group : ordered_groups) {
        for (std::size_t p : group) key.push_back(config[p]);
      }
      valid.emplace_back(key, config);
    } else {
      invalid.insert(config);
    }
    std::size_t p = n;
    while (p-- > 0 && ++config[p] == parameters[p].values.size()) config[p] = 0;
    if (p == static_cast<std::size_t>(-1)) break;
  }
  std::sort(valid.begin(), valid.end());
  std::vector<ValueIndices> ordered;
  for (auto& [key, c] : valid) ordered.push_back(c);
  return ordered;
}

bool within(const ValueIndices& a, const ValueIndices& b, Neighbourhood hood) {
  int changed = 0;
  for (std::size_t p = 0; p < a.size(); ++p) {
    if (a[p] == b[p]) continue;
    if (hood.kind == Neighbourhood::Kind::Adjacent && std::abs(static_cast<int>(a[p]) - static_cast<int>(b[p])) != 1) {
      return false;
    }
    ++changed;
  }
  return changed > 0 && changed <= hood.distance;
}

TEST(SpaceProperty, MatchesBruteForceOnRandomSpaces) {
  int non_empty = 0, with_several_groups = 0, with_several_constraints = 0;
  for (unsigned seed = 1; seed <= 500; ++seed) {
    SCOPED_TRACE(fmt::format("seed {}", seed));
    const RandomSpace s = random_space(seed);
    std::set<ValueIndices> invalid;
    std::size_t groups = 0;
    const std::vector<ValueIndices> expected = brute_force(s, invalid, groups);
    if (expected.empty()) {
      try {
        Space::build(s.definition);
        ADD_FAILURE() << "an empty space was built";
      } catch (const SpaceError& e) {
        EXPECT_NE(std::string(e.what()).find("no valid configuration"), std::string::npos) << e.what();
      }
      continue;
    }
    ++non_empty;
    const Space space = Space::build(s.definition);
    ASSERT_EQ(space.size(), expected.size());
    EXPECT_EQ(space.stats().groups, groups);
    with_several_groups += groups > 1;
    for (ConfigIndex i = 0; i < space.size(); ++i) {
      ASSERT_EQ(space.value_indices(i), expected[i]) << "index " << i;
      ASSERT_EQ(space.index_of(expected[i]), i);
    }
    for (const ValueIndices& config : invalid) ASSERT_EQ(space.index_of(config), std::nullopt);

    std::mt19937_64 rng(seed);
    for (int probe = 0; probe < 3; ++probe) {
      const ConfigIndex i = space.sample(rng);
      for (auto kind : {Neighbourhood::Kind::Hamming, Neighbourhood::Kind::Adjacent}) {
        for (int distance : {1, 2, 3}) {
          const Neighbourhood hood{kind, distance};
          std::vector<ConfigIndex> want;
          for (ConfigIndex j = 0; j < expected.size(); ++j) {
            if (within(expected[i], expected[j], hood)) want.push_back(j);
          }
          ASSERT_EQ(space.neighbours(i, hood), want) << "index " << i << " distance " << distance;
        }
      }
    }
    const std::vector<ConfigIndex> half = space.sample(rng, space.size() / 2 + 1);
    EXPECT_EQ(std::set<ConfigIndex>(half.begin(), half.end()).size(), half.size());
    with_several_constraints += space.stats().constraints.size() > 1;
  }
  // The seeds must exercise what they are meant to.
  EXPECT_GE(non_empty, 200);
  EXPECT_GE(with_several_groups, 100);
  EXPECT_GE(with_several_constraints, 50);
}

}  // namespace
}  // namespace steer
