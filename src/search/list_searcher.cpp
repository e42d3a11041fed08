// List search: the configurations of a file, in the file's order. For measuring chosen
// configurations again (say, every one within 1.2x of the best time, with energy this
// time) and for re-running a colleague's candidates.
#include <fmt/format.h>

#include <fstream>
#include <unordered_set>

#include "search/search_support.hpp"
#include "steer/error.hpp"
#include "steer/searcher.hpp"

namespace steer {
namespace {

std::string trimmed(const std::string& line) {
  auto first = line.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  auto last = line.find_last_not_of(" \t\r");
  return line.substr(first, last - first + 1);
}

class ListSearcher final : public Searcher {
 public:
  explicit ListSearcher(std::string path) : path_(std::move(path)) {}
  std::string name() const override { return "list"; }

  // Reads the whole file up front so a bad line fails the run before any test.
  void start(const Space& space) override {
    std::ifstream in(path_);
    if (!in) throw Error(fmt::format("list searcher: cannot read '{}'", path_));
    configs_.clear();
    next_ = 0;
    std::unordered_set<ConfigIndex> seen;
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      std::string text = trimmed(line);
      if (text.empty() || text.front() == '#') continue;
      ConfigIndex index = 0;
      try {
        index = space.index_of_key(text);
      } catch (const Error& e) {
        throw Error(fmt::format("list searcher: {}:{}: {}", path_, number, e.what()));
      }
      if (seen.insert(index).second) configs_.push_back(index);  // a repeat is tested once
    }
  }
  std::vector<Proposal> propose(std::size_t max) override {
    std::vector<Proposal> out;
    while (out.size() < max && next_ < configs_.size()) out.push_back({configs_[next_++], {}});
    return out;
  }
  void observe(const Result&) override {}

 private:
  std::string path_;
  std::vector<ConfigIndex> configs_;
  std::size_t next_ = 0;
};

}  // namespace

std::unique_ptr<Searcher> make_list_searcher(const SearcherOptions& options) {
  search::Settings settings("list", options.settings);
  std::string file = settings.text("file");
  settings.finish();
  if (file.empty()) {
    throw Error("searcher 'list': name the file of configurations with --set file=PATH (one NAME=VALUE,... per line)");
  }
  return std::make_unique<ListSearcher>(file);
}

}  // namespace steer
