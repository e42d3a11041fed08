#pragma once
// Searchers choose what to test next. Every strategy is one file in src/search/ plus one
// registration line in src/search/searcher_registry.cpp.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "steer/result.hpp"
#include "steer/space.hpp"

namespace steer {

// A configuration to test and what to measure on it.
struct Proposal {
  ConfigIndex config = 0;
  MeasureRequest measure;  // plain timing unless the searcher asks for counters or energy
};

// Why a searcher chose what it did after a profiled test (steer tune --explain): the
// bottlenecks the expert system found in the test's counters, the counter changes it asked
// for (the reaction, each in [-1, 1], negative: decrease) and the configurations it then
// proposed because of them.
struct Explanation {
  ConfigIndex profiled = 0;
  bool reused = false;  // an earlier profile's analysis applied again, without a new test
  std::vector<std::pair<std::string, double>> bottlenecks;  // name -> [0, 1], > 0 only, largest first
  std::vector<std::pair<std::string, double>> changes;      // canonical counter -> change, largest |change| first
  std::vector<ConfigIndex> next;                            // in the order they will be proposed
  // Inputs of the analysis the profile did not give: the model's predictions stood in for
  // `predicted_inputs`; `missing_inputs`, neither measured nor predicted, left no analysis.
  std::vector<std::string> predicted_inputs;
  std::vector<std::string> missing_inputs;
};

// One line for people: "profiled X: bottlenecks shr_load 0.82, dram_read 0.41; asks SHR_LT
// -0.60, DRAM_RT -0.30; next 5: A | B | ...", with configurations as space.key() gives them
// and at most `top` bottlenecks and changes; "; predicted DRAM_RT, DRAM_WT" before "next"
// where the model stood in for inputs, or "profiled X: no analysis, neither measured nor
// predicted: INST_F32".
std::string describe(const Explanation& explanation, const Space& space, std::size_t top = 4);

struct SearcherOptions {
  std::uint64_t seed = 1;
  std::string model_path;                       // for model-guided searchers
  std::map<std::string, std::string> settings;  // strategy hyper-parameters, NAME=VALUE
  // What the run optimises (Objective::name()). Searchers rank by the results' scores
  // whatever it is; one that brings knowledge of its own (a source recording's runtimes)
  // may weigh it by the objective.
  std::string objective = "time";
  // Set by a replay (steer simulate) of measurements the model was trained on
  // (replays_training_measurements): the model's RecordedRuntimes::fingerprint. A searcher
  // does not transfer runtimes that carry it: they are the answers, not knowledge from
  // elsewhere.
  std::string replayed;
};

class Searcher {
 public:
  virtual ~Searcher() = default;
  virtual std::string name() const = 0;
  // Called once before the first proposal.
  virtual void start(const Space& space) = 0;
  // Up to `max` configurations the searcher commits to testing next, in order; the loop
  // may compile them ahead while earlier ones run. An empty answer while results are
  // pending means "wait for them"; with nothing pending it means the search is over.
  // Never proposes a configuration twice.
  virtual std::vector<Proposal> propose(std::size_t max) = 0;
  // The outcome of a proposed configuration: in the order proposed when tests run one at a
  // time, in the order they finish when several run at once (parallel()).
  virtual void observe(const Result& result) = 0;
  // Called before start() when the loop runs `devices` > 1 tests at once (several devices,
  // MPI ranks). A searcher that would wait for each result before its next step then
  // proposes while results are pending, by a batch rule of its own, so that no device idles;
  // one that proposes several configurations at a time anyway need not change. Never called
  // for one device: the sequential search stays as it is.
  virtual void parallel(std::size_t /*devices*/) {}
  // Called before start() by a run on a device (never by a replay, which charges the
  // searcher's time as one thread measures it): the searcher may spread its own computation
  // over up to `threads` threads, cores the loop leaves idle while it chooses. Must not
  // change what the searcher proposes.
  virtual void use_threads(std::size_t /*threads*/) {}
  // While results are pending: up to `count` configurations it expects to propose next, the
  // likeliest first, once they are in. Not proposals: the loop may compile them on compile
  // threads that would idle (TuneOptions::guesses), and tests only what is proposed. Must
  // not change what the searcher proposes. Empty: no guess (the default).
  virtual std::vector<ConfigIndex> likely_next(std::size_t /*count*/) { return {}; }
  // The explanations made since the last call, oldest first; searchers that never profile
  // have none.
  virtual std::vector<Explanation> take_explanations() { return {}; }
};

struct SearcherInfo {
  std::string name;
  std::string description;
};

// Throws Error listing the known searchers when `name` is unknown.
std::unique_ptr<Searcher> make_searcher(const std::string& name, const SearcherOptions& options);
std::vector<SearcherInfo> searchers();

}  // namespace steer
