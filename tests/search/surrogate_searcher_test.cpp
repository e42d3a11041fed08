// `surrogate`, Steer's time-only searcher: the bayes searcher's Gaussian process over log
// runtime, with a length scale fitted per parameter, candidates bred from the fastest, and
// every other choice local (among the neighbours of the three fastest and children of the
// fastest). These tests state each of those, and that it is the default without a model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "steer/searcher.hpp"

namespace steer {
namespace {

using Runtime = std::function<double(const ValueIndices&)>;

Space space_of(std::size_t parameters, int values) {
  SpaceDefinition def;
  std::vector<Value> list;
  for (int v = 0; v < values; ++v) list.emplace_back(v);
  for (std::size_t p = 0; p < parameters; ++p) {
    std::string name = "P";  // appended, not "P" + ...: GCC 12 -O2 warns falsely (-Wrestrict)
    name += std::to_string(p);
    def.add_parameter(name, list);
  }
  return Space::build(def);
}

Result result_of(const Space& space, ConfigIndex c, const Runtime& runtime) {
  Result r;
  r.config_index = c;
  r.status = Status::Ok;
  r.time.median_ms = runtime(space.value_indices(c));
  return r;
}

// A small deterministic ripple per configuration, so that runtimes are distinct.
double ripple(const ValueIndices& v) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::uint32_t x : v) h = (h ^ x) * 1099511628211ull;
  return 1e-3 * static_cast<double>(h % 1000) / 1000.0;
}

// One sequential run: the configurations in the order proposed.
std::vector<ConfigIndex> drive(Searcher& searcher, const Space& space, const Runtime& runtime, std::size_t limit,
                               const std::function<void(ConfigIndex, const std::vector<std::pair<double, ConfigIndex>>&)>&
                                   check = {}) {
  searcher.start(space);
  std::vector<ConfigIndex> order;
  std::vector<std::pair<double, ConfigIndex>> measured;
  while (order.size() < limit) {
    const std::vector<Proposal> proposals = searcher.propose(1);
    if (proposals.empty()) break;
    const ConfigIndex c = proposals.front().config;
    if (check) check(c, measured);
    order.push_back(c);
    const Result r = result_of(space, c, runtime);
    measured.emplace_back(r.time.median_ms, c);
    searcher.observe(r);
  }
  return order;
}

std::size_t tests_to(const std::vector<ConfigIndex>& order, ConfigIndex target) {
  const auto it = std::find(order.begin(), order.end(), target);
  return it == order.end() ? order.size() + 1 : static_cast<std::size_t>(it - order.begin()) + 1;
}

ConfigIndex fastest_of(const Space& space, const Runtime& runtime) {
  ConfigIndex best = 0;
  for (ConfigIndex c = 1; c < space.size(); ++c) {
    if (runtime(space.value_indices(c)) < runtime(space.value_indices(best))) best = c;
  }
  return best;
}

TEST(SurrogateSearcher, IsTheDefaultSearcherWithoutAModel) {
  const Space space = space_of(4, 6);
  const Runtime runtime = [](const ValueIndices& v) { return 1 + std::pow(v[0] - 2.0, 2) + v[1] + ripple(v); };
  auto by_default = make_searcher("default", {.seed = 5});
  auto surrogate = make_searcher("surrogate", {.seed = 5});
  EXPECT_EQ(by_default->name(), "default");
  EXPECT_EQ(surrogate->name(), "surrogate");
  EXPECT_EQ(drive(*by_default, space, runtime, 60), drive(*surrogate, space, runtime, 60));
}

// The most proposals pending at once after the initial design, when the loop asks for up
// to 14 at a time (its compile-ahead window) and each test compiles for `compile_ms` and runs
// for `run_ms`.
std::size_t most_pending_after_design(const SearcherOptions& options, double compile_ms, double run_ms) {
  const Space space = space_of(4, 6);
  auto searcher = make_searcher("surrogate", options);
  searcher->start(space);
  std::deque<ConfigIndex> pending;
  std::size_t observed = 0, most = 0;
  while (observed < 40) {
    for (const Proposal& p : searcher->propose(14 - pending.size())) pending.push_back(p.config);
    if (pending.empty()) break;
    if (observed >= 8) most = std::max(most, pending.size());
    Result r = result_of(space, pending.front(), [&](const ValueIndices& v) { return run_ms * (1 + v[0] + ripple(v)); });
    r.compile_ms = compile_ms;
    pending.pop_front();
    searcher->observe(r);
    ++observed;
  }
  return most;
}

