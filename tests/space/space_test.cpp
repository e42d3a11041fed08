// Specification tests of the tuning-space engine: the benchmark spaces' counts, the
// index <-> configuration mapping and its order, neighbourhoods, sampling and errors.
#include "steer/space.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <set>

#include "space/benchmark_space_definitions.hpp"
#include "steer/error.hpp"

namespace steer {
namespace {

using test_spaces::int_range;
using test_spaces::ints;
using ::testing::AllOf;
using ::testing::HasSubstr;

template <typename E, typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception thrown";
  return {};
}

// Every index maps to a distinct configuration that maps back to it.
void expect_round_trip(const Space& space) {
  std::set<ValueIndices> seen;
  for (ConfigIndex i = 0; i < space.size(); ++i) {
    const ValueIndices config = space.value_indices(i);
    ASSERT_EQ(space.index_of(config), i);
    seen.insert(config);
  }
  EXPECT_EQ(seen.size(), space.size());
}

// Brute-force neighbourhood: every valid configuration within the distance.
std::vector<ConfigIndex> brute_force_neighbours(const Space& space, ConfigIndex index, Neighbourhood hood) {
  const ValueIndices centre = space.value_indices(index);
  std::vector<ConfigIndex> out;
  for (ConfigIndex j = 0; j < space.size(); ++j) {
    const ValueIndices other = space.value_indices(j);
    int changed = 0;
    bool adjacent = true;
    for (std::size_t p = 0; p < centre.size(); ++p) {
      if (other[p] == centre[p]) continue;
      ++changed;
      adjacent = adjacent && std::abs(static_cast<int>(other[p]) - static_cast<int>(centre[p])) == 1;
    }
    const bool kind_ok = hood.kind == Neighbourhood::Kind::Hamming || adjacent;
    if (changed > 0 && changed <= hood.distance && kind_ok) out.push_back(j);
  }
  return out;
}

struct NamedSpace {
  const char* name;
  SpaceDefinition definition;
  std::uint64_t valid;
};

std::vector<NamedSpace> benchmark_spaces() {
  return {{"coulomb", test_spaces::coulomb(), 210},  {"transpose", test_spaces::transpose(), 1'836},
          {"gemm", test_spaces::gemm(false), 5'788}, {"gemm_full", test_spaces::gemm(true), 205'216},
          {"nbody", test_spaces::nbody(), 3'136},    {"conv", test_spaces::conv(), 5'248},
          {"pnpoly", test_spaces::pnpoly(), 4'092}};
}

TEST(BenchmarkSpaces, HaveTheDocumentedCounts) {
  for (const NamedSpace& s : benchmark_spaces()) {
    const Space space = Space::build(s.definition);
    EXPECT_EQ(space.size(), s.valid) << s.name;
  }
}

TEST(BenchmarkSpaces, GemmFullIsSplitIntoIndependentGroupsAndStaysSmall) {
  const Space space = Space::build(test_spaces::gemm(true));
  // One group of the 11 constrained parameters; STRM, STRN, SA, SB, PRECISION alone.
  EXPECT_EQ(space.stats().groups, 6u);
  EXPECT_EQ(space.stats().cross_product, 4ull * 4 * 2 * 81 * 2 * 9 * 16);
  EXPECT_LT(space.stats().memory_bytes, 20u << 20);
  // 12,826 rows of 11 one-byte cells, plus bookkeeping.
  EXPECT_LT(space.stats().memory_bytes, 200'000u);
  ASSERT_EQ(space.stats().constraints.size(), 7u);
  EXPECT_EQ(space.stats().constraints[0].text, "KWG % KWI == 0");
  std::uint64_t rejected = 0;
  for (const ConstraintStats& c : space.stats().constraints) rejected += c.rejected;
  EXPECT_GT(rejected, 0u);
}

TEST(BenchmarkSpaces, EveryIndexRoundTrips) {
  for (const NamedSpace& s : benchmark_spaces()) {
    SCOPED_TRACE(s.name);
    expect_round_trip(Space::build(s.definition));
  }
}

TEST(Order, WithoutConstraintsIsItertoolsProductOrder) {
  const Space space = Space::build(test_spaces::pnpoly());
  ValueIndices expected(4, 0);
  const std::vector<std::uint32_t> counts{4, 31, 11, 3};
  for (ConfigIndex i = 0; i < space.size(); ++i) {
    ASSERT_EQ(space.value_indices(i), expected) << i;
    for (std::size_t p = counts.size(); p-- > 0;) {  // odometer, last parameter fastest
      if (++expected[p] < counts[p]) break;
      expected[p] = 0;
    }
  }
}

TEST(Order, IsGroupMajorThenLexicographicWithinGroups) {
  // Groups {A, C} (linked by a constraint) and {B}: the index is (row of {A, C}) * |B| +
  // (row of B), and the {A, C} rows are lexicographic in (A, C).
  SpaceDefinition d;
  d.add_parameter("A", ints({0, 1, 2}));
  d.add_parameter("B", ints({5, 6}));
  d.add_parameter("C", ints({0, 1, 2}));
  d.add_constraint("C >= A");
  const Space space = Space::build(d);
  std::vector<ValueIndices> expected;
  for (std::uint32_t a = 0; a < 3; ++a)
    for (std::uint32_t c = a; c < 3; ++c) {
      for (std::uint32_t b = 0; b < 2; ++b) expected.push_back({a, b, c});
    }
  ASSERT_EQ(space.size(), expected.size());
  for (ConfigIndex i = 0; i < space.size(); ++i) EXPECT_EQ(space.value_indices(i), expected[i]) << i;
  EXPECT_EQ(space.stats().groups, 2u);
}

TEST(Order, IsDefinitionOrderEvenWhenTheSearchBindsParametersInAnotherOrder) {
  // Z is the most constrained parameter, so the search binds it first; the stored rows
  // must still be lexicographic in (X, Y, Z).
  SpaceDefinition d;
  d.add_parameter("X", ints({1, 2, 3, 4}));
  d.add_parameter("Y", ints({1, 2, 3, 4}));
  d.add_parameter("Z", ints({4, 3, 2, 1}));
  d.add_constraint("X + Z <= 5");
  d.add_constraint("Y + Z <= 5");
  d.add_constraint("Z % 2 == 1 or Z == 4");
  const Space space = Space::build(d);
  for (ConfigIndex i = 1; i < space.size(); ++i) EXPECT_LT(space.value_indices(i - 1), space.value_indices(i));
  expect_round_trip(space);
}

TEST(Lookup, InvalidOrUnknownConfigurationsHaveNoIndex) {
  const Space space = Space::build(test_spaces::coulomb());
  // INNER_UNROLL_FACTOR 32 is not below Z_ITERATIONS 1.
  EXPECT_EQ(space.index_of(ValueIndices{1, 3, 0, 0, 6, 0, 0, 0}), std::nullopt);
  EXPECT_EQ(space.index_of(ValueIndices{1, 3, 0, 0, 7, 0, 0, 0}), std::nullopt);  // no value 7
  EXPECT_THROW(space.index_of(ValueIndices{1, 3, 0}), std::invalid_argument);
  EXPECT_THROW(space.value_indices(space.size()), std::out_of_range);
  EXPECT_THROW(space.neighbours(space.size()), std::out_of_range);
}

TEST(Lookup, ByNamedValues) {
  const Space space = Space::build(test_spaces::coulomb());
  const ConfigIndex i = 123;
  std::vector<std::pair<std::string, Value>> named;
  for (std::size_t p = 0; p < space.parameters().size(); ++p) {
    named.emplace_back(space.parameters()[p].name, space.value(i, p));
  }
  std::reverse(named.begin(), named.end());  // order of the pairs does not matter
  EXPECT_EQ(space.index_of(named), i);
  named[0].second = Value(2.0);  // VECTOR_SIZE 2.0: a number, but not one of its values
  EXPECT_EQ(space.index_of(named), std::nullopt);
  named[0].second = Value(1.0);  // numbers match across int and float
  EXPECT_EQ(space.index_of(named), i);
  named.pop_back();
  EXPECT_THAT(error_of<SpaceError>([&] { (void)space.index_of(named); }), HasSubstr("WORK_GROUP_SIZE_X"));
  named.emplace_back("NO_SUCH", Value(1));
  EXPECT_THAT(error_of<SpaceError>([&] { (void)space.index_of(named); }), HasSubstr("NO_SUCH"));
}

TEST(Lookup, ValuesAndKeyAreInDefinitionOrder) {
  const Space space = Space::build(test_spaces::coulomb());
  const ConfigIndex i = space.size() - 1;
  const std::vector<Value> values = space.values(i);
  ASSERT_EQ(values.size(), 8u);
  for (std::size_t p = 0; p < values.size(); ++p) EXPECT_EQ(values[p], space.value(i, p));
  EXPECT_EQ(space.key(i),
            "WORK_GROUP_SIZE_X=32,WORK_GROUP_SIZE_Y=8,WORK_GROUP_SIZE_Z=1,Z_ITERATIONS=32,"
            "INNER_UNROLL_FACTOR=16,USE_CONSTANT_MEMORY=0,USE_SOA=1,VECTOR_SIZE=1");
}

TEST(Neighbours, MatchBruteForce) {
  for (const SpaceDefinition& definition : {test_spaces::coulomb(), test_spaces::transpose(), test_spaces::conv()}) {
    const Space space = Space::build(definition);
    for (ConfigIndex i = 0; i < space.size(); i += space.size() / 23 + 1) {
      for (auto kind : {Neighbourhood::Kind::Hamming, Neighbourhood::Kind::Adjacent}) {
        for (int distance : {1, 2, 3}) {
          const Neighbourhood hood{kind, distance};
          ASSERT_EQ(space.neighbours(i, hood), brute_force_neighbours(space, i, hood))
              << "index " << i << " distance " << distance << " adjacent " << (kind == Neighbourhood::Kind::Adjacent);
        }
      }
    }
  }
}

TEST(Neighbours, DistanceCoveringEveryParameterIsTheWholeSpace) {
  const Space space = Space::build(test_spaces::coulomb());
  const std::vector<ConfigIndex> all = space.neighbours(7, {Neighbourhood::Kind::Hamming, 8});
  EXPECT_EQ(all.size(), space.size() - 1);
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end()));
  EXPECT_TRUE(space.neighbours(7, {Neighbourhood::Kind::Hamming, 0}).empty());
}

TEST(Sampling, IsUniformOverValidConfigurations) {
  const Space space = Space::build(test_spaces::coulomb());
  std::mt19937_64 rng(42);
  std::vector<double> counts(space.size(), 0);
  const int draws = 210'000;
  for (int k = 0; k < draws; ++k) ++counts.at(space.sample(rng));
  const double expected = static_cast<double>(draws) / static_cast<double>(space.size());
  double chi_square = 0;
  for (double c : counts) chi_square += (c - expected) * (c - expected) / expected;
  // 209 degrees of freedom: mean 209, standard deviation about 20.4.
  EXPECT_LT(chi_square, 209 + 5 * 20.4);
  EXPECT_GT(chi_square, 209 - 5 * 20.4);
}

TEST(Sampling, WithoutReplacementIsDistinctAndUniform) {
  const Space space = Space::build(test_spaces::coulomb());
  std::mt19937_64 rng(7);
  for (std::uint64_t count : {1u, 10u, 52u, 53u, 150u, 209u}) {  // both Floyd's and the shuffle
    const std::vector<ConfigIndex> sample = space.sample(rng, count);
    ASSERT_EQ(sample.size(), count);
    std::set<ConfigIndex> distinct(sample.begin(), sample.end());
    EXPECT_EQ(distinct.size(), count);
    EXPECT_LT(*distinct.rbegin(), space.size());
  }
  std::vector<ConfigIndex> all = space.sample(rng, 1'000);
  ASSERT_EQ(all.size(), space.size());
  std::sort(all.begin(), all.end());
  for (ConfigIndex i = 0; i < space.size(); ++i) EXPECT_EQ(all[i], i);

  // Floyd's branch: how often each index is chosen, and how often it comes first.
  const int repetitions = 21'000;
  std::vector<double> chosen(space.size(), 0), first(space.size(), 0);
  for (int r = 0; r < repetitions; ++r) {
    const std::vector<ConfigIndex> sample = space.sample(rng, 10);
    for (ConfigIndex i : sample) ++chosen[i];
    ++first[sample.front()];
  }
  auto chi_square = [](const std::vector<double>& counts, double expected) {
    double sum = 0;
    for (double c : counts) sum += (c - expected) * (c - expected) / expected;
    return sum;
  };
  EXPECT_LT(chi_square(chosen, repetitions * 10.0 / 210), 209 + 5 * 20.4);
  EXPECT_LT(chi_square(first, repetitions / 210.0), 209 + 5 * 20.4);
}

TEST(Sampling, IsReproducibleFromTheSeed) {
  const Space space = Space::build(test_spaces::gemm(true));
  std::mt19937_64 a(3), b(3);
  EXPECT_EQ(space.sample(a, 100), space.sample(b, 100));
  EXPECT_EQ(space.sample(a), space.sample(b));
}

TEST(Definition, InfersTypesAndMixesIntsWithFloatsAsFloat) {
  SpaceDefinition d;
  EXPECT_EQ(d.add_parameter("I", ints({1, 2})).type, ValueType::Int);
  const Parameter& f = d.add_parameter("F", {Value(1), Value(2.5)});
  EXPECT_EQ(f.type, ValueType::Float);
  EXPECT_TRUE(f.values[0].is_float());
  EXPECT_EQ(d.add_parameter("B", {Value(true), Value(false)}).type, ValueType::Bool);
  EXPECT_EQ(d.add_parameter("S", {Value("a"), Value("b")}).type, ValueType::String);
  EXPECT_EQ(d.add_parameter("R", "range(1, 33, 8)").values, ints({1, 9, 17, 25}));
  d.add_constraint("F * I < 4 and (B or S == 'a')");
  const Space space = Space::build(d);
  // 3 of the 4 (I, F) pairs (not I = 2, F = 2.5), 3 of the 4 (B, S) pairs, any R.
  EXPECT_EQ(space.size(), 3u * 3 * 4);
}

TEST(Definition, RejectsBadParameters) {
  SpaceDefinition d;
  d.add_parameter("A", ints({1, 2}));
  EXPECT_THAT(error_of<SpaceError>([&] { d.add_parameter("A", ints({3})); }), HasSubstr("'A'"));
  EXPECT_THAT(error_of<SpaceError>([&] { d.add_parameter("EMPTY", std::vector<Value>{}); }), HasSubstr("'EMPTY'"));
  EXPECT_THAT(error_of<SpaceError>([&] { d.add_parameter("MIXED", {Value(1), Value("x")}); }), HasSubstr("'MIXED'"));
  EXPECT_THAT(error_of<SpaceError>([&] { d.add_parameter("TWICE", {Value(2), Value(2.0)}); }), HasSubstr("'TWICE'"));
  EXPECT_THAT(error_of<ExpressionError>([&] { d.add_parameter("BAD", "[1, 2"); }), HasSubstr("'BAD'"));
  EXPECT_EQ(d.parameters().size(), 1u);
  EXPECT_THAT(error_of<SpaceError>([] { Space::build(SpaceDefinition{}); }), HasSubstr("no parameters"));
}

TEST(Errors, UnknownParameterInAConstraintNamesTheConstraint) {
  SpaceDefinition d;
  d.add_parameter("A", ints({1, 2}));
  d.add_constraint("A < 2");
  d.add_constraint("A < TYPO", "kernel.json constraints[1]");
  const std::string message = error_of<ExpressionError>([&] { Space::build(d); });
  EXPECT_THAT(message, AllOf(HasSubstr("kernel.json constraints[1]"), HasSubstr("TYPO")));

  SpaceDefinition callable;
  callable.add_parameter("A", ints({1, 2}));
  callable.add_constraint(
      {"A", "TYPO"}, [](std::span<const Value>) { return true; }, "my check");
  EXPECT_THAT(error_of<SpaceError>([&] { Space::build(callable); }), AllOf(HasSubstr("my check"), HasSubstr("TYPO")));
}

TEST(Errors, NoValidConfigurationNamesTheConstraintThatRemovedTheMost) {
  SpaceDefinition d;
  d.add_parameter("A", ints({1, 2, 3, 4}));
  d.add_parameter("B", ints({1, 2, 3, 4}));
  d.add_constraint("A <= 2", "first");
  d.add_constraint("A + B > 100", "second");
  const std::string message = error_of<SpaceError>([&] { Space::build(d); });
  // "first" rejects A = 3, 4; "second" rejects every (A, B) left: 2 * 4 = 8.
  EXPECT_THAT(message, AllOf(HasSubstr("no valid configuration"), HasSubstr("'A + B > 100' (second)"),
                             HasSubstr("8 partial configurations")));

  SpaceDefinition constant;
  constant.add_parameter("A", ints({1}));
  constant.add_constraint("1 > 2", "never");
  EXPECT_THAT(error_of<SpaceError>([&] { Space::build(constant); }), HasSubstr("'1 > 2' (never)"));
}

TEST(Errors, ConstraintFailingToEvaluateNamesItAndTheValues) {
  SpaceDefinition d;
  d.add_parameter("N", ints({4, 8}));
  d.add_parameter("D", ints({2, 0}));
  d.add_constraint("N % D == 0", "divides");
  const std::string message = error_of<ExpressionError>([&] { Space::build(d); });
  EXPECT_THAT(message, AllOf(HasSubstr("divides"), HasSubstr("N=4"), HasSubstr("D=0")));
}

TEST(Constraints, AreNotEvaluatedWhereAnEarlierOneFailed) {
  // Both constraints become testable when N and D are bound; the guard comes first, so the
  // division never sees D = 0.
  SpaceDefinition d;
  d.add_parameter("N", ints({4, 6, 8}));
  d.add_parameter("D", ints({0, 2, 4}));
  d.add_constraint("N > 0 and D != 0");
  d.add_constraint("N % D == 0");
  const Space space = Space::build(d);
  EXPECT_EQ(space.size(), 5u);  // (4, 2), (4, 4), (6, 2), (8, 2), (8, 4)
  EXPECT_EQ(space.stats().constraints[0].rejected, 3u);
}

TEST(Constraints, OverManyLargeParametersAreCountedExactly) {
  // The last constraint reads five parameters of 40 values: too many assignments of its
  // parameters to remember its decisions (40^4 entries of 2 words: more than the 8 MB
  // allowed), so it is evaluated at every partial configuration.
  SpaceDefinition d;
  for (const char* name : {"A", "B", "C", "D", "E"}) d.add_parameter(name, int_range(0, 39));
  d.add_constraint("A == B");
  d.add_constraint("B == C");
  d.add_constraint("C == D");
  d.add_constraint("A + B + C + D + E < 100");
  const Space space = Space::build(d);
  std::uint64_t expected = 0;
  for (int a = 0; a < 40; ++a) expected += static_cast<std::uint64_t>(std::clamp(100 - 4 * a, 0, 40));
  EXPECT_EQ(space.size(), expected);
  EXPECT_EQ(space.stats().constraints[3].rejected, 40u * 40 - expected);
  expect_round_trip(space);
}

TEST(Constraints, CallablesAndExpressionsAgree) {
  SpaceDefinition by_expression = test_spaces::coulomb();
  SpaceDefinition by_callable;
  for (const Parameter& p : by_expression.parameters()) by_callable.add_parameter(p.name, p.values);
  by_callable.add_constraint({"Z_ITERATIONS", "INNER_UNROLL_FACTOR"},
                             [](std::span<const Value> v) { return v[1].as_int() < v[0].as_int(); });
  by_callable.add_constraint({"WORK_GROUP_SIZE_X", "WORK_GROUP_SIZE_Y"},
                             [](std::span<const Value> v) { return v[0].as_int() * v[1].as_int() >= 64; });
  const Space a = Space::build(by_expression);
  const Space b = Space::build(by_callable);
  ASSERT_EQ(a.size(), b.size());
  for (ConfigIndex i = 0; i < a.size(); ++i) EXPECT_EQ(a.value_indices(i), b.value_indices(i));
  EXPECT_EQ(b.stats().constraints[0].text, "constraints[0]");
}

TEST(Storage, WideValueListsUseWiderCells) {
  for (int count : {300, 70'000}) {  // 16-bit and 32-bit value indices
    SpaceDefinition d;
    d.add_parameter("X", int_range(0, count - 1));
    d.add_parameter("Y", ints({1, 2, 3}));
    d.add_constraint("X % 97 == Y");
    const Space space = Space::build(d);
    std::uint64_t expected = 0;
    for (int x = 0; x < count; ++x) expected += (x % 97 >= 1 && x % 97 <= 3);
    EXPECT_EQ(space.size(), expected);
    expect_round_trip(space);
    const ConfigIndex last = space.size() - 1;
    EXPECT_EQ(space.value(last, 0).as_int() % 97, space.value(last, 1).as_int());
  }
}

}  // namespace
}  // namespace steer
