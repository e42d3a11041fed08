// Properties every searcher keeps: valid configurations only, no repeats, exact budgets
// (the loop asks for at most `max`), determinism under a seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "steer/error.hpp"
#include "steer/searcher.hpp"

namespace steer {
namespace {

Space small_space() {
  SpaceDefinition def;
  def.add_parameter("X", std::vector<Value>{1, 2, 4, 8, 16});
  def.add_parameter("Y", std::vector<Value>{1, 2, 3});
  def.add_parameter("Z", std::vector<Value>{0, 1});
  def.add_constraint("X * Y <= 16 or Z == 1");
  return Space::build(def);
}

std::vector<ConfigIndex> drain(Searcher& searcher, const Space& space, std::size_t batch) {
  searcher.start(space);
  std::vector<ConfigIndex> order;
  for (;;) {
    std::vector<Proposal> proposals = searcher.propose(batch);
    EXPECT_LE(proposals.size(), batch);
    if (proposals.empty()) break;
    for (const Proposal& p : proposals) {
      order.push_back(p.config);
      Result r;
      r.config_index = p.config;
      r.status = Status::Ok;
      r.time.median_ms = static_cast<double>(p.config % 7) + 1;
      searcher.observe(r);
    }
  }
  return order;
}

class EverySearcher : public ::testing::TestWithParam<std::string> {};

TEST_P(EverySearcher, ProposesEveryValidConfigurationExactlyOnce) {
  Space space = small_space();
  auto searcher = make_searcher(GetParam(), SearcherOptions{.seed = 9});
  std::vector<ConfigIndex> order = drain(*searcher, space, 3);
  std::set<ConfigIndex> distinct(order.begin(), order.end());
  EXPECT_EQ(distinct.size(), order.size()) << "no repeats";
  EXPECT_EQ(order.size(), space.size()) << "nothing left out";
  for (ConfigIndex c : order) EXPECT_LT(c, space.size());
}

TEST_P(EverySearcher, IsDeterministicUnderASeed) {
  Space space = small_space();
  auto a = make_searcher(GetParam(), SearcherOptions{.seed = 42});
  auto b = make_searcher(GetParam(), SearcherOptions{.seed = 42});
  EXPECT_EQ(drain(*a, space, 2), drain(*b, space, 2));
}

TEST_P(EverySearcher, NeverProposesMoreThanAsked) {
  Space space = small_space();
  auto searcher = make_searcher(GetParam(), SearcherOptions{.seed = 1});
  searcher->start(space);
  EXPECT_EQ(searcher->propose(1).size(), 1u);
  EXPECT_TRUE(searcher->propose(0).empty());
}

// As the loop drives a searcher on `devices` devices: it asks for proposals while a device
// is free, and results come back in an order of their own (here: the most recent proposal
// first, every other time the oldest). Returns the order proposed and the mean number of
// tests running when each finished.
struct ParallelDrain {
  std::vector<ConfigIndex> order;
  double mean_running = 0;
};
ParallelDrain drain_parallel(Searcher& searcher, const Space& space, std::size_t devices,
                             std::size_t limit = std::numeric_limits<std::size_t>::max()) {
  searcher.parallel(devices);
  searcher.start(space);
  ParallelDrain drain;
  std::vector<ConfigIndex> running;
  double running_sum = 0;
  for (std::size_t finished = 0;; ++finished) {
    const std::size_t free = std::min(devices - running.size(), limit - drain.order.size());
    std::vector<Proposal> proposals = searcher.propose(free);
    EXPECT_LE(proposals.size(), free);
    for (const Proposal& p : proposals) {
      drain.order.push_back(p.config);
      running.push_back(p.config);
    }
    if (running.empty()) break;
    running_sum += static_cast<double>(running.size());
    auto done = finished % 2 == 0 ? running.end() - 1 : running.begin();
    Result r;
    r.config_index = *done;
    r.status = Status::Ok;
    r.time.median_ms = static_cast<double>(*done % 7) + 1;
    running.erase(done);
    searcher.observe(r);
  }
  drain.mean_running = drain.order.empty() ? 0 : running_sum / static_cast<double>(drain.order.size());
  return drain;
}

// The loop may ask what comes next while a result is pending (Searcher::likely_next) and
// compile it ahead; asking changes no proposal, and a guess is a configuration of the space
// not yet proposed.
TEST_P(EverySearcher, GuessingWhatComesNextChangesNoProposal) {
  Space space = small_space();
  auto plain = make_searcher(GetParam(), SearcherOptions{.seed = 9});
  const std::vector<ConfigIndex> unguessed = drain(*plain, space, 1);
  auto guessing = make_searcher(GetParam(), SearcherOptions{.seed = 9});
  guessing->start(space);
  std::vector<ConfigIndex> order;
  for (;;) {
    const std::vector<Proposal> proposals = guessing->propose(1);
    if (proposals.empty()) break;
    order.push_back(proposals.front().config);
    for (ConfigIndex g : guessing->likely_next(4)) {
      EXPECT_LT(g, space.size());
      EXPECT_EQ(std::find(order.begin(), order.end(), g), order.end()) << "guessed " << g << ", proposed already";
    }
    Result r;
    r.config_index = proposals.front().config;
    r.status = Status::Ok;
    r.time.median_ms = static_cast<double>(r.config_index % 7) + 1;
    guessing->observe(r);
  }
  EXPECT_EQ(order, unguessed);
}

// A first-improvement climb around a start that no neighbour beats: while a neighbour is
// pending, its first guess is the neighbour it tests next.
TEST(ClimbingSearchers, GuessTheNeighbourTheyTestNextWhenThePendingOneIsNoBetter) {
  const Space space = small_space();
  for (const char* name : {"mls", "ils", "basin-hopping"}) {
    auto searcher = make_searcher(name, SearcherOptions{.seed = 4});
    searcher->start(space);
    std::vector<ConfigIndex> guesses;
    std::size_t checked = 0;
    for (std::size_t test = 0; test < 8; ++test) {
      const std::vector<Proposal> proposals = searcher->propose(1);
      ASSERT_EQ(proposals.size(), 1u) << name;
      const ConfigIndex c = proposals.front().config;
      if (!guesses.empty()) {
        EXPECT_EQ(c, guesses.front()) << name << ", test " << test;
        ++checked;
      }
      guesses = searcher->likely_next(3);
      Result r;
      r.config_index = c;
      r.status = Status::Ok;
      r.time.median_ms = test == 0 ? 1.0 : 10.0 + static_cast<double>(c);  // the start is the fastest
      searcher->observe(r);
    }
    EXPECT_GE(checked, 3u) << name << ": the start has at least four untested neighbours";
  }
}

TEST_P(EverySearcher, OnSeveralDevicesProposesEveryConfigurationOnceInWhateverOrderResultsFinish) {
  Space space = small_space();
  auto searcher = make_searcher(GetParam(), SearcherOptions{.seed = 9});
  std::vector<ConfigIndex> order = drain_parallel(*searcher, space, 4).order;
  std::set<ConfigIndex> distinct(order.begin(), order.end());
  EXPECT_EQ(distinct.size(), order.size()) << "no repeats";
  EXPECT_EQ(order.size(), space.size()) << "nothing left out";
}

// Searchers that need each result before their next step get a batch rule on several
// devices: the constant liar (bayes), several neighbours at once (the climbs, annealing,
// mcmc). The devices are kept busy for most of the run (a climb waits for the last of its
// neighbourhood before it moves on).
TEST(ParallelSearchers, SequentialSearchersKeepTheDevicesBusy) {
  SpaceDefinition def;
  for (const char* name : {"A", "B", "C", "D"}) def.add_parameter(name, std::vector<Value>{1, 2, 3, 4, 5, 6});
  const Space space = Space::build(def);
  for (const char* name : {"bayes", "annealing", "mcmc", "mls", "ils", "basin-hopping"}) {
    auto searcher = make_searcher(name, SearcherOptions{.seed = 3, .settings = {}});
    const ParallelDrain drain = drain_parallel(*searcher, space, 4, 200);
    EXPECT_EQ(drain.order.size(), 200u) << name;
    EXPECT_GE(drain.mean_running, 2.75) << name << ": on average this many of 4 devices were busy";
  }
}

INSTANTIATE_TEST_SUITE_P(Registered, EverySearcher,
                         ::testing::Values("default", "exhaustive", "random", "basin-hopping", "annealing", "mls",
                                           "ils", "genetic", "starchart", "bayes", "surrogate", "mcmc"));

TEST(RandomSearcher, DifferentSeedsGiveDifferentOrders) {
  Space space = small_space();
  auto a = make_searcher("random", SearcherOptions{.seed = 1});
  auto b = make_searcher("random", SearcherOptions{.seed = 2});
  EXPECT_NE(drain(*a, space, 4), drain(*b, space, 4));
}

TEST(RandomSearcher, FirstProposalIsUniformOverTheSpace) {
  Space space = small_space();
  std::vector<int> hits(space.size());
  constexpr int kTrials = 20000;
  for (int seed = 0; seed < kTrials; ++seed) {
    auto searcher = make_searcher("random", SearcherOptions{.seed = static_cast<std::uint64_t>(seed)});
    searcher->start(space);
    ++hits[searcher->propose(1).front().config];
  }
  double expected = static_cast<double>(kTrials) / static_cast<double>(space.size());
  for (int h : hits) EXPECT_NEAR(h, expected, 5 * std::sqrt(expected));
}

// With drain()'s runtimes (seven values, many ties) a genetic population soon breeds only
// configurations it has tested; it must then start afresh from untested ones rather than stall,
// until the space is spent (popsize is far below the space here, unlike small_space()).
TEST(GeneticSearcher, GoesOnAfterItsPopulationConverges) {
  SpaceDefinition def;
  for (const char* name : {"A", "B", "C", "D"}) def.add_parameter(name, std::vector<Value>{0, 1, 2, 3, 4, 5});
  def.add_constraint("A + B <= 8");
  Space space = Space::build(def);
  auto searcher = make_searcher("genetic", SearcherOptions{.seed = 3});
  std::vector<ConfigIndex> order = drain(*searcher, space, 4);
  std::set<ConfigIndex> distinct(order.begin(), order.end());
  EXPECT_EQ(distinct.size(), order.size()) << "no repeats";
  EXPECT_EQ(order.size(), space.size()) << "nothing left out";
}

TEST(GeneticSearcher, ScreenedByTheModelItStillTestsEveryConfigurationOnce) {
  SpaceDefinition def;
  for (const char* name : {"A", "B", "C", "D"}) def.add_parameter(name, std::vector<Value>{0, 1, 2, 3, 4, 5});
  def.add_constraint("A + B <= 8");
  Space space = Space::build(def);
  auto searcher = make_searcher("genetic", SearcherOptions{.seed = 3, .settings = {{"screen", "4"}, {"kappa", "2"}}});
  std::vector<ConfigIndex> order = drain(*searcher, space, 4);
  std::set<ConfigIndex> distinct(order.begin(), order.end());
  EXPECT_EQ(distinct.size(), order.size()) << "no repeats";
  EXPECT_EQ(order.size(), space.size()) << "nothing left out";
}

TEST(GeneticSearcher, ScreeningTestsTheChildrenTheModelExpectsFastestFirst) {
  // Runtime grows with A alone: after the first generation the model has learnt it, so the
  // screened generations test low A before high A far more often than the plain algorithm.
  SpaceDefinition def;
  for (const char* name : {"A", "B", "C"}) def.add_parameter(name, std::vector<Value>{0, 1, 2, 3, 4, 5, 6, 7});
  Space space = Space::build(def);
  auto mean_a_of_tests = [&](const std::string& screen) {
    auto searcher = make_searcher("genetic", SearcherOptions{.seed = 5, .settings = {{"screen", screen}}});
    searcher->start(space);
    double sum = 0;
    int counted = 0;
    for (int test = 0; test < 100;) {
      std::vector<Proposal> proposals = searcher->propose(8);
      if (proposals.empty()) break;
      for (const Proposal& p : proposals) {
        const auto a = space.value_indices(p.config)[0];
        Result r;
        r.config_index = p.config;
        r.status = Status::Ok;
        r.time = TimingStats::from_samples({1.0 + a});
        searcher->observe(r);
        if (++test > 20) {  // after the first generation
          sum += a;
          ++counted;
        }
      }
    }
    return sum / counted;
  };
  EXPECT_LT(mean_a_of_tests("4"), mean_a_of_tests("1"));
}

TEST(SearcherRegistry, UnknownNameListsTheKnownOnes) {
  try {
    make_searcher("nope", {});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("random"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace steer