// Guessing the next choice while a test is pending (Searcher::likely_next, which the loop
// compiles ahead) leaves every choice as it was; the guesses are untested configurations,
// and often hold the next choice.
TEST(SurrogateSearcher, GuessesTheNextChoiceWithoutChangingAny) {
  const Space space = space_of(4, 6);
  const Runtime runtime = [](const ValueIndices& v) {
    return 1 + std::pow(v[0] - 3.0, 2) + 0.5 * std::abs(v[1] - 2.0) + 0.2 * v[2] + ripple(v);
  };
  auto plain = make_searcher("surrogate", {.seed = 4});
  const std::vector<ConfigIndex> unguessed = drive(*plain, space, runtime, 80);

  auto guessing = make_searcher("surrogate", {.seed = 4});
  guessing->start(space);
  std::vector<ConfigIndex> order;
  std::set<ConfigIndex> tested;
  std::vector<ConfigIndex> guessed;
  std::size_t choices = 0, hits = 0;
  while (order.size() < 80) {
    const std::vector<Proposal> proposals = guessing->propose(1);
    ASSERT_EQ(proposals.size(), 1u);
    const ConfigIndex c = proposals.front().config;
    if (!guessed.empty()) {
      ++choices;
      hits += std::count(guessed.begin(), guessed.end(), c);
    }
    guessed = guessing->likely_next(8);
    EXPECT_LE(guessed.size(), 8u);
    for (ConfigIndex g : guessed) {
      EXPECT_NE(g, c) << "the pending configuration is no guess";
      EXPECT_FALSE(tested.contains(g)) << "a guess is untested";
    }
    order.push_back(c);
    tested.insert(c);
    guessing->observe(result_of(space, c, runtime));
  }
  EXPECT_EQ(order, unguessed);
  ASSERT_GT(choices, 50u) << "guesses from the first choice of the model on";
  EXPECT_GT(hits * 4, choices) << hits << " of " << choices << " choices were guessed";
}

TEST(SurrogateSearcher, GuessesNothingWhileNoTestIsPendingOrDuringItsDesign) {
  const Space space = space_of(4, 6);
  auto searcher = make_searcher("surrogate", {.seed = 1});
  searcher->start(space);
  EXPECT_TRUE(searcher->likely_next(8).empty()) << "before any proposal";
  const std::vector<Proposal> design = searcher->propose(1);
  ASSERT_EQ(design.size(), 1u);
  EXPECT_TRUE(searcher->likely_next(8).empty()) << "the design's next points are known, not guessed";
}

TEST(SurrogateSearcher, ChoosesOneAtATimeByDefault) {
  // However long compiles take against runs: each choice waits for the test before it.
  EXPECT_EQ(most_pending_after_design({.seed = 2}, 100, 10), 1u);
}

TEST(SurrogateSearcher, KeepsEnoughPendingForCompilesAheadToHideCompilingWhenAsked) {
  const std::map<std::string, std::string> up_to_4 = {{"batch", "4"}};
  // Compiling 100 ms against runs of 10 to 60 ms: as many as it allows (4).
  EXPECT_EQ(most_pending_after_design({.seed = 2, .settings = up_to_4}, 100, 10), 4u);
  // Compiling 10 ms against runs of 10 to 60 ms: one running and one compiling.
  EXPECT_EQ(most_pending_after_design({.seed = 2, .settings = up_to_4}, 10, 10), 2u);
  // A fixed number without adapting it.
  EXPECT_EQ(most_pending_after_design({.seed = 2, .settings = {{"batch", "4"}, {"adaptive_batch", "false"}}}, 1, 10),
            4u);
}

