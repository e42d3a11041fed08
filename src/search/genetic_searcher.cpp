// A genetic algorithm (Kernel Tuner's genetic_algorithm): a population of configurations is
// tested, ranked by runtime, and replaced by children of parents drawn with a bias toward the
// fastest, through crossover of their value indices and occasional mutation to a Hamming-1
// neighbour. Children that break a constraint are repaired toward a parent. A population
// that has converged (its generations test nothing new) starts afresh from untested
// configurations, keeping the fastest so far.
//
// With screen = k > 1, each generation breeds k times the children it tests and keeps those
// that a model of the results so far (search/value_model.hpp) ranks most promising, tested
// in that order. Measured, it scores below the plain algorithm (docs/searchers.md): the
// model's main effects narrow the population.
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "search/latin_hypercube.hpp"
#include "search/search_support.hpp"
#include "search/value_model.hpp"
#include "steer/searcher.hpp"

namespace steer {
namespace {

enum class Crossover { Uniform, SinglePoint, TwoPoint, DisruptiveUniform };

struct GeneticOptions {
  // Kernel Tuner 1.5's maxiter, method and mutation_chance; popsize, beta, the Latin hypercube
  // and stall are Steer's (docs/searchers.md gives the measurements).
  std::uint64_t popsize = 20;  // shrunk to half the space for small spaces, as Kernel Tuner
  bool popsize_given = false;
  std::uint64_t maxiter = 90;  // generations before the population starts afresh
  Crossover method = Crossover::SinglePoint;
  std::uint64_t mutation_chance = 55;  // a child mutates with probability 1 / mutation_chance
  double beta = 6;                     // parents' rank: floor(Beta(1, beta) * size); Kernel Tuner 2.5
  bool latin_hypercube = true;         // fresh populations: Latin hypercube (true) or random
  std::uint64_t stall = 2;             // generations in a row that test nothing before starting afresh
  std::uint64_t screen = 1;            // children bred per child tested, ranked by the model (1: none)
  double kappa = 1.0;                  // the model's lower confidence bound: mean - kappa x sd
  double ridge = 1.0;                  // the model's prior precision per value
};

class GeneticSearcher final : public Searcher {
 public:
  GeneticSearcher(std::uint64_t seed, GeneticOptions options)
      : random_(seed), options_(options), model_(options.ridge) {}
  std::string name() const override { return "genetic"; }

  void start(const Space& space) override {
    space_ = &space;
    memory_.reset(space.size());
    const std::uint64_t size = space.size();
    // On more devices than a generation has members, a generation fills them all.
    const std::uint64_t popsize = options_.popsize_given ? options_.popsize : std::max(options_.popsize, devices_);
    population_size_ = options_.popsize_given ? std::min(size, popsize)
                                              : std::max<std::uint64_t>(1, std::min((size + 1) / 2, popsize));
    best_.reset();
    stalled_ = 0;
    if (options_.screen > 1) model_.start(space);
    fresh_population();
  }

  std::vector<Proposal> propose(std::size_t max) override {
    std::vector<Proposal> out;
    while (out.size() < max) {
      if (next_untested_ < population_.size()) {
        const ConfigIndex member = population_[next_untested_++];
        if (memory_.seen(member)) continue;
        memory_.propose(member);
        out.push_back({member, {}});
        continue;
      }
      // The whole generation must be measured before it can breed.
      if (memory_.pending() > 0 || memory_.exhausted()) break;
      if (++generation_ >= options_.maxiter) {
        fresh_population();
      } else {
        breed();
      }
    }
    return out;
  }

  void parallel(std::size_t devices) override { devices_ = devices; }

  void observe(const Result& result) override {
    const double cost = memory_.observe(result);
    if (!best_ || cost < best_->first) best_ = {cost, result.config_index};
    if (options_.screen > 1) model_.observe(result.config_index, cost);
  }

