// Explanations of a searcher's choices, as one line for people (steer tune --explain, the
// trace of steer simulate).
#include <fmt/format.h>

#include <algorithm>

#include "steer/searcher.hpp"

namespace steer {

std::string describe(const Explanation& e, const Space& space, std::size_t top) {
  const auto named = [top](const std::vector<std::pair<std::string, double>>& values, const char* sign) {
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < std::min(top, values.size()); ++i) {
      parts.push_back(fmt::format(fmt::runtime(sign), values[i].first, values[i].second));
    }
    if (values.size() > top) parts.push_back(fmt::format("{} more", values.size() - top));
    return parts.empty() ? std::string("none") : fmt::format("{}", fmt::join(parts, ", "));
  };
  std::vector<std::string> next;
  for (ConfigIndex c : e.next) next.push_back(space.key(c));
  return fmt::format("{} {}: bottlenecks {}; asks {}; next {}{}{}", e.reused ? "again around" : "profiled",
                     space.key(e.profiled), named(e.bottlenecks, "{} {:.2f}"), named(e.changes, "{} {:+.2f}"),
                     e.next.size(), e.next.empty() ? "" : ": ", fmt::join(next, " | "));
}

}  // namespace steer