TEST(SurrogateSearcher, PendingChoicesAreDistinct) {
  // Each choice lies about the pending ones, so that none is proposed twice.
  const Space space = space_of(3, 5);
  auto searcher =
      make_searcher("surrogate", {.seed = 9, .settings = {{"batch", "4"}, {"adaptive_batch", "false"}}});
  searcher->start(space);
  std::set<ConfigIndex> seen;
  std::deque<ConfigIndex> pending;
  for (int step = 0; step < 60; ++step) {
    for (const Proposal& p : searcher->propose(8 - pending.size())) {
      EXPECT_TRUE(seen.insert(p.config).second) << space.key(p.config) << " proposed twice";
      pending.push_back(p.config);
    }
    if (pending.empty()) break;
    searcher->observe(result_of(space, pending.front(), [](const ValueIndices& v) { return 1 + v[0] + v[1] * v[2] + ripple(v); }));
    pending.pop_front();
  }
  EXPECT_EQ(seen.size(), 60u + pending.size()) << "60 observed and those still pending";
}

TEST(SurrogateSearcher, EveryOtherChoiceIsANeighbourOfOneOfTheThreeFastest) {
  const Space space = space_of(4, 6);
  const Runtime runtime = [](const ValueIndices& v) {
    return 1 + std::pow(v[0] - 4.0, 2) + 0.5 * std::pow(v[1] - 1.0, 2) + 0.2 * v[2] * v[3] + ripple(v);
  };
  // Without bred children the local choices are among the elite's neighbours alone.
  auto searcher = make_searcher("surrogate", {.seed = 3, .settings = {{"bred", "0"}}});
  std::size_t test = 0, local = 0;
  drive(*searcher, space, runtime, 48, [&](ConfigIndex c, const std::vector<std::pair<double, ConfigIndex>>& measured) {
    ++test;
    const std::size_t choice = test > 8 ? test - 8 : 0;  // after the 8 of the initial design
    if (choice == 0 || choice % 2 != 0) return;
    ++local;
    std::vector<std::pair<double, ConfigIndex>> fastest = measured;
    std::sort(fastest.begin(), fastest.end());
    fastest.resize(3);
    bool near = false;
    for (const auto& f : fastest) {
      const std::vector<ConfigIndex> around = space.neighbours(f.second);
      near = near || std::find(around.begin(), around.end(), c) != around.end();
    }
    EXPECT_TRUE(near) << "test " << test << " (" << space.key(c) << ") is no neighbour of the three fastest";
  });
  EXPECT_EQ(local, 20u);
}

TEST(SurrogateSearcher, BredCandidatesTakeTheirValuesFromTheFastest) {
  // With every choice local and only the fastest's neighbours besides them, each test but
  // the initial design differs in at most one parameter (a mutation, or a neighbour's move)
  // from values the twenty fastest so far have.
  const Space space = space_of(5, 8);
  const Runtime runtime = [](const ValueIndices& v) {
    double t = 1;
    for (std::size_t p = 0; p < v.size(); ++p) t += std::abs(static_cast<double>(v[p]) - 2.0 - static_cast<double>(p % 3));
    return t + ripple(v);
  };
  auto searcher =
      make_searcher("surrogate", {.seed = 11, .settings = {{"local_every", "1"}, {"elite", "1"}, {"bred", "300"}}});
  std::size_t test = 0;
  drive(*searcher, space, runtime, 60, [&](ConfigIndex c, const std::vector<std::pair<double, ConfigIndex>>& measured) {
    if (++test <= 8) return;
    std::vector<std::pair<double, ConfigIndex>> fastest = measured;
    std::sort(fastest.begin(), fastest.end());
    if (fastest.size() > 20) fastest.resize(20);
    const ValueIndices v = space.value_indices(c);
    std::size_t foreign = 0;
    for (std::size_t p = 0; p < v.size(); ++p) {
      bool seen = false;
      for (const auto& f : fastest) seen = seen || space.value_indices(f.second)[p] == v[p];
      foreign += seen ? 0 : 1;
    }
    EXPECT_LE(foreign, 1u) << "test " << test << " (" << space.key(c) << ")";
  });
}

std::size_t differing(const Space& space, ConfigIndex a, ConfigIndex b) {
  const ValueIndices x = space.value_indices(a), y = space.value_indices(b);
  std::size_t n = 0;
  for (std::size_t p = 0; p < x.size(); ++p) n += x[p] != y[p] ? 1 : 0;
  return n;
}

