#pragma once
// Hill climbing over neighbouring configurations, shared by the searchers that differ only in
// where the next climb starts once one has reached a local minimum: a random configuration
// (mls), a perturbation of the minimum (ils), a Metropolis-judged jump (basin-hopping).
// Internal to src/search/.
#include <optional>
#include <vector>

#include "search/search_support.hpp"
#include "steer/searcher.hpp"

namespace steer::search {

struct ClimbOptions {
  Neighbourhood neighbourhood;    // Kernel Tuner's "neighbor": Hamming (default) or adjacent
  bool first_improvement = true;  // Kernel Tuner's "restart": move at the first better neighbour
};

// Reads the settings every climbing searcher shares (Kernel Tuner's names and defaults).
inline ClimbOptions read_climb_options(Settings& settings) {
  ClimbOptions options;
  const std::string hood = settings.choice("neighbor", "Hamming", {"Hamming", "adjacent"});
  options.neighbourhood.kind =
      hood == "Hamming" ? Neighbourhood::Kind::Hamming : Neighbourhood::Kind::Adjacent;
  options.first_improvement = settings.flag("restart", true);
  return options;
}

// The climb: from a start, test its untested neighbours in random order; with first
// improvement, one at a time and move as soon as one is faster; with best improvement, the
// whole neighbourhood (as many at once as the loop asks for) and then move to the fastest.
// Neighbours measured earlier are not tested again: their known cost decides at once.
class ClimbingSearcher : public Searcher {
 public:
  void start(const Space& space) final {
    space_ = &space;
    memory_.reset(space.size());
    centre_.reset();
    idle_climbs_ = 0;
    begin_search();
    start_ = memory_.random_unseen(space, random_);
  }

  std::vector<Proposal> propose(std::size_t max) final {
    std::vector<Proposal> out;
    while (out.size() < max) {
      std::optional<ConfigIndex> next = step();
      if (!next) break;
      memory_.propose(*next);
      idle_climbs_ = 0;
      out.push_back({*next, {}});
    }
    return out;
  }

  // On several devices a first-improvement climb tests as many neighbours at once as there
  // are devices and moves at the first one that beats the centre (a best-improvement climb
  // tests whole neighbourhoods at once anyway).
  void parallel(std::size_t devices) final { parallel_ = devices > 1; }

  // While a first-improvement climb waits for a neighbour, the neighbours it tests next if
  // that one is no better: the likeliest outcome, since most neighbours are.
  std::vector<ConfigIndex> likely_next(std::size_t count) final {
    if (!options_.first_improvement || parallel_ || !centre_ || memory_.pending() == 0) return {};
    std::vector<ConfigIndex> next;
    for (auto it = queue_.rbegin(); it != queue_.rend() && next.size() < count; ++it) next.push_back(*it);
    return next;
  }

  void observe(const Result& result) final {
    const double cost = memory_.observe(result);
    if (centre_ && cost < move_cost_) {
      move_ = result.config_index;
      move_cost_ = cost;
    }
  }

 protected:
  ClimbingSearcher(std::uint64_t seed, ClimbOptions options) : random_(seed), options_(options) {}

  // The climb from the last start ended in `minimum` with `cost` (infinite when it failed).
  // Returns where the next climb starts (a measured configuration is not tested again), or
  // nullopt for a random untested one.
  virtual std::optional<ConfigIndex> next_start(ConfigIndex minimum, double cost) = 0;
  // Forgets the state of the previous search (start() calls it).
  virtual void begin_search() = 0;

  const Space& space() const { return *space_; }
  Random& random() { return random_; }

 private:
  // Climbs that end without a test in a row before the next start is forced to an untested
  // configuration: a perturbation can keep landing in measured basins, and the search must
  // still progress to exhausting the space.
  static constexpr int kMaxIdleClimbs = 100;

  // The next configuration to test, or nullopt to wait for results (or when all are tested).
  std::optional<ConfigIndex> step() {
    for (;;) {
      if (!centre_) {
        if (!start_) return std::nullopt;
        if (memory_.measured(*start_)) {
          settle(*start_);
          continue;
        }
        if (memory_.seen(*start_)) return std::nullopt;
        return start_;
      }
      const bool waiting = memory_.pending() > 0;
      const bool moves_now = options_.first_improvement ? !waiting || parallel_ : queue_.empty() && !waiting;
      if (move_ && moves_now) {
        settle(*move_);
        continue;
      }
      if (!queue_.empty()) {
        if (options_.first_improvement && waiting && !parallel_) return std::nullopt;
        ConfigIndex next = queue_.back();
        queue_.pop_back();
        return next;
      }
      if (waiting) return std::nullopt;
      const ConfigIndex minimum = *centre_;
      centre_.reset();
      start_ = ++idle_climbs_ > kMaxIdleClimbs ? std::nullopt : next_start(minimum, centre_cost_);
      if (!start_) start_ = memory_.random_unseen(*space_, random_);
    }
  }

  // Makes the measured `centre` the point the climb is at and queues its untested neighbours.
  void settle(ConfigIndex centre) {
    centre_ = centre;
    centre_cost_ = memory_.cost(centre);
    move_.reset();
    move_cost_ = centre_cost_;
    queue_.clear();
    for (ConfigIndex n : space_->neighbours(centre, options_.neighbourhood)) {
      if (!memory_.seen(n)) {
        queue_.push_back(n);
      } else if (memory_.measured(n) && memory_.cost(n) < move_cost_) {
        move_ = n;
        move_cost_ = memory_.cost(n);
      }
    }
    random_.shuffle(queue_);
  }

  Random random_;
  ClimbOptions options_;
  const Space* space_ = nullptr;
  Memory memory_;
  std::optional<ConfigIndex> start_;   // where the next climb begins
  std::optional<ConfigIndex> centre_;  // where the climb is; unset between climbs
  double centre_cost_ = 0;
  std::vector<ConfigIndex> queue_;   // untested neighbours of the centre, tested from the back
  std::optional<ConfigIndex> move_;  // the fastest neighbour known to beat the centre
  double move_cost_ = 0;
  int idle_climbs_ = 0;
  bool parallel_ = false;  // several devices (parallel())
};

}  // namespace steer::search
