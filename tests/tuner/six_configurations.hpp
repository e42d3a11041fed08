#pragma once
// The recording the replay tests tune over, the cost model that charges only what it
// recorded, and a searcher that proposes in a fixed order.
#include <string>
#include <vector>

#include "steer/recording.hpp"
#include "steer/searcher.hpp"
#include "steer/tuner.hpp"

namespace steer::testing_support {

// The recorded costs alone: the searchers' own measured computation is left out.
inline CostModel exact() {
  CostModel cost;
  cost.charge_searcher = false;
  return cost;
}

// X in {1, ..., 6}: X ms to run and 100 ms to compile each (or compile_ms(X)); X=4 failed
// to compile.
inline Recording six_configurations(double (*compile_ms)(int) = nullptr) {
  ImportedRecording imported;
  imported.device = "Recorded GPU";
  imported.kernel = "six";
  imported.parameters = {{"X", {1, 2, 3, 4, 5, 6}}};
  for (int x = 1; x <= 6; ++x) {
    Result result;
    result.configuration = {{"X", x}};
    result.compile_ms = compile_ms ? compile_ms(x) : 100;
    if (x == 4) {
      result.status = Status::CompileError;
      result.message = "error: too many registers";
    } else {
      result.status = Status::Ok;
      result.time = TimingStats::from_samples({static_cast<double>(x)});
    }
    imported.results.push_back(result);
  }
  return Recording::from_import(imported);
}

// Proposes the configurations from the last to the first; remembers what it was told.
class Descending final : public Searcher {
 public:
  std::string name() const override { return "descending"; }
  void start(const Space& space) override { next_ = space.size(); }
  std::vector<Proposal> propose(std::size_t max) override {
    std::vector<Proposal> out;
    while (out.size() < max && next_ > 0) out.push_back(Proposal{--next_, {}});
    return out;
  }
  void observe(const Result& result) override { observed.push_back(result.config_index); }
  void parallel(std::size_t n) override { devices = n; }

  std::vector<ConfigIndex> observed;
  std::size_t devices = 1;

 private:
  ConfigIndex next_ = 0;
};

// Proposes as Descending does, but one at a time, each once the one before it is observed;
// while one is pending it guesses the next ones in that order (Searcher::likely_next), or,
// with `guess_wrong`, always the configuration it will propose last.
class DescendingOneAtATime final : public Searcher {
 public:
  explicit DescendingOneAtATime(bool guess_wrong = false) : guess_wrong_(guess_wrong) {}
  std::string name() const override { return "descending, one at a time"; }
  void start(const Space& space) override { next_ = space.size(); }
  std::vector<Proposal> propose(std::size_t max) override {
    if (pending_ || max == 0 || next_ == 0) return {};
    pending_ = true;
    return {Proposal{--next_, {}}};
  }
  void observe(const Result& result) override {
    pending_ = false;
    observed.push_back(result.config_index);
  }
  std::vector<ConfigIndex> likely_next(std::size_t count) override {
    ++guesses_asked;
    if (!pending_) return {};
    if (guess_wrong_) return next_ > 0 ? std::vector<ConfigIndex>{0} : std::vector<ConfigIndex>{};
    std::vector<ConfigIndex> out;
    for (ConfigIndex c = next_; c > 0 && out.size() < count; --c) out.push_back(c - 1);
    return out;
  }
  void use_threads(std::size_t threads) override { threads_lent = threads; }

  std::vector<ConfigIndex> observed;
  std::size_t guesses_asked = 0;
  std::size_t threads_lent = 0;  // 0: use_threads was not called

 private:
  bool guess_wrong_;
  bool pending_ = false;
  ConfigIndex next_ = 0;
};

}  // namespace steer::testing_support
