// Greedy multi-start local search (Kernel Tuner's greedy_mls): hill climbing from a random
// configuration to a local minimum, then again from another random configuration.
#include <memory>

#include "search/local_search.hpp"

namespace steer {
namespace {

class MlsSearcher final : public search::ClimbingSearcher {
 public:
  MlsSearcher(std::uint64_t seed, search::ClimbOptions options) : ClimbingSearcher(seed, options) {}
  std::string name() const override { return "mls"; }

 private:
  std::optional<ConfigIndex> next_start(ConfigIndex, double) override { return std::nullopt; }
  void begin_search() override {}
};

}  // namespace

std::unique_ptr<Searcher> make_mls_searcher(const SearcherOptions& options) {
  search::Settings settings("mls", options.settings);
  search::ClimbOptions climb = search::read_climb_options(settings);
  settings.finish();
  return std::make_unique<MlsSearcher>(options.seed, climb);
}

}  // namespace steer