// A valley along P0 + P1 = 5 that falls toward P0 = 4: from any point of it, changing P0 or P1
// alone climbs out of it; only both at once (a pair move) follow it down.
double pair_valley(const ValueIndices& v) {
  const double off = std::abs(static_cast<double>(v[0] + v[1]) - 5.0);
  return 1 + 5 * off + 0.2 * std::pow(4.0 - static_cast<double>(v[0]), 2) + 0.05 * (v[2] + v[3]) + ripple(v);
}

TEST(SurrogateSearcher, PairMovesJoinTheCandidatesOnceTheFastestHasStood) {
  // Every choice local, among the fastest's neighbours only: without pair moves each test
  // after the design differs from some test before it in at most one parameter; with them,
  // once the fastest has stood for 3 measurements, tests two parameters from it follow.
  const Space space = space_of(4, 6);
  const std::map<std::string, std::string> local = {{"local_every", "1"}, {"elite", "1"}, {"bred", "0"}};
  std::map<std::string, std::string> with_pairs = local;
  with_pairs.insert({{"pair_moves", "1"}, {"pair_moves_after", "3"}});
  for (const auto& [settings, pairs] : {std::pair{local, false}, std::pair{with_pairs, true}}) {
    auto searcher = make_searcher("surrogate", {.seed = 4, .settings = settings});
    std::size_t test = 0, two_away = 0;
    drive(*searcher, space, pair_valley, 60, [&](ConfigIndex c, const std::vector<std::pair<double, ConfigIndex>>& measured) {
      if (++test <= 8) return;
      const ConfigIndex fastest = std::min_element(measured.begin(), measured.end())->second;
      std::size_t nearest = space.parameters().size();
      for (const auto& m : measured) nearest = std::min(nearest, differing(space, c, m.second));
      if (differing(space, c, fastest) == 2 && nearest == 2) ++two_away;
    });
    if (pairs) {
      EXPECT_GT(two_away, 0u) << "no test two parameters from the fastest and from every other";
    } else {
      EXPECT_EQ(two_away, 0u);
    }
  }
}

TEST(SurrogateSearcher, PairMovesFollowAValleyThatNoOneParameterStepFollows) {
  const Space space = space_of(4, 6);
  const ConfigIndex best = fastest_of(space, pair_valley);
  std::size_t found_without = 0, found_with = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const std::map<std::string, std::string> local = {{"local_every", "1"}, {"elite", "1"}, {"bred", "0"}};
    std::map<std::string, std::string> with_pairs = local;
    with_pairs.insert({{"pair_moves", "1"}, {"pair_moves_after", "3"}});
    auto without = make_searcher("surrogate", {.seed = seed, .settings = local});
    auto with = make_searcher("surrogate", {.seed = seed, .settings = with_pairs});
    found_without += tests_to(drive(*without, space, pair_valley, 40), best) <= 40 ? 1 : 0;
    found_with += tests_to(drive(*with, space, pair_valley, 40), best) <= 40 ? 1 : 0;
  }
  EXPECT_GT(found_with, found_without);
  EXPECT_GE(found_with, 5u);
}

// Two basins: a wide slope down to (1,1,...) at 2.0, and a narrow one where the first two
// parameters are both 2, down to 1.0 at (2,2,1,...). Every one-parameter step from the wide
// basin leaves one of the two out of place: no climb from the wide basin's floor leads there.
double two_basins(const ValueIndices& v) {
  double to_wide = 0;
  for (std::uint32_t x : v) to_wide += std::abs(static_cast<double>(x) - 1.0);
  const bool narrow = v[0] == 2 && v[1] == 2;
  return (narrow ? 1 + 0.1 * (to_wide - 2) : 2 + 0.1 * to_wide) + ripple(v);
}

