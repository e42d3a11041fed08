// Kernel Tuner's initial design (samplingmethod=lhs), shared by the bayes and genetic
// searchers: a Latin hypercube of n points over the parameters' value indices.
#pragma once

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "search/search_support.hpp"
#include "steer/space.hpp"

namespace steer::search {

// For each parameter, [0, 1) is cut into n strata, taken in random order, a uniform point in
// each, scaled to the value list. Points that are invalid or drawn twice are dropped, as
// Kernel Tuner does, and random configurations make up the n (at most the space's size).
inline std::vector<ConfigIndex> latin_hypercube(const Space& space, std::uint64_t n, Random& random) {
  n = std::min<std::uint64_t>(n, space.size());
  const auto& parameters = space.parameters();
  std::vector<std::vector<std::uint32_t>> columns(parameters.size(), std::vector<std::uint32_t>(n));
  for (std::size_t p = 0; p < parameters.size(); ++p) {
    std::vector<std::uint64_t> strata(n);
    for (std::uint64_t i = 0; i < n; ++i) strata[i] = i;
    random.shuffle(strata);
    const std::uint64_t values = parameters[p].values.size();
    for (std::uint64_t i = 0; i < n; ++i) {
      const double x = (static_cast<double>(strata[i]) + random.unit()) / static_cast<double>(n);
      columns[p][i] = static_cast<std::uint32_t>(
          std::min<std::uint64_t>(values - 1, static_cast<std::uint64_t>(x * static_cast<double>(values))));
    }
  }
  std::vector<ConfigIndex> design;
  std::set<ConfigIndex> chosen;
  ValueIndices point(parameters.size());
  for (std::uint64_t i = 0; i < n; ++i) {
    for (std::size_t p = 0; p < parameters.size(); ++p) point[p] = columns[p][i];
    if (auto index = space.index_of(point); index && chosen.insert(*index).second) design.push_back(*index);
  }
  // A distinct sample of n + |design| holds at least n - |design| configurations not chosen yet.
  for (ConfigIndex c : space.sample(random.engine(), std::min<std::uint64_t>(space.size(), n + design.size()))) {
    if (design.size() == n) break;
    if (chosen.insert(c).second) design.push_back(c);
  }
  return design;
}

}  // namespace steer::search
