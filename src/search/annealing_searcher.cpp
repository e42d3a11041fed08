// Simulated annealing (Kernel Tuner's simulated_annealing, with Kernel Tuner 1.5's schedule):
// a random walk over neighbouring configurations that always moves to a faster one and to a
// slower one with probability exp(-relative slowdown / T); T cools geometrically with the
// number of tests from T to T_min, then the schedule starts again. A step moves to a random
// Hamming-1 neighbour with probability 0.7, else one value step in any number of parameters.
// After more than 100 steps in a row without a new test (only measured configurations drawn)
// the walk restarts from a random configuration.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <set>

#include "search/search_support.hpp"
#include "steer/searcher.hpp"

namespace steer {
namespace {

struct AnnealingOptions {
  // Kernel Tuner 1.5's schedule; the step is Steer's own (docs/searchers.md says why).
  double t_start = 0.1;          // Kernel Tuner's T
  double t_min = 0.0001;         // Kernel Tuner's T_min
  double alpha = 0.9975;         // cooling per test
  std::uint64_t maxiter = 1;     // moves per temperature step
  std::uint64_t max_fevals = 0;  // tests the schedule spans; 0: log(T_min)/log(alpha)
  double hamming_share = 0.7;    // steps to a Hamming neighbour; the others to an adjacent one
};

class AnnealingSearcher final : public Searcher {
 public:
  AnnealingSearcher(std::uint64_t seed, AnnealingOptions options) : random_(seed), options_(options) {
    schedule_length_ = std::ceil(std::log(options_.t_min) / std::log(options_.alpha));
    schedule_span_ = options_.max_fevals > 0 ? static_cast<double>(options_.max_fevals) : schedule_length_;
  }
  std::string name() const override { return "annealing"; }

  void start(const Space& space) override {
    space_ = &space;
    memory_.reset(space.size());
    position_.reset();
    candidates_.clear();
    tests_this_schedule_ = 0;
    steps_without_test_ = 0;
    moves_this_step_ = 0;
    temperature_ = options_.t_start;
  }

  // One test at a time on one device: the walk needs each result before it chooses the next
  // step. On several (parallel()), a step per free device from the same position, each
  // judged by the Metropolis rule as it finishes.
  std::vector<Proposal> propose(std::size_t max) override {
    std::vector<Proposal> out;
    while (out.size() < max && memory_.pending() < devices_) {
      std::optional<ConfigIndex> next = step();
      if (!next) break;
      memory_.propose(*next);
      candidates_.insert(*next);
      out.push_back({*next, {}});
    }
    return out;
  }

  void parallel(std::size_t devices) override { devices_ = std::max<std::size_t>(1, devices); }

  void observe(const Result& result) override {
    const double cost = memory_.observe(result);
    if (candidates_.erase(result.config_index) == 0) return;
    ++tests_this_schedule_;
    consider(result.config_index, cost);
  }

 private:
  // Draws neighbours until one is untested (moves to measured ones cost nothing and are
  // decided at once), or restarts from a random untested configuration when stuck.
  std::optional<ConfigIndex> step() {
    if (!position_) return memory_.random_unseen(*space_, random_);
    for (;;) {
      if (++steps_without_test_ > kMaxStepsWithoutTest) {
        steps_without_test_ = 0;
        position_.reset();
        return memory_.random_unseen(*space_, random_);
      }
      const std::optional<ConfigIndex> next = random_neighbour(*position_);
      if (!next) {
        position_.reset();
        return memory_.random_unseen(*space_, random_);
      }
      if (!memory_.seen(*next)) {
        steps_without_test_ = 0;
        return next;
      }
      if (memory_.measured(*next)) consider(*next, memory_.cost(*next));
    }
  }

  // The Metropolis decision on a measured configuration, then the temperature update.
  void consider(ConfigIndex config, double cost) {
    if (!position_ || accept(position_cost_, cost)) {
      position_ = config;
      position_cost_ = cost;
    }
    if (++moves_this_step_ < options_.maxiter) return;
    moves_this_step_ = 0;
    temperature_ = options_.t_start * std::pow(options_.alpha, schedule_length_ / schedule_span_ *
                                                                   static_cast<double>(tests_this_schedule_));
    if (temperature_ <= options_.t_min) {
      temperature_ = options_.t_start;
      tests_this_schedule_ = 0;
    }
  }

  // As Kernel Tuner: a failed position is always left, a failed candidate never taken, and a
  // slower one taken with probability exp(-relative slowdown / T).
  bool accept(double current, double candidate) {
    if (!std::isfinite(current)) return true;
    if (!std::isfinite(candidate)) return false;
    if (candidate < current) return true;
    return random_.unit() < std::exp(-(candidate - current) / current / temperature_);
  }

  // A random Hamming-1 neighbour with probability hamming_share, else a random neighbour one
  // value step away in any number of parameters (Kernel Tuner's "strictly-adjacent").
  std::optional<ConfigIndex> random_neighbour(ConfigIndex from) {
    Neighbourhood hood;
    if (!random_.chance(options_.hamming_share)) {
      hood.kind = Neighbourhood::Kind::Adjacent;
      hood.distance = static_cast<int>(space_->parameters().size());
    }
    std::vector<ConfigIndex> options = space_->neighbours(from, hood);
    if (options.empty()) return std::nullopt;
    return options[random_.below(options.size())];
  }

  static constexpr int kMaxStepsWithoutTest = 100;  // Kernel Tuner's "stuck" limit

  search::Random random_;
  AnnealingOptions options_;
  double schedule_length_ = 0;  // tests from T to T_min at the plain cooling rate
  double schedule_span_ = 0;    // tests the schedule is stretched over
  const Space* space_ = nullptr;
  search::Memory memory_;
  std::optional<ConfigIndex> position_;
  double position_cost_ = std::numeric_limits<double>::infinity();
  std::set<ConfigIndex> candidates_;  // the tests in flight
  std::size_t devices_ = 1;          // tests at once (parallel())
  double temperature_ = 1.0;
  std::uint64_t tests_this_schedule_ = 0;
  std::uint64_t moves_this_step_ = 0;
  int steps_without_test_ = 0;
};

}  // namespace

std::unique_ptr<Searcher> make_annealing_searcher(const SearcherOptions& options) {
  search::Settings settings("annealing", options.settings);
  AnnealingOptions annealing;
  annealing.t_start = settings.number("T", annealing.t_start, 1e-9, 1e9);
  annealing.t_min = settings.number("T_min", annealing.t_min, 1e-12, annealing.t_start);
  annealing.alpha = settings.number("alpha", annealing.alpha, 1e-6, 1 - 1e-9);
  annealing.maxiter = settings.integer("maxiter", annealing.maxiter, 1, 1'000'000);
  annealing.max_fevals = settings.integer("max_fevals", annealing.max_fevals, 0, 1'000'000'000);
  settings.finish();
  return std::make_unique<AnnealingSearcher>(options.seed, annealing);
}

}  // namespace steer
