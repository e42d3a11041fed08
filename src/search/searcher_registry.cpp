// The registration table of searchers: one line per strategy.
#include <algorithm>
#include <fmt/format.h>

#include "steer/error.hpp"
#include "steer/searcher.hpp"

namespace steer {

std::unique_ptr<Searcher> make_exhaustive_searcher(const SearcherOptions&);
std::unique_ptr<Searcher> make_random_searcher(const SearcherOptions&);

namespace {

struct Entry {
  const char* name;
  const char* description;
  std::unique_ptr<Searcher> (*make)(const SearcherOptions&);
};

constexpr Entry kSearchers[] = {
    {"exhaustive", "every configuration, in index order", make_exhaustive_searcher},
    {"random", "uniform random order without repeats", make_random_searcher},
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
