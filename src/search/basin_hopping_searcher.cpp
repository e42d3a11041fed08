// Basin hopping (Kernel Tuner's basinhopping, which wraps scipy.optimize.basinhopping), over
// configurations instead of a continuous relaxation: hill climbing to a local minimum; the
// minimum replaces the current basin by the Metropolis rule at temperature T; the next climb
// starts from a random jump away from the current basin.
#include <cmath>
#include <limits>
#include <memory>

#include "search/local_search.hpp"

namespace steer {
namespace {

struct BasinHoppingOptions {
  search::ClimbOptions climb;
  double temperature = 0.3;  // Kernel Tuner's T (1.0 there, on absolute differences)
  double stepsize = 1.0;     // scipy's stepsize, in value steps (Kernel Tuner's eps)
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

  // scipy's RandomDisplacement in value units (search::displace).
  ConfigIndex jump(ConfigIndex from) { return search::displace(space(), from, options_.stepsize, random()); }

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
  basin.stepsize = settings.number("stepsize", basin.stepsize, 0.5, 1'000'000);
  settings.finish();
  return std::make_unique<BasinHoppingSearcher>(options.seed, basin);
}

}  // namespace steer
