// What another GPU's or input's recording says is fast is read by parameter name and value:
// source_order ranks the tuned space's configurations by the source's runtimes, and the
// transfer searcher tests them in that order before the rest, each once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "search/source_recording.hpp"
#include "steer/error.hpp"
#include "steer/model.hpp"
#include "steer/recording.hpp"
#include "steer/searcher.hpp"

namespace steer {
namespace {

using ::testing::HasSubstr;

const std::filesystem::path kData = STEER_DATA_DIR "/recordings";

Result recorded(std::vector<std::pair<std::string, Value>> configuration, double runtime_ms) {
  Result result;
  result.configuration = std::move(configuration);
  if (std::isnan(runtime_ms)) {
    result.status = Status::CompileError;
    result.message = "error";
  } else {
    result.status = Status::Ok;
    result.time = TimingStats::from_samples({runtime_ms});
  }
  return result;
}

// The tuned space: X in {1, 2, 4}, Y in {0, 1}, all 6 valid.
Space tuned_space() {
  SpaceDefinition def;
  def.add_parameter("X", std::vector<Value>{1, 2, 4});
  def.add_parameter("Y", std::vector<Value>{0, 1});
  return Space::build(def);
}

ConfigIndex at(const Space& space, int x, int y) {
  return space.index_of_key("X=" + std::to_string(x) + ",Y=" + std::to_string(y));
}

TEST(SourceOrder, RanksByTheSourceRuntimeMatchingParametersByName) {
  ImportedRecording source;
  source.parameters = {{"Y", {0, 1}}, {"X", {1, 2, 4}}};  // another order than the tuned space's
  source.results = {recorded({{"Y", 0}, {"X", 1}}, 3.0), recorded({{"Y", 1}, {"X", 4}}, 1.0),
                    recorded({{"Y", 0}, {"X", 2}}, NAN),  // failed: not ranked
                    recorded({{"Y", 1}, {"X", 2}}, 2.0)};
  const Space space = tuned_space();
  const auto order = search::source_order(space, Recording::from_import(source));
  ASSERT_EQ(order.size(), 3u);
  EXPECT_EQ(order[0].second, at(space, 4, 1));
  EXPECT_EQ(order[1].second, at(space, 2, 1));
  EXPECT_EQ(order[2].second, at(space, 1, 0));
  EXPECT_DOUBLE_EQ(order[0].first, 1.0);
}

TEST(SourceOrder, AParameterOnlyOneSideHasDoesNotMatter) {
  // The source lacks Y (every Y of a matching X ranks alike) and has Z (its fastest variant counts).
  ImportedRecording source;
  source.parameters = {{"X", {1, 2}}, {"Z", {0, 1}}};
  source.results = {recorded({{"X", 1}, {"Z", 0}}, 5.0), recorded({{"X", 1}, {"Z", 1}}, 0.5),
                    recorded({{"X", 2}, {"Z", 0}}, 1.0)};
  const Space space = tuned_space();
  const auto order = search::source_order(space, Recording::from_import(source));
  ASSERT_EQ(order.size(), 4u);  // X = 4 never ran in the source
  EXPECT_EQ((std::set<ConfigIndex>{order[0].second, order[1].second}),
            (std::set<ConfigIndex>{at(space, 1, 0), at(space, 1, 1)}));
  EXPECT_DOUBLE_EQ(order[0].first, 0.5);
  EXPECT_DOUBLE_EQ(order[2].first, 1.0);
}

// How much of the tuned space a source can rank: the configurations whose every shared
// parameter's value ran in the source. A narrower source covers its slice; a parameter only
// one side has does not matter; a value the source lists but never ran (or ran and failed)
// is not covered.
TEST(SourceCoverage, IsTheShareOfConfigurationsWhoseValuesAllRanInTheSource) {
  const Space space = tuned_space();
  ImportedRecording narrow;
  narrow.parameters = {{"X", {1, 2, 4}}, {"Y", {0, 1}}};
  narrow.results = {recorded({{"X", 1}, {"Y", 0}}, 1.0), recorded({{"X", 2}, {"Y", 1}}, 2.0),
                    recorded({{"X", 4}, {"Y", 0}}, NAN)};  // X = 4 failed: not covered
  EXPECT_DOUBLE_EQ(search::source_coverage(space, search::source_runtimes(Recording::from_import(narrow))), 4.0 / 6.0);

  ImportedRecording sparse;  // two of the six ran, between them every value
  sparse.parameters = {{"X", {1, 2, 4}}, {"Y", {0, 1}}};
  sparse.results = {recorded({{"X", 1}, {"Y", 0}}, 1.0), recorded({{"X", 2}, {"Y", 1}}, 2.0),
                    recorded({{"X", 4}, {"Y", 1}}, 3.0)};
  EXPECT_DOUBLE_EQ(search::source_coverage(space, search::source_runtimes(Recording::from_import(sparse))), 1.0);

  ImportedRecording other;  // lacks Y, has Z: only X counts
  other.parameters = {{"X", {1, 2}}, {"Z", {0, 1}}};
  other.results = {recorded({{"X", 1}, {"Z", 0}}, 1.0)};
  EXPECT_DOUBLE_EQ(search::source_coverage(space, search::source_runtimes(Recording::from_import(other))), 2.0 / 6.0);
}

TEST(SourceOrder, ASourceSharingNoParameterIsAnErrorNamingBothParameterLists) {
  ImportedRecording imported;
  imported.parameters = {{"W", {1}}};
  imported.results = {recorded({{"W", 1}}, 1.0)};
  search::SourceRuntimes source = search::source_runtimes(Recording::from_import(imported));
  source.origin = "'other.json'";
  try {
    search::source_order(tuned_space(), source);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("source recording 'other.json' shares no parameter"));
    EXPECT_THAT(e.what(), HasSubstr("its parameters: W; the space's: X, Y"));
  }
}

TEST(TransferSearcher, TestsTheSourcesFastestFirstThenEveryOtherConfigurationOnce) {
  // The KTT Coulomb sum on the GTX 1070 as the source for the RTX 2080 Ti (different spaces).
  const Recording tuned = Recording::load(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  const std::string source_file = (kData / "ktt/coulomb_gtx1070.ktt.json.gz").string();
  const Recording source = Recording::load(source_file);
  const Space& space = tuned.space();
  const auto order = search::source_order(space, source);
  ASSERT_GT(order.size(), 10u);

  auto searcher = make_searcher("transfer", SearcherOptions{.seed = 3, .settings = {{"source", source_file}}});
  searcher->start(space);
  std::vector<ConfigIndex> tested;
  for (;;) {
    const std::vector<Proposal> proposals = searcher->propose(4);
    if (proposals.empty()) break;
    for (const Proposal& p : proposals) {
      tested.push_back(p.config);
      searcher->observe(tuned.replay(p.config));
    }
  }
  for (std::size_t i = 0; i < 10; ++i) EXPECT_EQ(tested[i], order[i].second) << i;
  EXPECT_EQ(tested.size(), space.size());
  EXPECT_EQ(std::set<ConfigIndex>(tested.begin(), tested.end()).size(), space.size());
}

// A counter model carries the runtimes of the recording it was trained on: given a model and
// no file, transfer follows that recording, except in a replay of those very measurements.
TEST(TransferSearcher, TakesTheRecordingOfAModelAsItsSource) {
  const Recording tuned = Recording::load(kData / "ktt/coulomb_rtx2080.ktt.json.gz");
  const std::string source_file = (kData / "ktt/coulomb_gtx1070.ktt.json.gz").string();
  const Recording source = Recording::load(source_file);
  const std::filesystem::path model =
      std::filesystem::temp_directory_path() / ("steer_transfer_test_" + std::to_string(getpid()) + ".json");
  CounterModel::train(training_set(source, source_file), {.kind = ModelKind::Tree}).save(model);
  auto searcher = make_searcher("transfer", SearcherOptions{.seed = 3, .model_path = model.string()});
  searcher->start(tuned.space());
  const auto order = search::source_order(tuned.space(), source);
  const std::vector<Proposal> first = searcher->propose(5);
  ASSERT_EQ(first.size(), 5u);
  for (std::size_t i = 0; i < first.size(); ++i) EXPECT_EQ(first[i].config, order[i].second) << i;
  EXPECT_THROW(make_searcher("transfer", SearcherOptions{.seed = 3,
                                                         .model_path = model.string(),
                                                         .replayed = recorded_runtimes(source).fingerprint}),
               Error);
  std::filesystem::remove(model);
}

TEST(TransferSearcher, NeedsASource) {
  try {
    make_searcher("transfer", SearcherOptions{});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--set transfer.source=FILE"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace steer
