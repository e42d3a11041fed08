// Greedy iterated local search (Kernel Tuner's greedy_ils): hill climbing to a local minimum,
// then a new climb from the minimum perturbed by a few random Hamming-1 moves; after
// `no_improvement` climbs in a row that did not beat the best minimum, a random restart.
#include <algorithm>
#include <limits>
#include <memory>

#include "search/local_search.hpp"

namespace steer {
namespace {

struct IlsOptions {
  search::ClimbOptions climb;
  std::uint64_t no_improvement = 50;  // Kernel Tuner's default
  double random_walk = 0.3;           // perturbation: this fraction of the parameters, at least 1
};

class IlsSearcher final : public search::ClimbingSearcher {
 public:
  IlsSearcher(std::uint64_t seed, IlsOptions options)
      : ClimbingSearcher(seed, options.climb), options_(options) {}
  std::string name() const override { return "ils"; }

 private:
  std::optional<ConfigIndex> next_start(ConfigIndex minimum, double cost) override {
    // Kernel Tuner compares with the first configuration's cost and never updates it; the
    // best minimum so far is what "no improvement" means.
    if (cost < best_cost_) {
      best_cost_ = cost;
      climbs_without_improvement_ = 0;
    } else if (++climbs_without_improvement_ >= options_.no_improvement) {
      climbs_without_improvement_ = 0;
      return std::nullopt;
    }
    const auto parameters = static_cast<double>(space().parameters().size());
    const auto moves =
        std::max<std::uint64_t>(1, static_cast<std::uint64_t>(options_.random_walk * parameters));
    return search::random_walk(space(), minimum, moves, random());
  }
  void begin_search() override {
    best_cost_ = std::numeric_limits<double>::infinity();
    climbs_without_improvement_ = 0;
  }

  IlsOptions options_;
  double best_cost_ = std::numeric_limits<double>::infinity();
  std::uint64_t climbs_without_improvement_ = 0;
};

}  // namespace

std::unique_ptr<Searcher> make_ils_searcher(const SearcherOptions& options) {
  search::Settings settings("ils", options.settings);
  IlsOptions ils;
  ils.climb = search::read_climb_options(settings);
  ils.no_improvement = settings.integer("no_improvement", ils.no_improvement, 1, 1'000'000);
  ils.random_walk = settings.number("random_walk", ils.random_walk, 0, 1);
  settings.finish();
  return std::make_unique<IlsSearcher>(options.seed, ils);
}

}  // namespace steer
