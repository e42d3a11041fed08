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
  const auto listed = [top](const std::vector<std::string>& names) {
    const std::size_t shown = std::min(top, names.size());
    std::string text = fmt::format("{}", fmt::join(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(shown), ", "));
    if (names.size() > shown) text += fmt::format(", {} more", names.size() - shown);
    return text;
  };
  const std::string_view action = e.reused ? "again around" : "profiled";
  if (!e.missing_inputs.empty()) {
    return fmt::format("{} {}: no analysis, neither measured nor predicted: {}", action, space.key(e.profiled),
                       listed(e.missing_inputs));
  }
  std::vector<std::string> next;
  for (ConfigIndex c : e.next) next.push_back(space.key(c));
  return fmt::format("{} {}: bottlenecks {}; asks {}{}; next {}{}{}", action, space.key(e.profiled),
                     named(e.bottlenecks, "{} {:.2f}"), named(e.changes, "{} {:+.2f}"),
                     e.predicted_inputs.empty() ? std::string() : "; predicted " + listed(e.predicted_inputs),
                     e.next.size(), e.next.empty() ? "" : ": ", fmt::join(next, " | "));
}

}  // namespace steer
