// The registration table of searchers: one line per strategy.
#include <algorithm>
#include <fmt/format.h>

#include "steer/error.hpp"
#include "steer/searcher.hpp"

namespace steer {

std::unique_ptr<Searcher> make_exhaustive_searcher(const SearcherOptions&);
std::unique_ptr<Searcher> make_random_searcher(const SearcherOptions&);
std::unique_ptr<Searcher> make_basin_hopping_searcher(const SearcherOptions&);
std::unique_ptr<Searcher> make_annealing_searcher(const SearcherOptions&);
std::unique_ptr<Searcher> make_mls_searcher(const SearcherOptions&);
std::unique_ptr<Searcher> make_ils_searcher(const SearcherOptions&);
std::unique_ptr<Searcher> make_genetic_searcher(const SearcherOptions&);
std::unique_ptr<Searcher> make_starchart_searcher(const SearcherOptions&);
std::unique_ptr<Searcher> make_bayes_searcher(const SearcherOptions&);
std::unique_ptr<Searcher> make_surrogate_searcher(const SearcherOptions&);
std::unique_ptr<Searcher> make_guided_searcher(const SearcherOptions&);
std::unique_ptr<Searcher> make_transfer_searcher(const SearcherOptions&);
std::unique_ptr<Searcher> make_mcmc_searcher(const SearcherOptions&);
std::unique_ptr<Searcher> make_profile_based_searcher(const SearcherOptions&);
std::unique_ptr<Searcher> make_list_searcher(const SearcherOptions&);
std::unique_ptr<Searcher> make_default_searcher(const SearcherOptions&);

namespace {

struct Entry {
  const char* name;
  const char* description;
  std::unique_ptr<Searcher> (*make)(const SearcherOptions&);
};

constexpr Entry kSearchers[] = {
    {"default",
     "Steer's choice, by cross-validated performance score: guided with --model, else surrogate",
     make_default_searcher},
    {"exhaustive", "every configuration, in index order", make_exhaustive_searcher},
    {"random", "uniform random order without repeats", make_random_searcher},
    {"basin-hopping", "hill climbing, Metropolis-accepted minima, random jumps (Kernel Tuner)",
     make_basin_hopping_searcher},
    {"annealing", "simulated annealing over neighbours (Kernel Tuner)", make_annealing_searcher},
    {"mls", "greedy multi-start local search (Kernel Tuner)", make_mls_searcher},
    {"ils", "greedy iterated local search (Kernel Tuner)", make_ils_searcher},
    {"genetic", "genetic algorithm: ranked selection, crossover, mutation (Kernel Tuner)",
     make_genetic_searcher},
    {"starchart", "regression tree trained on random tests, then predicted-fastest first (Starchart)",
     make_starchart_searcher},
    {"bayes", "Bayesian optimisation: Gaussian process, expected improvement", make_bayes_searcher},
    {"surrogate",
     "Steer's model search: Bayesian optimisation of log runtime, fitted length scales, bred candidates",
     make_surrogate_searcher},
    {"guided", "counter-guided: Bayesian optimisation over a model's predicted counters (needs --model)",
     make_guided_searcher},
    {"transfer", "the fastest configurations of another GPU's or input's recording first (--set source=FILE)",
     make_transfer_searcher},
    {"mcmc", "Markov chain Monte Carlo over Hamming-2 neighbours with escapes (KTT)", make_mcmc_searcher},
    {"profile-based", "hardware counters, expert system and a counter model steer weighted random search (--model)",
     make_profile_based_searcher},
    {"list", "the configurations of a file, in its order (--set file=PATH, one NAME=VALUE,... per line)",
     make_list_searcher},
};

}  // namespace

std::unique_ptr<Searcher> make_searcher(const std::string& name, const SearcherOptions& options) {
  for (const Entry& entry : kSearchers) {
    if (name == entry.name) return entry.make(options);
  }
  std::vector<std::string> names;
  for (const Entry& entry : kSearchers) names.emplace_back(entry.name);
  throw Error(fmt::format("unknown searcher '{}'; known: {}", name, fmt::join(names, ", ")));
}

std::vector<SearcherInfo> searchers() {
  std::vector<SearcherInfo> out;
  for (const Entry& entry : kSearchers) out.push_back({entry.name, entry.description});
  return out;
}

}  // namespace steer
