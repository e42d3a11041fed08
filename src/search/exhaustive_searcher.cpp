// Exhaustive search: every configuration in index order.
#include "search/search_support.hpp"
#include "steer/searcher.hpp"

namespace steer {
namespace {

class ExhaustiveSearcher final : public Searcher {
 public:
  std::string name() const override { return "exhaustive"; }
  void start(const Space& space) override {
    size_ = space.size();
    next_ = 0;
  }
  std::vector<Proposal> propose(std::size_t max) override {
    std::vector<Proposal> out;
    while (out.size() < max && next_ < size_) out.push_back({next_++, {}});
    return out;
  }
  void observe(const Result&) override {}

 private:
  std::uint64_t size_ = 0;
  std::uint64_t next_ = 0;
};

}  // namespace

std::unique_ptr<Searcher> make_exhaustive_searcher(const SearcherOptions& options) {
  search::Settings("exhaustive", options.settings).finish();  // it has none: any is a mistake
  return std::make_unique<ExhaustiveSearcher>();
}

}  // namespace steer