TEST(SurrogateSearcher, ClimbsStartFromAJumpOnceTheFastestHasStood) {
  // Every choice local. Without climbs each test after the design is a neighbour of the
  // fastest so far (or, once none is left, a random one). With them, once the fastest has
  // stood for 3 measurements, a jump from it (several parameters away) is tested, and then
  // neighbours of the jump: a climb from elsewhere.
  const Space space = space_of(5, 6);
  const std::map<std::string, std::string> local = {{"local_every", "1"}, {"elite", "1"}, {"bred", "0"}, {"popsize", "4"}};
  std::map<std::string, std::string> with_climbs = local;
  with_climbs.insert({{"climb_after", "3"}});
  for (const auto& [settings, climbs] : {std::pair{local, false}, std::pair{with_climbs, true}}) {
    auto searcher = make_searcher("surrogate", {.seed = 3, .settings = settings});
    std::size_t test = 0, steps_from_a_jump = 0, early_jumps = 0;
    std::optional<ConfigIndex> last_far;
    std::size_t stood = 0;
    double fastest_cost = std::numeric_limits<double>::infinity();
    drive(*searcher, space, two_basins, 60, [&](ConfigIndex c, const std::vector<std::pair<double, ConfigIndex>>& measured) {
      if (!measured.empty() && measured.back().first < fastest_cost) {
        fastest_cost = measured.back().first;
        stood = 0;
      } else if (!measured.empty()) {
        ++stood;
      }
      if (++test <= 4) return;
      const ConfigIndex fastest = std::min_element(measured.begin(), measured.end())->second;
      const bool far = differing(space, c, fastest) > 1;
      if (far && last_far && differing(space, c, *last_far) == 1) ++steps_from_a_jump;
      if (far && stood < 3) ++early_jumps;
      if (far) last_far = c;
    });
    EXPECT_EQ(early_jumps, 0u) << "a test far from a fastest that had not stood for 3 measurements";
    if (climbs) {
      EXPECT_GT(steps_from_a_jump, 2u) << "no climb from a jump";
    } else {
      EXPECT_EQ(steps_from_a_jump, 0u);
    }
  }
}

// Whether b is a with the values of two parameters swapped.
bool exchanged(const Space& space, ConfigIndex a, ConfigIndex b) {
  const ValueIndices x = space.value_indices(a), y = space.value_indices(b);
  std::vector<std::size_t> differ;
  for (std::size_t p = 0; p < x.size(); ++p) {
    if (x[p] != y[p]) differ.push_back(p);
  }
  return differ.size() == 2 && x[differ[0]] == y[differ[1]] && x[differ[1]] == y[differ[0]];
}

// A slope down to (0, 1, 2, 3, 4): every parameter's value differs there, so the floor has an
// exchange for every pair of parameters.
double distinct_floor(const ValueIndices& v) {
  double off = 0;
  for (std::size_t p = 0; p < v.size(); ++p) off += std::abs(static_cast<double>(v[p]) - static_cast<double>(p));
  return 1 + 0.1 * off + ripple(v);
}

TEST(SurrogateSearcher, ClimbsStartFromTheFastestsExchangesBeforeRandomJumps) {
  // A climb starts with a jump: a test two or more parameters from the fastest and from every
  // test before it (its steps are one from the climb's fastest). With climb_exchanges a jump is
  // an exchange of the fastest whenever the fastest has an untested one (every parameter of
  // this space has one value list); without, basin hopping's random jumps.
  const Space space = space_of(5, 6);
  const std::map<std::string, std::string> climbs = {
      {"local_every", "1"}, {"elite", "1"}, {"bred", "0"}, {"popsize", "4"}, {"climb_after", "3"}};
  std::map<std::string, std::string> from_exchanges = climbs;
  from_exchanges.insert({{"climb_exchanges", "true"}});
  for (const auto& [settings, with_exchanges] : {std::pair{climbs, false}, std::pair{from_exchanges, true}}) {
    const bool exchanges_first = with_exchanges;  // a copy: clang before 16 captures no structured binding
    std::size_t could = 0, did = 0;
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      auto searcher = make_searcher("surrogate", {.seed = seed, .settings = settings});
      std::size_t test = 0;
      drive(*searcher, space, distinct_floor, 80, [&](ConfigIndex c, const std::vector<std::pair<double, ConfigIndex>>& measured) {
        if (++test <= 4) return;
        std::size_t nearest = space.parameters().size();
        std::set<ConfigIndex> tested;
        for (const auto& m : measured) {
          nearest = std::min(nearest, differing(space, c, m.second));
          tested.insert(m.second);
        }
        if (nearest < 2) return;
        const ConfigIndex fastest = std::min_element(measured.begin(), measured.end())->second;
        bool untested_exchange = false;
        for (ConfigIndex x = 0; x < space.size() && !untested_exchange; ++x) {
          untested_exchange = exchanged(space, fastest, x) && !tested.contains(x);
        }
        if (!untested_exchange) return;
        ++could;
        if (exchanged(space, fastest, c)) {
          ++did;
        } else if (exchanges_first) {
          ADD_FAILURE() << "seed " << seed << ": jump " << space.key(c) << " while " << space.key(fastest)
                        << " had an untested exchange";
        }
      });
    }
    EXPECT_GT(could, 2u) << "too few jumps to tell";
    if (exchanges_first) {
      EXPECT_EQ(did, could);
    } else {
      EXPECT_LT(did, could);
    }
  }
}