 private:
  // The first population, and a fresh one after maxiter generations or when the population
  // has converged: the fastest configuration so far (when there is one and the population has
  // room for more) and untested configurations, spread by a Latin hypercube (the initial design
  // of Kernel Tuner's bayes_opt) or drawn at random; hypercube points tested before are
  // replaced by random untested configurations.
  void fresh_population() {
    generation_ = 0;
    stalled_ = 0;
    population_.clear();
    if (best_ && population_size_ > 1) population_.push_back(best_->second);
    const std::uint64_t wanted = population_size_ - population_.size();
    std::set<ConfigIndex> chosen;
    for (ConfigIndex c : options_.latin_hypercube ? search::latin_hypercube(*space_, wanted, random_)
                                                  : space_->sample(random_.engine(), wanted)) {
      if (!memory_.seen(c) && chosen.insert(c).second) population_.push_back(c);
    }
    for (std::uint64_t attempt = 0; population_.size() < population_size_ && attempt < 4 * population_size_;
         ++attempt) {
      auto c = memory_.random_unseen(*space_, random_);
      if (!c) break;
      if (chosen.insert(*c).second) population_.push_back(*c);
    }
    next_untested_ = 0;
  }

  void breed() {
    std::vector<std::pair<double, ConfigIndex>> ranked;
    for (ConfigIndex member : population_) ranked.emplace_back(memory_.cost(member), member);
    std::sort(ranked.begin(), ranked.end());

    std::vector<ConfigIndex> children;
    // Small or converged populations can run out of new children; the attempts are bounded
    // and the rest of the generation is then left smaller.
    const std::uint64_t bred = population_size_ * options_.screen;
    for (std::uint64_t attempt = 0; children.size() < bred && attempt < 20 * bred; ++attempt) {
      auto [first, second] = pick_parents(ranked.size());
      const ValueIndices a = space_->value_indices(ranked[first].second);
      const ValueIndices b = space_->value_indices(ranked[second].second);
      const auto [one, two] = cross(a, b);
      for (ConfigIndex child :
           {search::repair(*space_, one, a, random_), search::repair(*space_, two, b, random_)}) {
        child = mutate(child);
        if (children.size() < bred && std::find(children.begin(), children.end(), child) == children.end()) {
          children.push_back(child);
        }
      }
    }
    if (options_.screen > 1) screen(children);
    // A generation that tests nothing new breeds again from its (measured) children; after
    // `stall` such generations in a row the population has converged and starts afresh.
    const bool all_seen =
        std::all_of(children.begin(), children.end(), [&](ConfigIndex c) { return memory_.seen(c); });
    stalled_ = all_seen ? stalled_ + 1 : 0;
    if (stalled_ >= options_.stall) {
      fresh_population();
      return;
    }
    population_ = std::move(children);
    next_untested_ = 0;
  }

  // Two distinct ranks (one when the population has one member), favouring the fastest:
  // rank = floor(Beta(1, beta) * size) as Kernel Tuner (its beta is 2.5); Beta(1, b) is
  // 1 - (1 - u)^(1/b).
  std::pair<std::size_t, std::size_t> pick_parents(std::size_t size) {
    auto draw = [&] {
      const double x = 1.0 - std::pow(1.0 - random_.unit(), 1.0 / options_.beta);
      return std::min(size - 1, static_cast<std::size_t>(x * static_cast<double>(size)));
    };
    const std::size_t first = draw();
    if (size == 1) return {first, first};
    std::size_t second = draw();
    while (second == first) second = draw();
    return {first, second};
  }

