// Basin hopping (Kernel Tuner's basinhopping, which wraps scipy.optimize.basinhopping), over
// configurations instead of a continuous relaxation: hill climbing to a local minimum; the
// minimum replaces the current basin by the Metropolis rule at temperature T; the next climb
// starts from a random jump away from the current basin.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "search/local_search.hpp"

namespace steer {
namespace {

struct BasinHoppingOptions {
  search::ClimbOptions climb;
  double temperature = 1.0;    // Kernel Tuner's T
  std::uint64_t stepsize = 1;  // jump: each parameter moves up to this many values either way
};

class BasinHoppingSearcher final : public search::ClimbingSearcher {
 public:
  BasinHoppingSearcher(std::uint64_t seed, BasinHoppingOptions options)
      : ClimbingSearcher(seed, options.climb), options_(options) {}
  std::string name() const override { return "basin-hopping"; }

 private:
  std::optional<ConfigIndex> next_start(ConfigIndex minimum, double cost) override {
    if (!basin_ || accept(basin_cost_, cost)) {
      basin_ = minimum;
      basin_cost_ = cost;
    }
    return jump(*basin_);
  }
  void begin_search() override { basin_.reset(); }

  // Metropolis on the relative slowdown: runtimes are in milliseconds of any magnitude, so a
  // relative difference keeps T meaningful across kernels (as Kernel Tuner's annealing does).
  bool accept(double current, double candidate) {
    if (candidate <= current) return true;
    if (!std::isfinite(candidate)) return false;
    if (!std::isfinite(current)) return true;
    return random().unit() < std::exp(-(candidate - current) / current / options_.temperature);
  }

  // Every parameter's value index moves by a uniform step in [-stepsize, stepsize] (clamped
  // to its list), scipy's uniform displacement in value units; an invalid result is repaired
  // toward the basin.
  ConfigIndex jump(ConfigIndex from) {
    const ValueIndices anchor = space().value_indices(from);
    ValueIndices target = anchor;
    const auto& parameters = space().parameters();
    const auto span = static_cast<std::int64_t>(options_.stepsize);
    for (std::size_t p = 0; p < target.size(); ++p) {
      const auto last = static_cast<std::int64_t>(parameters[p].values.size()) - 1;
      const auto step =
          static_cast<std::int64_t>(random().below(static_cast<std::uint64_t>(2 * span + 1))) - span;
      target[p] = static_cast<std::uint32_t>(std::clamp<std::int64_t>(target[p] + step, 0, last));
    }
    return search::repair(space(), target, anchor, random());
  }

  BasinHoppingOptions options_;
  std::optional<ConfigIndex> basin_;
  double basin_cost_ = std::numeric_limits<double>::infinity();
};

}  // namespace

std::unique_ptr<Searcher> make_basin_hopping_searcher(const SearcherOptions& options) {
  search::Settings settings("basin-hopping", options.settings);
  BasinHoppingOptions basin;
  basin.climb = search::read_climb_options(settings);
  basin.temperature = settings.number("T", basin.temperature, 1e-9, 1e9);
  basin.stepsize = settings.integer("stepsize", basin.stepsize, 1, 1'000'000);
  settings.finish();
  return std::make_unique<BasinHoppingSearcher>(options.seed, basin);
}

}  // namespace steer
