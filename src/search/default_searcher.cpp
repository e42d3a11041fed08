// Steer's default: the searcher, with settings, that scores the highest performance score P
// on spaces it was not chosen on (docs/searchers.md, "The default searcher"). With a counter
// model at hand (--model) that is the counter-guided searcher (`guided`); without one,
// `surrogate`. It takes the chosen searcher's settings.
#include <memory>

#include "steer/searcher.hpp"

namespace steer {

std::unique_ptr<Searcher> make_surrogate_searcher(const SearcherOptions&);
std::unique_ptr<Searcher> make_guided_searcher(const SearcherOptions&);

namespace {

// The chosen searcher under the name "default", so results and reports say what ran by name.
class DefaultSearcher final : public Searcher {
 public:
  explicit DefaultSearcher(std::unique_ptr<Searcher> chosen) : chosen_(std::move(chosen)) {}
  std::string name() const override { return "default"; }
  void start(const Space& space) override { chosen_->start(space); }
  std::vector<Proposal> propose(std::size_t max) override { return chosen_->propose(max); }
  void observe(const Result& result) override { chosen_->observe(result); }
  void parallel(std::size_t devices) override { chosen_->parallel(devices); }
  void use_threads(std::size_t threads) override { chosen_->use_threads(threads); }
  std::vector<ConfigIndex> likely_next(std::size_t count) override { return chosen_->likely_next(count); }
  std::vector<Explanation> take_explanations() override { return chosen_->take_explanations(); }

 private:
  std::unique_ptr<Searcher> chosen_;
};

}  // namespace

std::unique_ptr<Searcher> make_default_searcher(const SearcherOptions& options) {
  return std::make_unique<DefaultSearcher>(options.model_path.empty() ? make_surrogate_searcher(options)
                                                                      : make_guided_searcher(options));
}

}  // namespace steer