TEST(SurrogateSearcher, FittedLengthScalesFindAnOptimumThatOneParameterSetsSooner) {
  // P0 alone decides the runtime; three parameters barely matter. One length scale for all
  // keeps the model from carrying what it learnt about P0 across the others.
  const Space space = space_of(4, 9);
  const Runtime runtime = [](const ValueIndices& v) {
    double t = 1 + 3 * std::abs(static_cast<double>(v[0]) - 6.0);
    for (std::size_t p = 1; p < v.size(); ++p) t += 0.01 * static_cast<double>(v[p]);
    return t + ripple(v);
  };
  const ConfigIndex best = fastest_of(space, runtime);
  double fitted = 0, fixed = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    auto with = make_searcher("surrogate", {.seed = seed});
    auto without = make_searcher("surrogate", {.seed = seed, .settings = {{"ard", "false"}}});
    fitted += static_cast<double>(tests_to(drive(*with, space, runtime, 150), best));
    fixed += static_cast<double>(tests_to(drive(*without, space, runtime, 150), best));
  }
  EXPECT_LT(fitted, 0.75 * fixed) << "tests to the fastest over 6 seeds: fitted " << fitted << ", fixed " << fixed;
}

TEST(SurrogateSearcher, ModellingLogRuntimeFindsTheFastestSoonerWhenRuntimesSpanDecades) {
  // A runtime exponential in the distance from the optimum: the slowest are 10^4 times the
  // fastest, and on a linear scale they swamp the differences near the optimum.
  const Space space = space_of(4, 8);
  const Runtime runtime = [](const ValueIndices& v) {
    double d = 0;
    const double centre[] = {5, 2, 6, 3};
    for (std::size_t p = 0; p < v.size(); ++p) d += std::abs(static_cast<double>(v[p]) - centre[p]);
    return std::exp(0.5 * d) * (1 + ripple(v));
  };
  const ConfigIndex best = fastest_of(space, runtime);
  double log = 0, linear = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    auto with = make_searcher("surrogate", {.seed = seed});
    auto without = make_searcher("surrogate", {.seed = seed, .settings = {{"log", "false"}}});
    log += static_cast<double>(tests_to(drive(*with, space, runtime, 150), best));
    linear += static_cast<double>(tests_to(drive(*without, space, runtime, 150), best));
  }
  EXPECT_LT(log, linear) << "tests to the fastest over 6 seeds: log " << log << ", linear " << linear;
}

TEST(SurrogateSearcher, ProposesEveryConfigurationOnceAndIsDeterministic) {
  const Space space = space_of(3, 5);
  const Runtime runtime = [](const ValueIndices& v) { return 1 + v[0] * v[1] + std::pow(v[2] - 2.0, 2) + ripple(v); };
  auto a = make_searcher("surrogate", {.seed = 9});
  auto b = make_searcher("surrogate", {.seed = 9});
  const std::vector<ConfigIndex> first = drive(*a, space, runtime, space.size() + 5);
  EXPECT_EQ(first, drive(*b, space, runtime, space.size() + 5));
  EXPECT_EQ(first.size(), space.size());
  EXPECT_EQ(std::set<ConfigIndex>(first.begin(), first.end()).size(), space.size());
}

}  // namespace
}  // namespace steer
