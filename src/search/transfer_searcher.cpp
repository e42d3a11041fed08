// Transfer search: the configurations a recording of the same kernel on another GPU or input
// found fastest, tested in that order, then the rest at random. The obvious use of an earlier
// tuning, and hard to beat between similar GPUs: the baseline a model-guided searcher must beat.
#include <memory>

#include "search/file_cache.hpp"
#include "search/search_support.hpp"
#include "search/source_recording.hpp"
#include "steer/error.hpp"
#include "steer/searcher.hpp"

namespace steer {
namespace {

class TransferSearcher final : public Searcher {
 public:
  TransferSearcher(std::uint64_t seed, std::shared_ptr<const search::SourceRuntimes> source)
      : random_(seed), source_(std::move(source)) {}
  std::string name() const override { return "transfer"; }

  void start(const Space& space) override {
    space_ = &space;
    memory_.reset(space.size());
    order_.clear();
    for (const auto& [runtime, c] : search::source_order(space, *source_)) order_.push_back(c);
    next_ = 0;
  }

  std::vector<Proposal> propose(std::size_t max) override {
    std::vector<Proposal> out;
    while (out.size() < max) {
      std::optional<ConfigIndex> c;
      while (!c && next_ < order_.size()) {
        if (!memory_.seen(order_[next_])) c = order_[next_];
        ++next_;
      }
      if (!c) c = memory_.random_unseen(*space_, random_);
      if (!c) break;
      memory_.propose(*c);
      out.push_back({*c, {}});
    }
    return out;
  }

  void observe(const Result& result) override { memory_.observe(result); }

 private:
  search::Random random_;
  std::shared_ptr<const search::SourceRuntimes> source_;
  const Space* space_ = nullptr;
  search::Memory memory_;
  std::vector<ConfigIndex> order_;
  std::size_t next_ = 0;
};

}  // namespace

std::unique_ptr<Searcher> make_transfer_searcher(const SearcherOptions& options) {
  search::Settings settings("transfer", options.settings);
  const std::string source = settings.text("source");
  settings.finish();
  if (!source.empty()) {
    return std::make_unique<TransferSearcher>(options.seed, search::load_source_runtimes_cached(source));
  }
  // A counter model carries the runtimes of its training recording: that recording is the source.
  if (auto from_model = search::model_source(options)) {
    return std::make_unique<TransferSearcher>(options.seed, std::move(from_model));
  }
  throw Error(
      "searcher 'transfer': name the recording to transfer from with --set transfer.source=FILE (a results "
      "store or any format steer import reads), or give a counter model (--model) trained on it, not on the "
      "recording replayed");
}

}  // namespace steer
