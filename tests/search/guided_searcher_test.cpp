// The counter-guided searcher is Bayesian optimisation over the counters a model predicts for
// every configuration: where the runtime follows a counter that the parameters shape in a way
// the parameters alone hide, it finds the fastest configuration in far fewer tests than the
// same optimisation over the parameters. It tests a source recording's fastest first, can
// profile its first test to let the expert system draw the next, and proposes every
// configuration once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <unistd.h>

#include "search/source_recording.hpp"
#include "steer/error.hpp"
#include "steer/model.hpp"
#include "steer/recording.hpp"
#include "steer/searcher.hpp"

namespace steer {
namespace {

const std::filesystem::path kData = STEER_DATA_DIR "/recordings";

// A x B in 1..20: the model's counter is A * B (the work per thread, say), and the runtime is
// best where A * B is 90: six configurations on a hyperbola across the parameter grid.
Space grid_space() {
  SpaceDefinition def;
  std::vector<Value> values;
  for (int v = 1; v <= 20; ++v) values.emplace_back(v);
  def.add_parameter("A", values);
  def.add_parameter("B", values);
  return Space::build(def);
}

double runtime_of(const Space& space, ConfigIndex c) {
  const double a = space.value(c, 0).as_double(), b = space.value(c, 1).as_double();
  return 1.0 + std::abs(a * b - 90.0) / 10.0;
}

// A model of the counter A * B trained on A in 1..a_max and B in 1..20, saved to `file`.
void save_product_model(int a_max, ModelKind kind, const std::filesystem::path& file) {
  SpaceDefinition trained;
  std::vector<Value> as, bs;
  for (int v = 1; v <= 20; ++v) {
    if (v <= a_max) as.emplace_back(v);
    bs.emplace_back(v);
  }
  trained.add_parameter("A", as);
  trained.add_parameter("B", bs);
  TrainingSet data;
  data.parameters = Space::build(trained).parameters();
  data.counters = {"INST_INT"};
  for (int a = 1; a <= a_max; ++a) {
    for (int b = 1; b <= 20; ++b) {
      data.features.push_back({double(a), double(b)});
      data.targets.push_back({double(a * b)});
    }
  }
  data.provenance.device = "NVIDIA H200";
  data.provenance.family = CounterFamily::VoltaPlus;
  CounterModel::train(data, {.kind = kind}).save(file);
}

std::string grid_model() {
  static const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("steer_guided_test_" + std::to_string(getpid()) + ".json");
  static const bool written = [] {
    save_product_model(20, ModelKind::LeastSquares, file);
    return true;
  }();
  (void)written;
  return file.string();
}

struct Route {
  std::vector<ConfigIndex> order;
  std::vector<bool> profiled;
};

// Answers every proposal at once until the searcher is done or `limit` tests ran.
template <typename Measure>
Route drive(Searcher& searcher, const Space& space, std::size_t batch, std::size_t limit, Measure measure) {
  searcher.start(space);
  Route run;
  while (run.order.size() < limit) {
    const std::vector<Proposal> proposals = searcher.propose(batch);
    EXPECT_LE(proposals.size(), batch);
    if (proposals.empty()) break;
    for (const Proposal& p : proposals) {
      run.order.push_back(p.config);
      run.profiled.push_back(p.measure.counters);
      searcher.observe(measure(p.config));
    }
  }
  return run;
}

// A recording's replay with one configuration 100 times slower: on the tuned GPU a source's
// fastest that is among the slowest of all.
auto replay_slowing(const Recording& tuned, ConfigIndex slowed) {
  return [&tuned, slowed](ConfigIndex c) {
    Result r = tuned.replay(c);
    if (c == slowed) r.time.median_ms *= 100;
    return r;
  };
}

// guided with a source recording, design_stop on or off, and further settings; the source's
// fastest alone tested first (no predicted lightest after it, work_after_source 0) unless told.
std::unique_ptr<Searcher> guided_with_source(const std::filesystem::path& model, const std::string& source,
                                             bool design_stop, std::map<std::string, std::string> settings = {}) {
  settings.emplace("source", source);
  settings.emplace("design_stop", design_stop ? "true" : "false");
  settings.emplace("work_after_source", "0");
  return make_searcher("guided", {.seed = 1, .model_path = model.string(), .settings = std::move(settings)});
}

Result grid_result(const Space& space, ConfigIndex c) {
  Result r;
  r.config_index = c;
  r.status = Status::Ok;
  r.time.median_ms = runtime_of(space, c);
  return r;
}

// Tests a run of the searcher needs to propose a configuration of runtime 1 on the grid, each
// test answered with `runtime`; limit + 1 when it has not within `limit` tests.
template <typename Runtime>
std::size_t tests_to_fastest(const std::string& searcher_name, std::uint64_t seed, const std::string& model,
                             std::map<std::string, std::string> settings, Runtime runtime, std::size_t limit) {
  const Space space = grid_space();
  auto searcher = make_searcher(searcher_name, {.seed = seed, .model_path = model, .settings = std::move(settings)});
  searcher->start(space);
  for (std::size_t tests = 1; tests <= limit; ++tests) {
    const std::vector<Proposal> next = searcher->propose(1);
    if (next.empty()) break;
    if (runtime(space, next.front().config) == 1.0) return tests;
    Result r = grid_result(space, next.front().config);
    r.time.median_ms = runtime(space, next.front().config);
    searcher->observe(r);
  }
  return limit + 1;
}

std::size_t tests_to_fastest(const std::string& searcher_name, std::uint64_t seed, const std::string& model) {
  return tests_to_fastest(searcher_name, seed, model, {}, runtime_of, grid_space().size());
}

// Where the fastest configurations lie on a thin curve of the counter, a run finds one at once
// or, having measured its neighbours, explores elsewhere for a while: the median over seeds says
// what a run typically needs.
TEST(GuidedSearcher, FindsTheFastestWherePredictedCountersExplainTheRuntime) {
  const std::string model = grid_model();
  std::vector<double> guided, bayes;
  for (std::uint64_t seed = 1; seed <= 9; ++seed) {
    guided.push_back(static_cast<double>(tests_to_fastest("guided", seed, model)));
    bayes.push_back(static_cast<double>(tests_to_fastest("bayes", seed, model)));
  }
  std::sort(guided.begin(), guided.end());
  std::sort(bayes.begin(), bayes.end());
  EXPECT_LE(guided[4], 12) << "median tests; bayes (parameters only) needed " << bayes[4];
  EXPECT_LT(2 * guided[4], bayes[4]);
}

TEST(GuidedSearcher, ProposesEveryConfigurationOnceAndIsDeterministic) {
  const Space space = grid_space();
  const std::string model = grid_model();
  auto measure = [&](ConfigIndex c) {
    Result r = grid_result(space, c);
    if (c % 7 == 3) r.status = Status::LaunchError;
    return r;
  };
  for (std::size_t batch : {1u, 3u}) {
    auto a = make_searcher("guided", {.seed = 5, .model_path = model, .settings = {}});
    auto b = make_searcher("guided", {.seed = 5, .model_path = model, .settings = {}});
    const Route first = drive(*a, space, batch, space.size() + 1, measure);
    EXPECT_EQ(first.order.size(), space.size());
    EXPECT_EQ(std::set<ConfigIndex>(first.order.begin(), first.order.end()).size(), space.size());
    EXPECT_EQ(first.order, drive(*b, space, batch, space.size() + 1, measure).order);
  }
}

// Its guesses of the next choice (Searcher::likely_next, compiled ahead by the loop) leave
// every choice as it was, and are never a configuration proposed already.
TEST(GuidedSearcher, GuessingTheNextChoiceChangesNone) {
  const Space space = grid_space();
  const std::string model = grid_model();
  auto measure = [&](ConfigIndex c) { return grid_result(space, c); };
  auto plain = make_searcher("guided", {.seed = 5, .model_path = model, .settings = {}});
  const Route unguessed = drive(*plain, space, 1, 60, measure);
  auto guessing = make_searcher("guided", {.seed = 5, .model_path = model, .settings = {}});
  guessing->start(space);
  std::vector<ConfigIndex> order;
  std::size_t guessed = 0;
  while (order.size() < 60) {
    const std::vector<Proposal> proposals = guessing->propose(1);
    if (proposals.empty()) break;
    const std::vector<ConfigIndex> guesses = guessing->likely_next(6);
    guessed += guesses.size();
    for (ConfigIndex g : guesses) {
      EXPECT_EQ(std::find(order.begin(), order.end(), g), order.end()) << "a guess is untested";
      EXPECT_NE(g, proposals.front().config);
    }
    order.push_back(proposals.front().config);
    guessing->observe(measure(proposals.front().config));
  }
  EXPECT_EQ(order, unguessed.order);
  EXPECT_GT(guessed, 0u) << "it guesses once the model chooses";
}

// A tree model trained on the recording `source`, in a file of its own (the caller removes it).
std::filesystem::path tree_model_of(const std::string& source) {
  static int made = 0;
  const std::filesystem::path model = std::filesystem::temp_directory_path() /
                                      ("steer_guided_test_tree_" + std::to_string(getpid()) + "_" + std::to_string(++made) + ".json");
  CounterModel::train(training_set(Recording::load(source), source), {.kind = ModelKind::Tree}).save(model);
  return model;
}

// As tree_model_of, from the recording's counters less the DRAM sectors: the counter set of
// KTT 2.3, which collects no dram__sectors_{read,write}.
std::filesystem::path tree_model_without_dram_of(const std::string& source) {
  static int made = 0;
  const std::filesystem::path model = std::filesystem::temp_directory_path() /
                                      ("steer_guided_test_nodram_" + std::to_string(getpid()) + "_" + std::to_string(++made) + ".json");
  TrainingSet data = training_set(Recording::load(source), source);
  std::vector<std::size_t> kept;
  for (std::size_t k = 0; k < data.counters.size(); ++k) {
    if (data.counters[k] != "DRAM_RT" && data.counters[k] != "DRAM_WT") kept.push_back(k);
  }
  std::vector<std::string> counters;
  for (std::size_t k : kept) counters.push_back(data.counters[k]);
  data.counters = counters;
  for (std::vector<double>& row : data.targets) {
    std::vector<double> values;
    for (std::size_t k : kept) values.push_back(row[k]);
    row = values;
  }
  CounterModel::train(data, {.kind = ModelKind::Tree}).save(model);
  return model;
}

// The work `model` predicts of each configuration of `space`, sqrt(INST_EXE * (DRAM_RT +
// DRAM_WT + 1)) as guided computes it (no DRAM traffic where the model predicts none), least
// first (ties: lower index); empty where the model predicts no instructions.
std::vector<std::pair<double, ConfigIndex>> predicted_work_order(const std::filesystem::path& model, const Space& space) {
  const PredictedCounters predicted = CounterModel::load(model.string()).predict(space);
  const float* instructions = predicted.counter("INST_EXE");
  const float* reads = predicted.counter("DRAM_RT");
  const float* writes = predicted.counter("DRAM_WT");
  std::vector<std::pair<double, ConfigIndex>> work;
  if (!instructions) return work;
  for (ConfigIndex c = 0; c < space.size(); ++c) {
    const double traffic = (reads ? std::max(0.0f, reads[c]) : 0.0) + (writes ? std::max(0.0f, writes[c]) : 0.0);
    work.emplace_back(std::sqrt(std::max(1.0, static_cast<double>(instructions[c])) * (traffic + 1.0)), c);
  }
  std::sort(work.begin(), work.end());
  return work;
}

TEST(GuidedSearcher, TestsTheSourcesFastestFirstUnderEveryObjective) {
  const Recording tuned = Recording::load(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  const std::string source = (kData / "ktt/coulomb_gtx1070.ktt.json.gz").string();
  const std::filesystem::path model = tree_model_of(source);
  auto transfer = make_searcher("transfer", {.seed = 1, .settings = {{"source", source}}});
  auto guided = make_searcher("guided", {.seed = 1, .model_path = model.string(), .settings = {{"source", source}}});
  auto replay = [&](ConfigIndex c) { return tuned.replay(c); };
  const Route by_transfer = drive(*transfer, tuned.space(), 1, 1, replay);
  const Route by_guided = drive(*guided, tuned.space(), 1, 20, replay);
  EXPECT_EQ(by_guided.order.front(), by_transfer.order.front());

  // Tuning for energy as well, and without a profile: the profile, whose bottlenecks draw the
  // next tests, is the first design point's, after it.
  auto for_energy = [&](const std::string& first) {
    auto searcher = make_searcher("guided", {.seed = 1,
                                             .model_path = model.string(),
                                             .settings = {{"source", source},
                                                          {"source_first", first},
                                                          {"work_after_source", "0"}},  // the predicted lightest: its own test
                                             .objective = "energy"});
    searcher->start(tuned.space());
    return searcher;
  };
  auto energy = for_energy("1");
  const std::vector<Proposal> first = energy->propose(8);
  ASSERT_EQ(first.size(), 2u) << "the source's fastest, then the profiled design point";
  EXPECT_EQ(first[0].config, by_transfer.order.front());
  EXPECT_FALSE(first[0].measure.counters);
  EXPECT_TRUE(first[1].measure.counters);
  EXPECT_TRUE(energy->propose(8).empty()) << "the profile's counters decide the next tests";
  for (const Proposal& p : first) energy->observe(tuned.replay(p.config));
  EXPECT_FALSE(energy->propose(8).empty());

  const std::vector<Proposal> without = for_energy("0")->propose(8);
  ASSERT_EQ(without.size(), 1u);
  EXPECT_NE(without[0].config, by_transfer.order.front());
  EXPECT_TRUE(without[0].measure.counters) << "source_first 0: the profiled design point comes first";
  std::filesystem::remove(model);
}

// A model carries the runtimes of the recording it was trained on, so a model alone is a
// source too: guided transfers them as it would the recording's file, unless told `source=none`
// or another file, or unless a replay replays those very measurements (they are the answers).
TEST(GuidedSearcher, TakesTheModelsRecordingAsItsSourceUnlessToldOtherwise) {
  const Recording tuned = Recording::load(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  const std::string source = (kData / "ktt/coulomb_gtx1070.ktt.json.gz").string();
  const std::filesystem::path model = tree_model_of(source);
  auto route = [&](std::map<std::string, std::string> settings, std::string replayed = {}) {
    auto guided = make_searcher("guided", {.seed = 4,
                                           .model_path = model.string(),
                                           .settings = std::move(settings),
                                           .replayed = std::move(replayed)});
    return drive(*guided, tuned.space(), 1, 30, [&](ConfigIndex c) { return tuned.replay(c); }).order;
  };
  const std::vector<ConfigIndex> from_model = route({});
  EXPECT_EQ(from_model, route({{"source", source}})) << "the model's runtimes are the recording's";
  const std::vector<ConfigIndex> without = route({{"source", "none"}});
  EXPECT_NE(from_model.front(), without.front());
  EXPECT_EQ(route({}, recorded_runtimes(Recording::load(source)).fingerprint), without)
      << "a replay of the model's own measurements";
  EXPECT_EQ(route({}, recorded_runtimes(tuned).fingerprint), from_model) << "a replay of another GPU's";
  std::filesystem::remove(model);
}

// A source whose fastest beats the first design point has shown that it ranks the tuned
// space well, so the rest of the design is dropped and the model chooses from the third test;
// one whose fastest is beaten keeps the whole design. The two are judged together, so a
// searcher asked for several proposals gives the source's fastest and the first point, then
// waits for both.
TEST(GuidedSearcher, DropsTheRestOfItsDesignWhenTheSourcesFastestLeads) {
  const Recording tuned = Recording::load(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  const std::string source = (kData / "ktt/coulomb_gtx1070.ktt.json.gz").string();
  const std::filesystem::path model = tree_model_of(source);
  auto guided = [&](bool stop) { return guided_with_source(model, source, stop); };
  auto replay = [&](ConfigIndex c) { return tuned.replay(c); };
  const Route kept = drive(*guided(false), tuned.space(), 1, 3, replay);
  ASSERT_EQ(kept.order.size(), 3u);
  ASSERT_LT(tuned.runtime_ms(kept.order[0]), tuned.runtime_ms(kept.order[1])) << "the source's fastest leads here";
  const Route stopped = drive(*guided(true), tuned.space(), 1, 3, replay);
  EXPECT_EQ(std::vector<ConfigIndex>(stopped.order.begin(), stopped.order.begin() + 2),
            std::vector<ConfigIndex>(kept.order.begin(), kept.order.begin() + 2));
  EXPECT_NE(stopped.order[2], kept.order[2]) << "the design's second point is dropped";

  // The same source's fastest made the slowest of all: the design stays.
  const auto misled = replay_slowing(tuned, kept.order[0]);
  EXPECT_EQ(drive(*guided(true), tuned.space(), 1, 3, misled).order, drive(*guided(false), tuned.space(), 1, 3, misled).order);

  auto waiting = guided(true);
  waiting->start(tuned.space());
  const std::vector<Proposal> first = waiting->propose(4);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_TRUE(waiting->propose(4).empty()) << "waits for both results";
  for (const Proposal& p : first) waiting->observe(tuned.replay(p.config));
  EXPECT_FALSE(waiting->propose(4).empty());
  std::filesystem::remove(model);
}

// With a source, the configuration of least predicted work is tested right after the
// source's fastest (tuning for time, design_stop judges both against the first design point):
// where the source is another input whose fastest misleads (gemm at 128^3 for 4096^3) the
// predicted work still ranks the tuned space (docs/searchers.md, `work_after_source`).
TEST(GuidedSearcher, TestsThePredictedLightestAfterTheSourcesFastest) {
  const Recording tuned = Recording::load(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  const std::string source = (kData / "ktt/coulomb_gtx1070.ktt.json.gz").string();
  const std::filesystem::path model = tree_model_of(source);
  const std::vector<std::pair<double, ConfigIndex>> work = predicted_work_order(model, tuned.space());
  ASSERT_FALSE(work.empty());
  const ConfigIndex lightest = work.front().second;
  const ConfigIndex fastest = search::source_order(tuned.space(), Recording::load(source)).front().second;
  ASSERT_NE(lightest, fastest);
  auto guided = make_searcher("guided", {.seed = 1, .model_path = model.string(), .settings = {{"source", source}}});
  guided->start(tuned.space());
  const std::vector<Proposal> first = guided->propose(8);
  ASSERT_EQ(first.size(), 3u) << "the source's fastest, the lightest and the first design point, then it waits";
  EXPECT_EQ(first[0].config, fastest);
  EXPECT_EQ(first[1].config, lightest);
  EXPECT_TRUE(guided->propose(8).empty());

  // Under other objectives too, unprofiled, before the reaction's profiled design point.
  auto energy = make_searcher(
      "guided", {.seed = 1, .model_path = model.string(), .settings = {{"source", source}}, .objective = "energy"});
  energy->start(tuned.space());
  const std::vector<Proposal> energy_first = energy->propose(8);
  ASSERT_EQ(energy_first.size(), 3u);
  EXPECT_EQ(energy_first[0].config, fastest);
  EXPECT_EQ(energy_first[1].config, lightest);
  EXPECT_FALSE(energy_first[1].measure.counters);
  EXPECT_TRUE(energy_first[2].measure.counters) << "the reaction's profile";
  std::filesystem::remove(model);
}

// A source whose own fastest is beaten by one of the first tests (the predicted lightest or
// the first design point) ranks the tuned space worse than the predicted work does: it is set
// aside, and the predicted work takes its place as the prior mean and candidates, as without
// a source (work_replaces_beaten_source). A source whose fastest leads is kept.
TEST(GuidedSearcher, SetsABeatenSourceAsideForThePredictedWork) {
  const Recording tuned = Recording::load(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  const std::string source = (kData / "ktt/coulomb_gtx1070.ktt.json.gz").string();
  const std::filesystem::path model = tree_model_of(source);
  const std::vector<std::pair<double, ConfigIndex>> work = predicted_work_order(model, tuned.space());
  ASSERT_FALSE(work.empty());
  std::set<ConfigIndex> lightest;
  for (std::size_t i = 0; i < 50; ++i) lightest.insert(work[i].second);
  auto route = [&](bool replaces, const auto& replay) {
    auto guided = make_searcher("guided", {.seed = 2,
                                           .model_path = model.string(),
                                           .settings = {{"source", source},
                                                        {"work_replaces_beaten_source", replaces ? "true" : "false"}}});
    return drive(*guided, tuned.space(), 1, 20, replay).order;
  };
  // On this pair the predicted lightest, tested second, runs 1 % faster than the source's
  // fastest: made 10 times faster, the source's fastest leads.
  const ConfigIndex fastest = search::source_order(tuned.space(), Recording::load(source)).front().second;
  auto led_by_source = [&](ConfigIndex c) {
    Result r = tuned.replay(c);
    if (c == fastest) r.time.median_ms /= 10;
    return r;
  };
  const std::vector<ConfigIndex> led = route(false, led_by_source);
  ASSERT_EQ(led[0], fastest);
  EXPECT_EQ(route(true, led_by_source), led) << "a source whose fastest leads is kept";

  // Made the slowest of all, it is beaten: from the model's first choice on, the choices come
  // from the predicted lightest.
  const auto misled = replay_slowing(tuned, fastest);
  const std::vector<ConfigIndex> kept = route(false, misled), replaced = route(true, misled);
  EXPECT_EQ(std::vector<ConfigIndex>(replaced.begin(), replaced.begin() + 3),
            std::vector<ConfigIndex>(kept.begin(), kept.begin() + 3)) << "judged after the first three";
  auto light = [&](const std::vector<ConfigIndex>& order) {
    return std::count_if(order.begin() + 3, order.end(), [&](ConfigIndex c) { return lightest.contains(c); });
  };
  EXPECT_NE(replaced, kept);
  EXPECT_GT(light(replaced), light(kept)) << "of the 50 predicted lightest, among tests 4 to 20";
  std::filesystem::remove(model);
}

// With several of the source's fastest tested first (source_first), the design is judged by
// the fastest of them: the first made slow, the second still leads the design point, and the
// rest of the design is dropped.
TEST(GuidedSearcher, AnyOfTheSourcesFastestTestedFirstCanLeadTheDesign) {
  const Recording tuned = Recording::load(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  const std::string source = (kData / "ktt/coulomb_gtx1070.ktt.json.gz").string();
  const std::filesystem::path model = tree_model_of(source);
  auto guided = [&](bool stop) { return guided_with_source(model, source, stop, {{"source_first", "2"}}); };
  const Route kept = drive(*guided(false), tuned.space(), 1, 4, [&](ConfigIndex c) { return tuned.replay(c); });
  ASSERT_EQ(kept.order.size(), 4u);
  ASSERT_LT(tuned.runtime_ms(kept.order[1]), tuned.runtime_ms(kept.order[2])) << "the source's second leads here";
  const auto first_slow = replay_slowing(tuned, kept.order[0]);
  const Route slow_kept = drive(*guided(false), tuned.space(), 1, 4, first_slow);
  const Route stopped = drive(*guided(true), tuned.space(), 1, 4, first_slow);
  EXPECT_EQ(std::vector<ConfigIndex>(stopped.order.begin(), stopped.order.begin() + 3),
            std::vector<ConfigIndex>(kept.order.begin(), kept.order.begin() + 3));
  EXPECT_NE(stopped.order[3], slow_kept.order[3]) << "the design's second point is dropped";
  std::filesystem::remove(model);
}

// Tuning for time, expected improvement keeps a wider margin (xi_unproven) while no source
// has proved itself: without a source it is the margin (for the first xi_unproven_tests
// measurements, or throughout at 0); with one, it holds until design_stop has judged the
// source, and the source's fastest leading the design point narrows it to xi.
TEST(GuidedSearcher, ExploresMoreWhileNoSourceHasProvedItself) {
  const Recording tuned = Recording::load(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  const std::string source = (kData / "ktt/coulomb_gtx1070.ktt.json.gz").string();
  const std::filesystem::path model = tree_model_of(source);
  auto route = [&](std::map<std::string, std::string> settings, const auto& replay) {
    settings.emplace("xi", "0.01");
    settings.emplace("xi_unproven_tests", "0");  // throughout, unless a case says otherwise
    settings.emplace("source", "none");  // not the model's recording either
    settings.emplace("work_prior", "false");  // nor the predicted work in its place
    auto guided = make_searcher("guided", {.seed = 3, .model_path = model.string(), .settings = settings});
    return drive(*guided, tuned.space(), 1, 40, replay).order;
  };
  auto replay = [&](ConfigIndex c) { return tuned.replay(c); };
  // No source: the unproven margin is the margin, and xi plays no part.
  const auto wide = route({{"xi_unproven", "0.5"}}, replay);
  EXPECT_EQ(wide, route({{"xi", "0.3"}, {"xi_unproven", "0.5"}}, replay));
  EXPECT_NE(wide, route({{"xi_unproven", "0.01"}}, replay)) << "the margin matters on this recording";
  // For the first 10 measurements only (as guided sets it): the same first 10 tests, then xi's.
  const auto limited = route({{"xi_unproven", "0.5"}, {"xi_unproven_tests", "10"}}, replay);
  EXPECT_EQ(std::vector<ConfigIndex>(limited.begin(), limited.begin() + 10),
            std::vector<ConfigIndex>(wide.begin(), wide.begin() + 10));
  EXPECT_NE(limited, wide);

  // A source whose fastest leads (as it does here): xi from the model's first choice on.
  const std::map<std::string, std::string> with_source = {{"source", source}, {"work_after_source", "0"}};
  auto with = [&](const std::string& unproven) {
    auto settings = with_source;
    settings.emplace("xi_unproven", unproven);
    return settings;
  };
  EXPECT_EQ(route(with("0.5"), replay), route(with("0.01"), replay));

  // The same source's fastest made the slowest of all: the wide margin stays.
  const auto misled = replay_slowing(tuned, route(with("0.01"), replay).front());
  EXPECT_NE(route(with("0.5"), misled), route(with("0.01"), misled));
  std::filesystem::remove(model);
}

// Without a source, the work the model predicts of each configuration (instructions and DRAM
// traffic) stands in for one: its lightest is tested first, as a source's fastest is, and the
// design comes from the predicted lighter half. Tuning coulomb on the RTX 2080 with the GTX
// 1070's model and no source, it finds the best in a few tests (P over time 0.78 -> 1.00 over
// 100 runs); without it, after tens.
TEST(GuidedSearcher, WithoutASourceThePredictedWorkStandsInForOne) {
  const Recording tuned = Recording::load(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  const std::string other = (kData / "ktt/coulomb_gtx1070.ktt.json.gz").string();
  const std::filesystem::path model = tree_model_of(other);
  const std::vector<std::pair<double, ConfigIndex>> work = predicted_work_order(model, tuned.space());
  ASSERT_FALSE(work.empty());
  std::set<ConfigIndex> lighter;
  for (std::size_t i = 0; i < (work.size() + 1) / 2; ++i) lighter.insert(work[i].second);

  auto guided = [&](std::uint64_t seed, std::map<std::string, std::string> settings) {
    settings.emplace("source", "none");
    return make_searcher("guided", {.seed = seed, .model_path = model.string(), .settings = settings});
  };
  std::size_t heavy_with = 0, heavy_without = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    auto with = guided(seed, {});
    with->start(tuned.space());
    // The lightest first, then the design's first point, both awaited (design_stop), as a
    // source's fastest and the first design point are.
    const std::vector<Proposal> design = with->propose(8);
    ASSERT_EQ(design.size(), 2u);
    EXPECT_EQ(design[0].config, work[0].second) << "the predicted lightest first";
    for (const Proposal& p : design) heavy_with += lighter.contains(p.config) ? 0 : 1;
    auto without = guided(seed, {{"work_prior", "false"}});
    without->start(tuned.space());
    const std::vector<Proposal> whole = without->propose(8);
    EXPECT_EQ(whole.size(), 4u);
    for (const Proposal& p : whole) heavy_without += lighter.contains(p.config) ? 0 : 1;
  }
  EXPECT_EQ(heavy_with, 0u) << "tests in the predicted heavier half, of 40";
  EXPECT_GT(heavy_without, 20u) << "of 80 drawn from the whole space";

  // Without testing the lightest first, the design is 2 points and trusted at once: the
  // unproven margin plays no part.
  auto replay = [&](ConfigIndex c) { return tuned.replay(c); };
  auto route = [&](const std::string& unproven) {
    auto searcher = guided(3, {{"xi_unproven", unproven}, {"work_first", "0"}});
    return drive(*searcher, tuned.space(), 1, 40, replay).order;
  };
  EXPECT_EQ(route("0.5"), route("0.01"));

  ConfigIndex best = 0;
  double best_ms = INFINITY;
  for (ConfigIndex c = 0; c < tuned.space().size(); ++c) {
    const Result r = tuned.replay(c);
    if (r.ok() && r.time.median_ms < best_ms) best_ms = r.time.median_ms, best = c;
  }
  auto median_tests_to_best = [&](const std::map<std::string, std::string>& settings) {
    std::vector<std::size_t> tests;
    for (std::uint64_t seed = 1; seed <= 9; ++seed) {
      auto searcher = guided(seed, settings);
      const std::vector<ConfigIndex> order = drive(*searcher, tuned.space(), 1, tuned.space().size(), replay).order;
      tests.push_back(static_cast<std::size_t>(std::find(order.begin(), order.end(), best) - order.begin()) + 1);
    }
    std::sort(tests.begin(), tests.end());
    return tests[tests.size() / 2];
  };
  const std::size_t with = median_tests_to_best({}), without = median_tests_to_best({{"work_prior", "false"}});
  const std::size_t not_first = median_tests_to_best({{"work_first", "0"}});
  EXPECT_LE(with, 3u);
  EXPECT_LE(with, not_first);
  EXPECT_GE(without, 2 * not_first);
  std::filesystem::remove(model);
}

// A model of a counter set without DRAM sectors (KTT 2.3) still lends guided its
// predicted work, by instructions alone: tuning coulomb on the GTX 1070 with such a model of
// the RTX 2080 and no source, the predicted lightest goes first and a configuration within
// 1.1x of the best comes within a few tests (P over time 0.56 -> 1.00 over 100 runs).
TEST(GuidedSearcher, AModelWithoutDramCountersRanksThePredictedWorkByInstructions) {
  const Recording tuned = Recording::load(kData / "ktt/coulomb_gtx1070.ktt.json.gz");
  const std::filesystem::path model = tree_model_without_dram_of((kData / "ktt/coulomb_rtx2080.ktt.json.gz").string());
  ASSERT_EQ(CounterModel::load(model.string()).predict(tuned.space()).counter("DRAM_RT"), nullptr);
  const std::vector<std::pair<double, ConfigIndex>> work = predicted_work_order(model, tuned.space());
  ASSERT_FALSE(work.empty());
  double best_ms = INFINITY;
  for (ConfigIndex c = 0; c < tuned.space().size(); ++c) {
    const Result r = tuned.replay(c);
    if (r.ok()) best_ms = std::min(best_ms, r.time.median_ms);
  }
  auto replay = [&](ConfigIndex c) { return tuned.replay(c); };
  auto tests_to_good = [&](std::uint64_t seed, const std::string& work_prior) {
    auto searcher = make_searcher("guided", {.seed = seed,
                                             .model_path = model.string(),
                                             .settings = {{"source", "none"}, {"work_prior", work_prior}}});
    const std::vector<ConfigIndex> order = drive(*searcher, tuned.space(), 1, tuned.space().size(), replay).order;
    if (work_prior == "true") {
      EXPECT_EQ(order.front(), work[0].second) << "the predicted lightest first";
    }
    const auto good = std::find_if(order.begin(), order.end(), [&](ConfigIndex c) {
      const Result r = tuned.replay(c);
      return r.ok() && r.time.median_ms <= 1.1 * best_ms;
    });
    return static_cast<std::size_t>(good - order.begin()) + 1;
  };
  std::vector<std::size_t> with, without;
  for (std::uint64_t seed = 1; seed <= 9; ++seed) {
    with.push_back(tests_to_good(seed, "true"));
    without.push_back(tests_to_good(seed, "false"));
  }
  std::sort(with.begin(), with.end());
  std::sort(without.begin(), without.end());
  EXPECT_LE(with[4], 2u) << "median tests to within 1.1x of the best with the predicted work: " << ::testing::PrintToString(with)
                         << " without: " << ::testing::PrintToString(without);
  EXPECT_LT(with[4], without[4]);
  std::filesystem::remove(model);
}

// A prior mean the first tests contradict fades; it does not turn round. On nbody_h200 with
// its own model and no source, the predicted lightest configuration runs 2.5 times slower
// than the best, and after the three-point design the prior's fitted factor comes out
// negative: turned round, the prior's far tail, the configuration predicted heaviest (10
// standard deviations out, 50 times slower than the best), would be the next test.
TEST(GuidedSearcher, APriorTheFirstTestsContradictFadesInsteadOfTurningRound) {
  const std::string recording = STEER_DATA_DIR "/h200/nbody_h200.db.gz";
  const Recording tuned = Recording::load(recording);
  const std::filesystem::path model = tree_model_of(recording);
  const std::vector<std::pair<double, ConfigIndex>> work = predicted_work_order(model, tuned.space());
  ASSERT_FALSE(work.empty());
  // The predicted heaviest 1 %: all of them run over 5 times slower than the best.
  ASSERT_TRUE(tuned.best_runtime_ms());
  std::set<ConfigIndex> heaviest;
  for (std::size_t i = work.size() - work.size() / 100; i < work.size(); ++i) {
    heaviest.insert(work[i].second);
    EXPECT_GT(tuned.replay(work[i].second).time.median_ms, 5 * *tuned.best_runtime_ms());
  }
  auto replay = [&](ConfigIndex c) { return tuned.replay(c); };
  auto runs_testing_the_heaviest = [&](const std::string& fades) {
    std::size_t runs = 0;
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
      auto searcher = make_searcher("guided", {.seed = seed,
                                               .model_path = model.string(),
                                               .settings = {{"source", "none"}, {"prior_fades", fades}}});
      const std::vector<ConfigIndex> first = drive(*searcher, tuned.space(), 1, 8, replay).order;
      if (std::any_of(first.begin(), first.end(), [&](ConfigIndex c) { return heaviest.contains(c); })) ++runs;
    }
    return runs;
  };
  EXPECT_EQ(runs_testing_the_heaviest("true"), 0u) << "of 10 runs, in their first 8 tests";
  EXPECT_GE(runs_testing_the_heaviest("false"), 6u) << "of 10 runs, in their first 8 tests";
  std::filesystem::remove(model);
}

// With a source that ranks the tuned GPU's configurations much as it does (pnpoly on the RTX
// 2080 Ti for the RTX 3090), the source's runtimes as the model's prior mean lead it to the
// tuned GPU's best within a few tens of tests; the model alone, with the source's runtime as
// just one more feature, takes about three times as many (mean 20 against 68 over 100 runs).
TEST(GuidedSearcher, ASourcesPriorMeanLeadsToTheBestSooner) {
  const Recording tuned = Recording::load(kData / "ktt/pnpoly_rtx3090.ktt.json.gz");
  const std::string source = (kData / "ktt/pnpoly_rtx2080ti.ktt.json.gz").string();
  const std::filesystem::path model = tree_model_of(source);
  auto replay = [&](ConfigIndex c) { return tuned.replay(c); };
  ConfigIndex best = 0;
  double best_ms = INFINITY;
  for (ConfigIndex c = 0; c < tuned.space().size(); ++c) {
    const Result r = tuned.replay(c);
    if (r.ok() && r.time.median_ms < best_ms) best_ms = r.time.median_ms, best = c;
  }
  const auto seeds_finding_the_best = [&](const std::map<std::string, std::string>& settings) {
    int found = 0;
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      auto guided = make_searcher("guided", {.seed = seed, .model_path = model.string(), .settings = settings});
      const std::vector<ConfigIndex> order = drive(*guided, tuned.space(), 1, 30, replay).order;
      found += std::find(order.begin(), order.end(), best) != order.end() ? 1 : 0;
    }
    return found;
  };
  EXPECT_EQ(seeds_finding_the_best({{"source", source}}), 5) << "within 30 tests";
  EXPECT_LE(seeds_finding_the_best({{"source", source}, {"source_prior", "0"}}), 2) << "within 30 tests";
  std::filesystem::remove(model);
}

TEST(GuidedSearcher, WithReactionDrawsProfilesTheFirstTestAndWaitsForIt) {
  const Recording recording = Recording::load(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  const std::string file = (kData / "ktt/coulomb_rtx2080.ktt.json.gz").string();
  const std::filesystem::path model =
      std::filesystem::temp_directory_path() / ("steer_guided_test_self_" + std::to_string(getpid()) + ".json");
  CounterModel::train(training_set(recording, file), {.kind = ModelKind::Tree}).save(model);
  // work_first 0: nothing tested before the design (the predicted lightest would be, unprofiled).
  auto searcher = make_searcher("guided", {.seed = 2,
                                           .model_path = model.string(),
                                           .settings = {{"reaction_draws", "3"},
                                                        {"compute_bound", "true"},
                                                        {"source", "none"},
                                                        {"work_first", "0"}}});
  searcher->start(recording.space());
  const std::vector<Proposal> first = searcher->propose(8);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_TRUE(first[0].measure.counters);
  EXPECT_TRUE(searcher->propose(8).empty()) << "its counters decide the next tests";
  searcher->observe(recording.replay(first[0].config));
  const std::vector<Proposal> next = searcher->propose(8);
  EXPECT_FALSE(next.empty());
  for (const Proposal& p : next) EXPECT_FALSE(p.measure.counters);
  std::filesystem::remove(model);
}

// The reaction alone bunches its draws where its terms score highest; spread as the design is
// (each the farthest in the features from the tests before it, of `spread` the reaction drew),
// they probe that direction more widely.
TEST(GuidedSearcher, SpreadsTheReactionsDrawsOverThePredictedCounters) {
  const Recording recording = Recording::load(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  const std::filesystem::path model = tree_model_of((kData / "ktt/coulomb_rtx2080.ktt.json.gz").string());
  const PredictedCounters predicted = CounterModel::load(model).predict(recording.space());
  // Distance in the predicted counters, each scaled to its range over the space.
  auto distance = [&](ConfigIndex a, ConfigIndex b) {
    double sum = 0;
    for (const std::vector<float>& v : predicted.values) {
      const auto [low, high] = std::minmax_element(v.begin(), v.end());
      if (*high > *low) sum += std::pow((v[a] - v[b]) / (*high - *low), 2);
    }
    return std::sqrt(sum);
  };
  auto closest_pair_drawn = [&](const std::string& spread, std::uint64_t seed) {
    auto searcher = make_searcher("guided", {.seed = seed,
                                             .model_path = model.string(),
                                             .settings = {{"reaction_draws", "3"},
                                                          {"compute_bound", "true"},
                                                          {"spread", spread},
                                                          {"source", "none"},
                                                          {"work_first", "0"}}});
    searcher->start(recording.space());
    const std::vector<Proposal> profiled = searcher->propose(8);
    EXPECT_EQ(profiled.size(), 1u);
    searcher->observe(recording.replay(profiled[0].config));
    const std::vector<Proposal> drawn = searcher->propose(8);
    EXPECT_GE(drawn.size(), 3u);
    std::vector<ConfigIndex> points{profiled[0].config};
    for (std::size_t i = 0; i < 3 && i < drawn.size(); ++i) points.push_back(drawn[i].config);
    double closest = INFINITY;
    for (std::size_t i = 0; i < points.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) closest = std::min(closest, distance(points[i], points[j]));
    }
    return closest;
  };
  double spread = 0, drawn = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    spread += closest_pair_drawn("5", seed) / 20;
    drawn += closest_pair_drawn("0", seed) / 20;
  }
  EXPECT_GT(spread, 1.3 * drawn) << "mean distance of the closest two of the profiled test and its draws";
  std::filesystem::remove(model);
}

TEST(GuidedSearcher, ForObjectivesOtherThanTimeProfilesItsFirstTestByDefault) {
  const Recording recording = Recording::load(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  const std::filesystem::path model = tree_model_of((kData / "ktt/coulomb_rtx2080.ktt.json.gz").string());
  auto first_proposals = [&](const std::string& objective, std::map<std::string, std::string> settings) {
    settings.emplace("source", "none");  // the model's own recording is no source here
    auto searcher =
        make_searcher("guided", {.seed = 2, .model_path = model.string(), .settings = settings, .objective = objective});
    searcher->start(recording.space());
    return searcher->propose(8);
  };
  for (const std::string objective : {"energy", "weighted:0.5", "edp"}) {
    const std::vector<Proposal> first = first_proposals(objective, {});
    ASSERT_EQ(first.size(), 1u) << objective << ": the reaction to its counters draws the next tests";
    EXPECT_TRUE(first[0].measure.counters) << objective;
  }
  for (const Proposal& p : first_proposals("time", {})) EXPECT_FALSE(p.measure.counters) << "time: no profile";
  for (const Proposal& p : first_proposals("energy", {{"reaction_draws", "0"}})) EXPECT_FALSE(p.measure.counters);
  std::filesystem::remove(model);
}

TEST(GuidedSearcher, IsTheDefaultSearcherWhenAModelIsGiven) {
  const Space space = grid_space();
  const std::string model = grid_model();
  auto measure = [&](ConfigIndex c) { return grid_result(space, c); };
  auto by_default = make_searcher("default", {.seed = 7, .model_path = model, .settings = {}});
  auto guided = make_searcher("guided", {.seed = 7, .model_path = model, .settings = {}});
  auto surrogate = make_searcher("surrogate", {.seed = 7, .settings = {}});
  auto time_only = make_searcher("default", {.seed = 7, .settings = {}});
  EXPECT_EQ(by_default->name(), "default");
  EXPECT_EQ(drive(*by_default, space, 1, 60, measure).order, drive(*guided, space, 1, 60, measure).order);
  EXPECT_EQ(drive(*time_only, space, 4, 60, measure).order, drive(*surrogate, space, 4, 60, measure).order)
      << "without a model: surrogate";
}

TEST(GuidedSearcher, WithABatchProposesSeveralOfHighExpectedImprovementAtOnce) {
  const Space space = grid_space();
  const std::string model = grid_model();
  auto batched = make_searcher("guided", {.seed = 3, .model_path = model, .settings = {{"batch", "4"}}});
  batched->start(space);
  std::set<ConfigIndex> seen;
  auto answer = [&](const std::vector<Proposal>& proposals) {
    for (const Proposal& p : proposals) {
      EXPECT_TRUE(seen.insert(p.config).second) << "proposed twice: " << p.config;
      batched->observe(grid_result(space, p.config));
    }
  };
  answer(batched->propose(16));  // the initial design
  for (int round = 0; round < 5; ++round) {
    const std::vector<Proposal> proposals = batched->propose(16);
    EXPECT_EQ(proposals.size(), 4u) << "batch 4 of the 16 asked for";
    EXPECT_TRUE(batched->propose(16).empty()) << "the next choice waits for these results";
    answer(proposals);
  }
  // One at a time it chooses as without a batch.
  auto one = make_searcher("guided", {.seed = 3, .model_path = model, .settings = {{"batch", "4"}}});
  auto plain = make_searcher("guided", {.seed = 3, .model_path = model, .settings = {}});
  auto measure = [&](ConfigIndex c) { return grid_result(space, c); };
  EXPECT_EQ(drive(*one, space, 1, 40, measure).order, drive(*plain, space, 1, 40, measure).order);
}

// Design points whose predicted counters nearly coincide teach the model one thing twice: after
// the first, each is the farthest in predicted counters from those before it, of a few random
// configurations (`spread`; 0 keeps the Latin hypercube as drawn).
TEST(GuidedSearcher, SpreadsItsDesignOverThePredictedCounters) {
  const Space space = grid_space();
  const std::string model = grid_model();
  auto closest_pair = [&](const std::map<std::string, std::string>& settings, std::uint64_t seed) {
    auto searcher = make_searcher("guided", {.seed = seed, .model_path = model, .settings = settings});
    searcher->start(space);
    const std::vector<Proposal> design = searcher->propose(16);
    EXPECT_EQ(design.size(), 4u);
    double closest = INFINITY;
    for (std::size_t i = 0; i < design.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        auto counter = [&](ConfigIndex c) { return std::log1p(space.value(c, 0).as_double() * space.value(c, 1).as_double()); };
        closest = std::min(closest, std::abs(counter(design[i].config) - counter(design[j].config)));
      }
    }
    return closest;
  };
  double spread = 0, drawn = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    spread += closest_pair({}, seed) / 40;
    drawn += closest_pair({{"spread", "0"}}, seed) / 40;
  }
  EXPECT_GT(spread, 1.5 * drawn) << "mean distance of the closest two design points in log(1 + A*B)";
}

// Tuning for time with a source, the design's points come from the configurations the source
// ran in its faster half (design_share 0.5): a slow test costs its runtime, and a source ranks
// the tuned space's halves better than chance even where its fastest misleads. 1 draws them
// from the whole space.
TEST(GuidedSearcher, DrawsItsDesignFromTheSourcesFasterHalf) {
  const Recording tuned = Recording::load(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  const std::string source = (kData / "ktt/coulomb_gtx1070.ktt.json.gz").string();
  const std::filesystem::path model = tree_model_of(source);
  const auto order = search::source_order(tuned.space(), Recording::load(source));
  std::map<ConfigIndex, std::size_t> rank;
  for (std::size_t i = 0; i < order.size(); ++i) rank[order[i].second] = i;
  const std::size_t half = (order.size() + 1) / 2;
  auto slower_half = [&](std::map<std::string, std::string> settings) {
    settings.emplace("source", source);
    settings.emplace("design_stop", "false");  // the whole design, proposed at once
    settings.emplace("work_after_source", "0");  // nothing between the source's fastest and the design
    std::size_t slow = 0;
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      auto guided = make_searcher("guided", {.seed = seed, .model_path = model.string(), .settings = settings});
      guided->start(tuned.space());
      const std::vector<Proposal> design = guided->propose(8);
      EXPECT_EQ(design.size(), 3u);
      EXPECT_EQ(design.front().config, order.front().second) << "the source's fastest first";
      for (std::size_t i = 1; i < design.size(); ++i) slow += !rank.contains(design[i].config) || rank[design[i].config] >= half ? 1 : 0;
    }
    return slow;
  };
  EXPECT_EQ(slower_half({}), 0u) << "design points in the source's slower half, of 40";
  EXPECT_GT(slower_half({{"design_share", "1"}}), 10u) << "of 40 drawn from the whole space";
  std::filesystem::remove(model);
}

// A source that holds only a few of the tuned configurations (here 6 of 400) ranks too little
// of the space to draw the design from its faster half: the design comes from the whole space.
TEST(GuidedSearcher, DrawsItsDesignFromTheWholeSpaceWhereTheSourceHoldsFew) {
  const Space space = grid_space();
  const std::filesystem::path source =
      std::filesystem::temp_directory_path() / ("steer_guided_small_source_" + std::to_string(getpid()) + ".json");
  std::ofstream(source) << R"({"device_name": "X", "kernel_name": "k", "problem_size": 1,
"tune_params_keys": ["A", "B"], "tune_params": {"A": [9, 10, 3], "B": [10, 9, 15]}, "objective": "time",
"cache": {"9,10": {"A": 9, "B": 10, "time": 1.0}, "10,9": {"A": 10, "B": 9, "time": 1.1},
"3,15": {"A": 3, "B": 15, "time": 1.2}, "9,9": {"A": 9, "B": 9, "time": 2.0},
"10,10": {"A": 10, "B": 10, "time": 2.1}, "3,10": {"A": 3, "B": 10, "time": 3.0}}})";
  std::set<ConfigIndex> held;
  for (const auto& [runtime, c] : search::source_order(space, Recording::load(source))) held.insert(c);
  ASSERT_EQ(held.size(), 6u);
  std::size_t elsewhere = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    auto guided = make_searcher("guided", {.seed = seed, .model_path = grid_model(),
                                           .settings = {{"source", source.string()}, {"design_stop", "false"}}});
    guided->start(space);
    const std::vector<Proposal> design = guided->propose(8);
    ASSERT_EQ(design.size(), 3u);
    for (std::size_t i = 1; i < design.size(); ++i) elsewhere += held.contains(design[i].config) ? 0 : 1;
  }
  EXPECT_GT(elsewhere, 30u) << "of 40 design points, outside the 6 the source holds";
  std::filesystem::remove(source);
}

// A Kernel Tuner cache file of the grid's configurations with A up to a_max, each with the
// grid's runtime: a recording of a narrower space.
std::filesystem::path narrow_grid_source(int a_max, const std::string& name) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("steer_guided_" + name + "_" + std::to_string(getpid()) + ".json");
  std::ofstream out(file);
  out << R"({"device_name": "X", "kernel_name": "k", "problem_size": 1, "tune_params_keys": ["A", "B"], )"
      << R"("tune_params": {"A": [)";
  for (int a = 1; a <= a_max; ++a) out << (a > 1 ? ", " : "") << a;
  out << R"(], "B": [)";
  for (int b = 1; b <= 20; ++b) out << (b > 1 ? ", " : "") << b;
  out << R"(]}, "objective": "time", "cache": {)";
  for (int a = 1; a <= a_max; ++a) {
    for (int b = 1; b <= 20; ++b) {
      out << (a > 1 || b > 1 ? ", " : "") << '"' << a << ',' << b << R"(": {"A": )" << a << R"(, "B": )" << b
          << R"(, "time": )" << 1.0 + std::abs(a * b - 90.0) / 10.0 << '}';
    }
  }
  out << "}}";
  return file;
}

// A source that ran the values of under half the tuned configurations (source_coverage 0.5)
// ranks only its own slice: it stays a feature, but is no prior mean, and adds no candidates
// or design pool, as with source_prior 0. A source covering the space keeps its prior mean.
TEST(GuidedSearcher, ASourceOfANarrowerSpaceIsAFeatureOnly) {
  const Space space = grid_space();
  auto route = [&](const std::filesystem::path& source, std::map<std::string, std::string> settings) {
    settings.emplace("source", source.string());
    auto searcher = make_searcher("guided", {.seed = 3, .model_path = grid_model(), .settings = std::move(settings)});
    return drive(*searcher, space, 1, 25, [&](ConfigIndex c) { return grid_result(space, c); }).order;
  };
  const std::filesystem::path narrow = narrow_grid_source(8, "narrow_source");  // 160 of 400
  EXPECT_EQ(route(narrow, {}), route(narrow, {{"source_prior", "0"}}));
  EXPECT_NE(route(narrow, {}), route(narrow, {{"source_coverage", "0"}})) << "the rule changes the route";
  EXPECT_EQ(route(narrow, {{"source_coverage", "0.3"}}), route(narrow, {{"source_coverage", "0"}}))
      << "0.4 of the space covered: a prior mean under a threshold of 0.3";
  const std::filesystem::path wide = narrow_grid_source(12, "wide_source");  // 240 of 400
  EXPECT_EQ(route(wide, {}), route(wide, {{"source_coverage", "0"}}));
  std::filesystem::remove(narrow);
  std::filesystem::remove(wide);
}

// A runtime fastest where A * B = 300, which needs A of 15 or more on the grid.
double fastest_where_a_times_b_is_300(const Space& space, ConfigIndex c) {
  return 1.0 + std::abs(space.value(c, 0).as_double() * space.value(c, 1).as_double() - 300.0) / 10.0;
}

// A parameter the model cannot tell apart counts at full weight, as in `bayes`, not at the small
// weight of those whose effect the predicted counters carry. Here a tree model trained on A up
// to 10 predicts every larger A as 10, while the fastest configurations (A * B = 300) need A of
// 15 or more: only A's own feature leads there. Where the model covers every parameter, the
// setting changes nothing.
TEST(GuidedSearcher, WeighsAParameterTheModelCannotTellApartInFull) {
  const std::filesystem::path model =
      std::filesystem::temp_directory_path() / ("steer_guided_short_model_" + std::to_string(getpid()) + ".json");
  save_product_model(10, ModelKind::Tree, model);

  const auto runtime = fastest_where_a_times_b_is_300;
  std::vector<std::size_t> full, small;
  for (std::uint64_t seed = 1; seed <= 9; ++seed) {
    full.push_back(tests_to_fastest("guided", seed, model.string(), {}, runtime, 60));
    small.push_back(tests_to_fastest("guided", seed, model.string(), {{"unmodelled_weight", "-1"}}, runtime, 60));
  }
  std::sort(full.begin(), full.end());
  std::sort(small.begin(), small.end());
  EXPECT_LT(full[4], small[4]) << "median tests to the fastest, A at full weight against at 0.1";
  std::filesystem::remove(model);

  // On the grid the model was trained on, every parameter is modelled: the same route.
  const Space space = grid_space();
  auto route = [&](const std::map<std::string, std::string>& settings) {
    auto searcher = make_searcher("guided", {.seed = 4, .model_path = grid_model(), .settings = settings});
    return drive(*searcher, space, 1, 30, [&](ConfigIndex c) { return grid_result(space, c); }).order;
  };
  EXPECT_EQ(route({}), route({{"unmodelled_weight", "-1"}}));
}

// Where the model cannot tell the configurations apart along a parameter, only the
// measurements say how much that parameter matters: guided then fits a length scale per
// feature, as `surrogate` does (ard_unmodelled), from its 20th measurement on. Where the model
// covers every parameter its length scales stay as set.
TEST(GuidedSearcher, FitsLengthScalesWhereTheModelCannotTellAParameterApart) {
  const std::filesystem::path model =
      std::filesystem::temp_directory_path() / ("steer_guided_short_model_ard_" + std::to_string(getpid()) + ".json");
  save_product_model(10, ModelKind::Tree, model);
  const auto runtime = fastest_where_a_times_b_is_300;
  const Space space = grid_space();
  auto route = [&](const std::string& path, const std::string& ard) {
    auto searcher = make_searcher("guided", {.seed = 4, .model_path = path, .settings = {{"ard_unmodelled", ard}}});
    return drive(*searcher, space, 1, 40, [&](ConfigIndex c) {
             Result r = grid_result(space, c);
             r.time.median_ms = runtime(space, c);
             return r;
           }).order;
  };
  const std::vector<ConfigIndex> fitted = route(model.string(), "true"), fixed = route(model.string(), "false");
  EXPECT_EQ(std::vector<ConfigIndex>(fitted.begin(), fitted.begin() + 20),
            std::vector<ConfigIndex>(fixed.begin(), fixed.begin() + 20)) << "the same until the first fit";
  EXPECT_NE(fitted, fixed);
  EXPECT_EQ(route(grid_model(), "true"), route(grid_model(), "false")) << "every parameter modelled";
  std::filesystem::remove(model);
}

TEST(GuidedSearcher, NeedsAModel) {
  try {
    make_searcher("guided", SearcherOptions{});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--model"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace steer
