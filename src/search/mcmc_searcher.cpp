// Markov chain Monte Carlo search as KTT's McmcSearcher: a boot phase tests random
// configurations and takes the fastest as the origin; then each step tests a random untested
// configuration within Hamming distance 2 of the origin, which becomes the new origin when it
// is at least as fast, or by a random escape with small probability; an origin with no
// untested neighbour left is replaced by a random untested configuration.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "search/search_support.hpp"
#include "steer/searcher.hpp"

namespace steer {
namespace {

struct McmcOptions {
  std::uint64_t boot = 10;  // KTT's bootIterations
  int max_differences = 2;  // KTT's maximumDifferences: the neighbourhood's Hamming radius
  double escape = 0.02;     // KTT's escapeProbability
};

class McmcSearcher final : public Searcher {
 public:
  McmcSearcher(std::uint64_t seed, McmcOptions options) : random_(seed), options_(options) {}
  std::string name() const override { return "mcmc"; }

  void start(const Space& space) override {
    space_ = &space;
    memory_.reset(space.size());
    boot_left_ = options_.boot;
    origin_.reset();
    origin_cost_ = std::numeric_limits<double>::infinity();
  }

  // One test at a time on one device: each step depends on the previous result. On several
  // (parallel()), a step per free device from the same origin, each judged as it finishes.
  std::vector<Proposal> propose(std::size_t max) override {
    std::vector<Proposal> out;
    while (out.size() < max && memory_.pending() < devices_) {
      const std::optional<ConfigIndex> next = step();
      if (!next) break;
      memory_.propose(*next);
      out.push_back({*next, {}});
    }
    return out;
  }

  void parallel(std::size_t devices) override { devices_ = std::max<std::size_t>(1, devices); }

  void observe(const Result& result) override {
    const double cost = memory_.observe(result);
    if (boot_left_ > 0) {
      --boot_left_;
      if (!origin_ || cost <= origin_cost_) move(result.config_index, cost);
      return;
    }
    // An escape never moves onto a failed configuration: failures are never the origin
    // while a working one is known.
    if (!origin_ || cost <= origin_cost_ || (std::isfinite(cost) && random_.chance(options_.escape))) {
      move(result.config_index, cost);
    }
  }

 private:
  std::optional<ConfigIndex> step() {
    if (boot_left_ > 0 || !origin_) return memory_.random_unseen(*space_, random_);
    std::vector<ConfigIndex> untested;
    for (ConfigIndex c :
         space_->neighbours(*origin_, {Neighbourhood::Kind::Hamming, options_.max_differences})) {
      if (!memory_.seen(c)) untested.push_back(c);
    }
    if (!untested.empty()) return untested[random_.below(untested.size())];
    // A restart: the random configuration becomes the origin whatever its runtime, as KTT.
    origin_.reset();
    return memory_.random_unseen(*space_, random_);
  }

  void move(ConfigIndex config, double cost) {
    origin_ = config;
    origin_cost_ = cost;
  }

  search::Random random_;
  McmcOptions options_;
  const Space* space_ = nullptr;
  search::Memory memory_;
  std::uint64_t boot_left_ = 0;
  std::size_t devices_ = 1;  // tests at once (parallel())
  std::optional<ConfigIndex> origin_;
  double origin_cost_ = std::numeric_limits<double>::infinity();
};

}  // namespace

std::unique_ptr<Searcher> make_mcmc_searcher(const SearcherOptions& options) {
  search::Settings settings("mcmc", options.settings);
  McmcOptions mcmc;
  mcmc.boot = settings.integer("boot", mcmc.boot, 0, 1'000'000);
  mcmc.max_differences = static_cast<int>(
      settings.integer("max_differences", static_cast<std::uint64_t>(mcmc.max_differences), 1, 64));
  mcmc.escape = settings.number("escape", mcmc.escape, 0, 1);
  settings.finish();
  return std::make_unique<McmcSearcher>(options.seed, mcmc);
}

}  // namespace steer
