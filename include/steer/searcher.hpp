#pragma once
// Searchers choose what to test next. Every strategy is one file in src/search/ plus one
// registration line in src/search/searcher_registry.cpp.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "steer/result.hpp"
#include "steer/space.hpp"

namespace steer {

// A configuration to test and what to measure on it.
struct Proposal {
  ConfigIndex config = 0;
  MeasureRequest measure;  // plain timing unless the searcher asks for counters or energy
};

struct SearcherOptions {
  std::uint64_t seed = 1;
  std::string model_path;                       // for model-guided searchers
  std::map<std::string, std::string> settings;  // strategy hyper-parameters, NAME=VALUE
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
  // The outcome of a proposed configuration (in the order proposed).
  virtual void observe(const Result& result) = 0;
};

struct SearcherInfo {
  std::string name;
  std::string description;
};

// Throws Error listing the known searchers when `name` is unknown.
std::unique_ptr<Searcher> make_searcher(const std::string& name, const SearcherOptions& options);
std::vector<SearcherInfo> searchers();

}  // namespace steer
