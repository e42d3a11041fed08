// The profile-based searcher: eq. 12 and 13 on hand-computed cases, the weighted draw, and the
// searcher's contract (valid, never repeated, within the asked number, deterministic, counters
// asked for on profiled tests), on synthetic spaces and replayed recordings.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "search/profile_scoring.hpp"
#include "steer/eval.hpp"
#include "steer/expert.hpp"
#include "steer/model.hpp"
#include "steer/recording.hpp"
#include "steer/searcher.hpp"

namespace steer {
namespace {

using search::Normalisation;
using search::ReactionTerm;

const std::filesystem::path kData = STEER_DATA_DIR "/recordings";

// ---- eq. 12 -----------------------------------------------------------------------------

TEST(ProfileScoring, Eq12SumsTheWeightedRelativeChangeOfEachCounter) {
  // Two counters over four configurations; the profiled one is configuration 0.
  const std::vector<float> dram = {100, 50, 300, 100};
  const std::vector<float> f32 = {10, 30, 10, 0};
  const ReactionTerm terms[] = {{dram.data(), -0.8f}, {f32.data(), 0.5f}};
  std::vector<float> scores(4);
  search::score_configurations(terms, 0, scores);
  EXPECT_FLOAT_EQ(scores[0], 0) << "the profiled configuration changes nothing";
  // -0.8 * (50 - 100) / 150 + 0.5 * (30 - 10) / 40 = 0.26667 + 0.25
  EXPECT_FLOAT_EQ(scores[1], 0.8f * 50 / 150 + 0.5f * 20 / 40);
  // -0.8 * (300 - 100) / 400 + 0 = -0.4: more DRAM reads where fewer are wanted
  EXPECT_FLOAT_EQ(scores[2], -0.4f);
  // F32 predicted 0 for configuration 3: that counter is left out for it; DRAM unchanged
  EXPECT_FLOAT_EQ(scores[3], 0);
}

TEST(ProfileScoring, Eq12LeavesOutACounterPredictedZeroForTheProfiledConfiguration) {
  const std::vector<float> dram = {0, 50, 300};
  const std::vector<float> l2 = {10, 20, 5};
  const ReactionTerm terms[] = {{dram.data(), -1.0f}, {l2.data(), -1.0f}};
  std::vector<float> scores(3);
  search::score_configurations(terms, 0, scores);
  EXPECT_FLOAT_EQ(scores[1], -10.0f / 30);
  EXPECT_FLOAT_EQ(scores[2], 5.0f / 15);
}

TEST(ProfileScoring, Eq12CanCountOneSidedZerosAsKttDoes) {
  // Shared-memory loads, fewer wanted: configuration 2 uses no shared memory at all.
  const std::vector<float> shared = {100, 50, 0, 0};
  const std::vector<float> dram = {0, 10, 10, 0};  // more wanted; p has none
  const ReactionTerm terms[] = {{shared.data(), -0.6f}, {dram.data(), 0.5f}};
  std::vector<float> dropped(4), counted(4);
  search::score_configurations(terms, 0, dropped);
  search::score_configurations(terms, 0, counted, search::ZeroPredictions::Count);
  // Drop (the method): shared memory 0 scores nothing; DRAM, 0 at p, is left out for all.
  EXPECT_FLOAT_EQ(dropped[1], -0.6f * (50 - 100) / 150);
  EXPECT_FLOAT_EQ(dropped[2], 0);
  // Count: 100 -> 0 is the largest fall, -0.6 * (0 - 100) / 100 = 0.6; 0 -> 10 DRAM the
  // largest rise, +0.5; 0/0 still contributes nothing.
  EXPECT_FLOAT_EQ(counted[1], -0.6f * (50 - 100) / 150 + 0.5f);
  EXPECT_FLOAT_EQ(counted[2], 0.6f + 0.5f);
  EXPECT_FLOAT_EQ(counted[3], 0.6f);
  EXPECT_FLOAT_EQ(counted[0], 0) << "the profiled configuration still changes nothing";
}

TEST(ProfileScoring, ReactionTermsKeepNonZeroChangesOfPredictedCounters) {
  PredictedCounters predicted;
  predicted.counters = {"DRAM_RT", "L2_RT"};
  predicted.values = {{1, 2}, {3, 4}};
  predicted.configs = 2;
  CounterValues reaction = {{"DRAM_RT", -0.5}, {"L2_RT", 0}, {"TEX_RWT", -0.9}};
  std::vector<ReactionTerm> terms = search::reaction_terms(reaction, predicted);
  ASSERT_EQ(terms.size(), 1u) << "L2_RT asks for no change; TEX_RWT is not predicted";
  EXPECT_EQ(terms[0].predicted, predicted.values[0].data());
  EXPECT_FLOAT_EQ(terms[0].change, -0.5f);
}

// ---- eq. 13 -----------------------------------------------------------------------------

TEST(ProfileScoring, Eq13AmplifiesPositiveScoresAndDampsNegativeOnes) {
  const std::vector<float> scores = {0.5f, 0.25f, 0.0f, -0.1f, -0.2f, -0.25f, -1.0f};
  const std::vector<std::uint8_t> explored(scores.size(), 0);
  std::vector<float> weights(scores.size());
  const double total = search::normalise_scores(scores, explored, Normalisation{}, weights);
  EXPECT_FLOAT_EQ(weights[0], 256) << "(1 + 0.5/0.5)^8";
  EXPECT_FLOAT_EQ(weights[1], std::pow(1.5f, 8.0f)) << "(1 + 0.25/0.5)^8";
  EXPECT_FLOAT_EQ(weights[2], 1) << "(1 - 0/s_min)^8";
  EXPECT_FLOAT_EQ(weights[3], std::pow(0.9f, 8.0f)) << "(1 - (-0.1)/(-1))^8";
  EXPECT_FLOAT_EQ(weights[4], std::pow(0.8f, 8.0f));
  EXPECT_FLOAT_EQ(weights[5], 0.0001f) << "s <= gamma";
  EXPECT_FLOAT_EQ(weights[6], 0.0001f);
  double sum = 0;
  for (float w : weights) sum += w;
  EXPECT_NEAR(total, sum, 1e-9 * sum);
}

TEST(ProfileScoring, Eq13WhenEveryScoreIsNegative) {
  // No positive score: s_max is never used; the least negative weighs most.
  const std::vector<float> scores = {-0.05f, -0.1f, -0.2f};
  const std::vector<std::uint8_t> explored(3, 0);
  std::vector<float> weights(3);
  search::normalise_scores(scores, explored, Normalisation{}, weights);
  EXPECT_FLOAT_EQ(weights[0], std::pow(0.75f, 8.0f)) << "(1 - (-0.05)/(-0.2))^8";
  EXPECT_FLOAT_EQ(weights[1], std::pow(0.5f, 8.0f));
  EXPECT_FLOAT_EQ(weights[2], 0.0001f) << "max(0.0001, (1 - 1)^8)";
  EXPECT_GT(weights[0], weights[1]);
}

TEST(ProfileScoring, Eq13WhenEveryScoreIsZeroIsUniform) {
  // Zero predicted counters (or no reaction) give zero scores: plain random search.
  const std::vector<float> scores(5, 0.0f);
  const std::vector<std::uint8_t> explored = {0, 1, 0, 0, 1};
  std::vector<float> weights(5);
  EXPECT_DOUBLE_EQ(search::normalise_scores(scores, explored, Normalisation{}, weights), 3);
  EXPECT_EQ(weights, (std::vector<float>{1, 0, 1, 1, 0}));
}

TEST(ProfileScoring, Eq13GivesExploredConfigurationsNoWeightAndNothingWhenAllAreExplored) {
  const std::vector<float> scores = {0.5f, -0.1f, 0.2f};
  std::vector<float> weights(3);
  const std::vector<std::uint8_t> some = {1, 0, 0};
  search::normalise_scores(scores, some, Normalisation{}, weights);
  EXPECT_EQ(weights[0], 0);
  EXPECT_FLOAT_EQ(weights[2], 256) << "s_max over the unexplored: 0.2";
  const std::vector<std::uint8_t> all = {1, 1, 1};
  EXPECT_EQ(search::normalise_scores(scores, all, Normalisation{}, weights), 0);
  EXPECT_EQ(weights, (std::vector<float>{0, 0, 0}));
  search::Random random(1);
  EXPECT_TRUE(search::weighted_draws(weights, 0, 5, random).empty());
}

TEST(ProfileScoring, Eq13HyperParametersAreTheirs) {
  const std::vector<float> scores = {0.5f, -0.3f, -0.6f};
  const std::vector<std::uint8_t> explored(3, 0);
  std::vector<float> weights(3);
  search::normalise_scores(scores, explored, Normalisation{.gamma = -0.5, .exponent = 2, .min_weight = 0.01}, weights);
  EXPECT_FLOAT_EQ(weights[0], 4) << "(1 + 1)^2";
  EXPECT_FLOAT_EQ(weights[1], 0.25f) << "(1 - 0.3/0.6)^2, above the new gamma";
  EXPECT_FLOAT_EQ(weights[2], 0.01f);
}

TEST(ProfileScoring, WeightedDrawsAreWithoutReplacementAndFollowTheWeights) {
  std::vector<float> weights = {0, 1, 0, 3, 0.5f};
  search::Random random(7);
  std::vector<std::uint64_t> drawn = search::weighted_draws(weights, 4.5, 10, random);
  ASSERT_EQ(drawn.size(), 3u) << "only three configurations carry weight";
  EXPECT_EQ(std::set<std::uint64_t>(drawn.begin(), drawn.end()), (std::set<std::uint64_t>{1, 3, 4}));
  EXPECT_EQ(weights, (std::vector<float>{0, 0, 0, 0, 0}));

  // Frequencies of a single draw follow the weights.
  int heavy = 0;
  search::Random many(3);
  for (int i = 0; i < 20000; ++i) {
    std::vector<float> w = {1, 3};
    heavy += search::weighted_draws(w, 4, 1, many)[0] == 1;
  }
  EXPECT_NEAR(heavy / 20000.0, 0.75, 0.02);
}

// ---- the searcher -------------------------------------------------------------------------

// Model files of this test program, removed when it ends.
struct TempFiles {
  std::set<std::filesystem::path> files;
  ~TempFiles() {
    for (const auto& file : files) std::filesystem::remove(file);
  }
};

std::filesystem::path temp_model(const std::string& name) {
  static TempFiles written;
  auto file = std::filesystem::temp_directory_path() / ("steer_pbs_test_" + std::to_string(getpid()) + "_" + name);
  written.files.insert(file);
  return file;
}

// A model trained on a whole recording with counters.
std::string model_of(const std::string& recording_file, ModelKind kind) {
  const auto file = temp_model(recording_file + "." + to_string(kind) + ".json");
  if (!std::filesystem::exists(file)) {
    Recording recording = Recording::load(kData / "ktt" / recording_file);
    CounterModel::train(training_set(recording, recording_file), {.kind = kind}).save(file);
  }
  return file.string();
}

// A small space with a constraint and a model over it whose DRAM reads fall with X.
Space small_space() {
  SpaceDefinition def;
  def.add_parameter("X", std::vector<Value>{1, 2, 4, 8, 16});
  def.add_parameter("Y", std::vector<Value>{1, 2, 3});
  def.add_parameter("Z", std::vector<Value>{0, 1});
  def.add_constraint("X * Y <= 16 or Z == 1");
  return Space::build(def);
}

std::string small_model() {
  const auto file = temp_model("small.json");
  TrainingSet data;
  data.parameters = small_space().parameters();
  data.counters = {"DRAM_RT", "INST_F32", "threads"};
  for (double x : {1, 2, 4, 8, 16}) {
    for (double y : {1, 2, 3}) {
      for (double z : {0, 1}) {
        data.features.push_back({x, y, z});
        data.targets.push_back({1000 / x, 100 * y + z, 256 * x});
      }
    }
  }
  data.provenance.device = "NVIDIA H200";
  data.provenance.family = CounterFamily::VoltaPlus;
  data.provenance.device_facts = known_device_facts("NVIDIA H200");
  CounterModel::train(data, {.kind = ModelKind::Tree}).save(file);
  return file.string();
}

// Drives a searcher to the end of the space, answering every proposal at once.
struct Drained {
  std::vector<ConfigIndex> order;
  std::vector<bool> profiled;
};
Drained drain(Searcher& searcher, const Space& space, std::size_t batch) {
  searcher.start(space);
  Drained out;
  for (;;) {
    std::vector<Proposal> proposals = searcher.propose(batch);
    EXPECT_LE(proposals.size(), batch);
    if (proposals.empty()) break;
    for (const Proposal& p : proposals) {
      out.order.push_back(p.config);
      out.profiled.push_back(p.measure.counters);
      Result r;
      r.config_index = p.config;
      r.status = p.config % 5 == 3 ? Status::LaunchError : Status::Ok;
      r.time.median_ms = static_cast<double>(p.config % 7) + 1;
      searcher.observe(r);
    }
  }
  return out;
}

TEST(ProfileBasedSearcher, ProposesEveryValidConfigurationExactlyOnce) {
  Space space = small_space();
  const std::string model = small_model();
  for (std::size_t batch : {1u, 2u, 7u}) {
    auto searcher = make_searcher("profile-based", {.seed = 9, .model_path = model, .settings = {}});
    Drained drained = drain(*searcher, space, batch);
    EXPECT_EQ(std::set<ConfigIndex>(drained.order.begin(), drained.order.end()).size(), drained.order.size())
        << "no repeats";
    EXPECT_EQ(drained.order.size(), space.size()) << "nothing left out";
    for (ConfigIndex c : drained.order) EXPECT_LT(c, space.size());
    EXPECT_TRUE(drained.profiled.front()) << "Algorithm 1 starts by profiling";
  }
}

TEST(ProfileBasedSearcher, IsDeterministicUnderASeed) {
  Space space = small_space();
  const std::string model = small_model();
  auto a = make_searcher("profile-based", {.seed = 42, .model_path = model, .settings = {}});
  auto b = make_searcher("profile-based", {.seed = 42, .model_path = model, .settings = {}});
  auto c = make_searcher("profile-based", {.seed = 43, .model_path = model, .settings = {}});
  const std::vector<ConfigIndex> first = drain(*a, space, 2).order;
  EXPECT_EQ(first, drain(*b, space, 2).order);
  EXPECT_NE(first, drain(*c, space, 2).order);
}

TEST(ProfileBasedSearcher, NeverProposesMoreThanAskedAndWaitsForTheProfiledResult) {
  Space space = small_space();
  auto searcher = make_searcher("profile-based", {.seed = 1, .model_path = small_model(), .settings = {}});
  searcher->start(space);
  EXPECT_TRUE(searcher->propose(0).empty());
  std::vector<Proposal> first = searcher->propose(10);
  ASSERT_EQ(first.size(), 1u) << "the profiled test decides the next ones";
  EXPECT_TRUE(first[0].measure.counters);
  EXPECT_TRUE(searcher->propose(10).empty()) << "wait for its counters";
  Result r;
  r.config_index = first[0].config;
  r.status = Status::Ok;
  r.time.median_ms = 1;
  searcher->observe(r);
  std::vector<Proposal> batch = searcher->propose(3);
  EXPECT_EQ(batch.size(), 3u);
  for (const Proposal& p : batch) EXPECT_FALSE(p.measure.counters);
  EXPECT_EQ(searcher->propose(10).size(), 2u) << "n = 5 plain tests per profiled one";
}

TEST(ProfileBasedSearcher, ProfilesOneTestInNPlusOneOnARecording) {
  Recording recording = Recording::load(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  const std::string model = model_of("coulomb_rtx2080.ktt.json.gz", ModelKind::Tree);
  for (std::string n : {"5", "2"}) {
    auto searcher = make_searcher("profile-based", {.seed = 4, .model_path = model, .settings = {{"n", n}}});
    Drained drained = drain(*searcher, recording.space(), 4);
    std::size_t profiled = 0;
    for (bool p : drained.profiled) profiled += p;
    EXPECT_EQ(drained.order.size(), recording.space().size());
    EXPECT_GE(profiled, 1u);
    EXPECT_LE(profiled, drained.order.size() / (std::stoul(n) + 1) + 1) << "n = " << n;
  }
}

TEST(ProfileBasedSearcher, RespectsTheBudgetAndFindsTheTargetInSimulation) {
  Recording recording = Recording::load(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  const std::string model = model_of("coulomb_rtx2080.ktt.json.gz", ModelKind::Tree);
  auto searcher = make_searcher("profile-based", {.seed = 5, .model_path = model, .settings = {}});
  SimulationOptions options;
  options.budget = 7;
  options.target = 1.0;  // the optimum, so the budget is what stops it
  SimulatedRun run = simulate_run(recording, *searcher, options);
  EXPECT_LE(run.tested.size(), 7u);
  auto again = make_searcher("profile-based", {.seed = 5, .model_path = model, .settings = {}});
  EXPECT_EQ(simulate_run(recording, *again, options).tested, run.tested) << "deterministic";
}

TEST(ProfileBasedSearcher, SteersWithAModelFromAnotherGpuAndATimesOnlyRecording) {
  // pnpoly on the RTX 3090 was recorded without counters: the analysis falls back on the
  // model's predictions (trained on the RTX 2080 Ti's counters).
  Recording recording = Recording::load(kData / "ktt/pnpoly_rtx3090.ktt.json.gz");
  const std::string model = model_of("pnpoly_rtx2080ti.ktt.json.gz", ModelKind::Tree);
  auto searcher = make_searcher("profile-based", {.seed = 2, .model_path = model, .settings = {}});
  SimulationOptions options;
  options.budget = 400;
  SimulatedRun run = simulate_run(recording, *searcher, options);
  EXPECT_TRUE(run.tests_to_target.has_value());
  EXPECT_EQ(std::set<ConfigIndex>(run.tested.begin(), run.tested.end()).size(), run.tested.size());
}

TEST(ProfileBasedSearcher, SettingsAndMissingModelAreErrors) {
  const std::string model = small_model();
  EXPECT_THROW(make_searcher("profile-based", {.seed = 1, .model_path = {}, .settings = {}}), Error);
  EXPECT_THROW(make_searcher("profile-based", {.seed = 1, .model_path = model, .settings = {{"nn", "3"}}}), Error);
  EXPECT_THROW(make_searcher("profile-based", {.seed = 1, .model_path = model, .settings = {{"n", "0"}}}), Error);
  EXPECT_THROW(make_searcher("profile-based", {.seed = 1, .model_path = model, .settings = {{"sm_count", "10"}}}),
               Error)
      << "sm_count needs compute_capability";
  EXPECT_THROW(make_searcher("profile-based", {.seed = 1, .model_path = "/nonexistent/model.json", .settings = {}}),
               ModelError);
  EXPECT_NO_THROW(make_searcher("profile-based", {.seed = 1,
                                                  .model_path = model,
                                                  .settings = {{"n", "3"},
                                                               {"gamma", "-0.5"},
                                                               {"exponent", "4"},
                                                               {"min_weight", "0.001"},
                                                               {"inst_reaction", "0.6"},
                                                               {"compute_bound", "true"},
                                                               {"sm_count", "132"},
                                                               {"compute_capability", "9.0"}}}));
}

// A GPU not in the table of known GPUs is analysed all the same, without the parallelism
// bottleneck (it needs the GPU's FP32 cores); given the GPU's facts, with it.
TEST(ProfileBasedSearcher, AnUnknownGpuIsAnalysedWithoutTheParallelismBottleneck) {
  Space space = small_space();
  auto first_explanation = [&](const std::string& device, std::map<std::string, std::string> settings) {
    auto searcher = make_searcher("profile-based", {.seed = 1, .model_path = small_model(), .settings = settings});
    searcher->start(space);
    std::vector<Proposal> first = searcher->propose(1);
    EXPECT_TRUE(first.at(0).measure.counters) << "the first test is profiled";
    Result r;
    r.config_index = first[0].config;
    r.status = Status::Ok;
    r.time.median_ms = 1;
    r.device = device;
    for (std::string_view name : expert_input_counters()) r.counters[std::string(name)] = 50;  // canonical
    r.counters["DRAM_U"] = 9;
    r.counters["threads"] = 1000;  // far too few for any of these GPUs
    searcher->observe(r);
    std::vector<Explanation> made = searcher->take_explanations();
    EXPECT_EQ(made.size(), 1u);
    EXPECT_FALSE(searcher->propose(3).empty()) << "it goes on with the reaction";
    return made.empty() ? Explanation{} : made.front();
  };
  auto has = [](const Explanation& e, const std::string& bottleneck) {
    return std::ranges::any_of(e.bottlenecks, [&](const auto& b) { return b.first == bottleneck; });
  };
  EXPECT_TRUE(has(first_explanation("NVIDIA H200", {}), "parallelism"));
  const Explanation unknown = first_explanation("Some Future GPU", {});
  EXPECT_FALSE(has(unknown, "parallelism"));
  EXPECT_TRUE(has(unknown, "dram_read")) << "the other bottlenecks are found";
  EXPECT_TRUE(has(first_explanation("Some Future GPU", {{"sm_count", "132"}, {"compute_capability", "9.0"}}),
                  "parallelism"));
}

// A profiler that left out an input of the analysis (another counter set, a metric a GPU does
// not have) does not stop the tuning: the model's prediction stands in where it has one, and the
// explanation says so; an input neither measured nor predicted leaves that test unanalysed,
// said as much, and the search goes on.
TEST(ProfileBasedSearcher, InputsTheProfileLacksAreTheModelsPredictionsOrNoAnalysis) {
  Space space = small_space();
  auto first_explanation = [&](std::string_view dropped) {
    auto searcher = make_searcher("profile-based", {.seed = 1, .model_path = small_model(), .settings = {}});
    searcher->start(space);
    std::vector<Proposal> first = searcher->propose(1);
    Result r;
    r.config_index = first.at(0).config;
    r.status = Status::Ok;
    r.time.median_ms = 1;
    r.device = "NVIDIA H200";
    for (std::string_view name : expert_input_counters()) r.counters[std::string(name)] = 50;  // canonical
    r.counters["DRAM_U"] = 9;
    r.counters.erase(std::string(dropped));
    searcher->observe(r);
    std::vector<Explanation> made = searcher->take_explanations();
    EXPECT_FALSE(searcher->propose(3).empty()) << "it goes on";
    return made.size() == 1 ? made.front() : Explanation{};
  };
  const Explanation predicted = first_explanation("DRAM_RT");  // DRAM_WT is measured: no stand-in
  EXPECT_EQ(predicted.predicted_inputs, std::vector<std::string>{"DRAM_RT"});
  EXPECT_TRUE(predicted.missing_inputs.empty());
  EXPECT_FALSE(predicted.bottlenecks.empty());
  EXPECT_NE(describe(predicted, space).find("; predicted DRAM_RT; next"), std::string::npos) << describe(predicted, space);

  const Explanation unanalysed = first_explanation("INST_F64");  // the model does not predict it
  EXPECT_EQ(unanalysed.missing_inputs, std::vector<std::string>{"INST_F64"});
  EXPECT_TRUE(unanalysed.bottlenecks.empty());
  EXPECT_NE(describe(unanalysed, space).find("no analysis, neither measured nor predicted: INST_F64"), std::string::npos)
      << describe(unanalysed, space);

  const Explanation complete = first_explanation("nothing");
  EXPECT_TRUE(complete.predicted_inputs.empty() && complete.missing_inputs.empty());
}

}  // namespace
}  // namespace steer
