// Random search: a uniformly random order of the space, without repeats.
#include <unordered_map>

#include "search/search_support.hpp"
#include "steer/searcher.hpp"

namespace steer {
namespace {

// Draws a random permutation lazily (Fisher-Yates over a sparse map of swapped slots),
// so memory grows with the number of tests, not with the size of the space.
class RandomSearcher final : public Searcher {
 public:
  explicit RandomSearcher(std::uint64_t seed) : rng_(seed) {}
  std::string name() const override { return "random"; }
  void start(const Space& space) override {
    size_ = space.size();
    drawn_ = 0;
    swapped_.clear();
  }
  std::vector<Proposal> propose(std::size_t max) override {
    std::vector<Proposal> out;
    while (out.size() < max && drawn_ < size_) out.push_back({draw(), {}});
    return out;
  }
  void observe(const Result&) override {}

 private:
  std::uint64_t slot(std::uint64_t i) const {
    auto it = swapped_.find(i);
    return it == swapped_.end() ? i : it->second;
  }
  ConfigIndex draw() {
    // The project's written-out draw: the same seed gives the same order with any standard
    // library, so every "vs random" figure means the same everywhere.
    const std::uint64_t j = drawn_ + rng_.below(size_ - drawn_);
    ConfigIndex chosen = slot(j);
    swapped_[j] = slot(drawn_);
    swapped_.erase(drawn_);
    ++drawn_;
    return chosen;
  }

  search::Random rng_;
  std::uint64_t size_ = 0;
  std::uint64_t drawn_ = 0;
  std::unordered_map<std::uint64_t, std::uint64_t> swapped_;
};

}  // namespace

std::unique_ptr<Searcher> make_random_searcher(const SearcherOptions& options) {
  search::Settings("random", options.settings).finish();  // it has none: any is a mistake
  return std::make_unique<RandomSearcher>(options.seed);
}

}  // namespace steer