  std::pair<ValueIndices, ValueIndices> cross(const ValueIndices& a, const ValueIndices& b) {
    ValueIndices one = a;
    ValueIndices two = b;
    const std::size_t n = a.size();
    auto swap_range = [&](std::size_t from, std::size_t to) {
      for (std::size_t i = from; i < to; ++i) std::swap(one[i], two[i]);
    };
    switch (options_.method) {
      case Crossover::Uniform:
        for (std::size_t i = 0; i < n; ++i) {
          if (random_.chance(0.5)) std::swap(one[i], two[i]);
        }
        break;
      case Crossover::SinglePoint:
        swap_range(random_.below(n), n);
        break;
      case Crossover::TwoPoint: {
        // Kernel Tuner keeps the first and last gene out of the cut points from 5 genes on.
        const std::size_t low = n < 5 ? 0 : 1;
        const std::size_t high = n < 5 ? n : n - 1;
        if (high - low < 2) break;
        std::size_t p = low + random_.below(high - low);
        std::size_t q = low + random_.below(high - low - 1);
        if (q >= p) ++q;
        swap_range(std::min(p, q), std::max(p, q));
        break;
      }
      case Crossover::DisruptiveUniform: {
        // Children differ from both parents: half the differing genes (rounded up) swap.
        std::vector<std::size_t> differing;
        for (std::size_t i = 0; i < n; ++i) {
          if (a[i] != b[i]) differing.push_back(i);
        }
        random_.shuffle(differing);
        differing.resize((differing.size() + 1) / 2);
        for (std::size_t i : differing) std::swap(one[i], two[i]);
        break;
      }
    }
    return {std::move(one), std::move(two)};
  }

  // Keeps the population's worth of children the model ranks best, untested ones first, in
  // that order (measured ones only keep the population whole).
  void screen(std::vector<ConfigIndex>& children) {
    if (!model_.has_valid()) {
      if (children.size() > population_size_) children.resize(population_size_);
      return;
    }
    std::vector<std::pair<double, ConfigIndex>> ranked;
    for (ConfigIndex child : children) {
      const double bound = memory_.seen(child) ? std::numeric_limits<double>::infinity()
                                               : model_.lower_bound(child, options_.kappa);
      ranked.emplace_back(bound, child);
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    children.clear();
    for (std::size_t i = 0; i < ranked.size() && children.size() < population_size_; ++i) {
      children.push_back(ranked[i].second);
    }
  }

  ConfigIndex mutate(ConfigIndex child) {
    if (random_.below(options_.mutation_chance) != 0) return child;
    return search::random_walk(*space_, child, 1, random_);
  }

  search::Random random_;
  GeneticOptions options_;
  const Space* space_ = nullptr;
  search::Memory memory_;
  std::uint64_t population_size_ = 0;
  std::uint64_t devices_ = 1;  // tests at once (parallel())
  std::vector<ConfigIndex> population_;
  std::size_t next_untested_ = 0;  // members before this one have been proposed or skipped
  std::uint64_t generation_ = 0;
  std::uint64_t stalled_ = 0;                          // generations in a row that tested nothing
  std::optional<std::pair<double, ConfigIndex>> best_;  // the fastest measured so far
  search::ValueModel model_;                           // with screen > 1
};

}  // namespace

std::unique_ptr<Searcher> make_genetic_searcher(const SearcherOptions& options) {
  GeneticOptions genetic;
  search::Settings settings("genetic", options.settings);
  genetic.popsize_given = options.settings.contains("popsize");
  genetic.popsize = settings.integer("popsize", genetic.popsize, 2, 1'000'000);
  genetic.maxiter = settings.integer("maxiter", genetic.maxiter, 1, 1'000'000);
  const std::string method =
      settings.choice("method", "single_point", {"uniform", "single_point", "two_point", "disruptive_uniform"});
  genetic.method = method == "uniform"        ? Crossover::Uniform
                   : method == "single_point" ? Crossover::SinglePoint
                   : method == "two_point"    ? Crossover::TwoPoint
                                              : Crossover::DisruptiveUniform;
  genetic.mutation_chance = settings.integer("mutation_chance", genetic.mutation_chance, 1, 1'000'000);
  genetic.beta = settings.number("beta", genetic.beta, 1.0, 1000.0);
  genetic.latin_hypercube = settings.choice("samplingmethod", "lhs", {"lhs", "random"}) == "lhs";
  genetic.stall = settings.integer("stall", genetic.stall, 1, 1'000'000);
  genetic.screen = settings.integer("screen", genetic.screen, 1, 1000);
  genetic.kappa = settings.number("kappa", genetic.kappa, 0, 100);
  genetic.ridge = settings.number("ridge", genetic.ridge, 1e-6, 1e6);
  settings.finish();
  return std::make_unique<GeneticSearcher>(options.seed, genetic);
}

}  // namespace steer
