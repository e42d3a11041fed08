// Statistics of a recorded space for steer report: the runtime histogram and the
// time-energy Pareto front.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "steer/error.hpp"
#include "steer/eval.hpp"

namespace steer {

Histogram runtime_histogram(const std::vector<double>& values, std::optional<std::size_t> bins) {
  std::vector<double> finite;
  for (double v : values) {
    if (!std::isnan(v)) finite.push_back(v);
  }
  if (finite.empty()) throw Error("a histogram needs at least one runtime");
  const auto [min_it, max_it] = std::minmax_element(finite.begin(), finite.end());
  const double low = *min_it, high = *max_it;
  Histogram histogram;
  if (low == high) {
    histogram.edges = {low, high};
    histogram.counts = {finite.size()};
    return histogram;
  }
  std::size_t n = bins.value_or(std::clamp<std::size_t>(
      static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(finite.size())))), 5, 60));
  if (!bins) n = std::min(n, finite.size());
  if (n == 0) throw Error("a histogram needs at least one bin");
  histogram.logarithmic = low > 0 && high > 10 * low;
  // Position of a value on the binning axis, 0 at the minimum and 1 at the maximum.
  auto position = [&](double v) {
    return histogram.logarithmic ? std::log(v / low) / std::log(high / low) : (v - low) / (high - low);
  };
  histogram.edges.resize(n + 1);
  for (std::size_t b = 0; b <= n; ++b) {
    const double f = static_cast<double>(b) / static_cast<double>(n);
    histogram.edges[b] = histogram.logarithmic ? low * std::pow(high / low, f) : low + f * (high - low);
  }
  histogram.edges.front() = low;  // exact ends, whatever the rounding
  histogram.edges.back() = high;
  histogram.counts.assign(n, 0);
  for (double v : finite) {
    auto b = static_cast<std::size_t>(std::floor(position(v) * static_cast<double>(n)));
    b = std::min(b, n - 1);
    // Rounding must not put a value below its bin's lower edge or at/above its upper edge.
    while (b > 0 && v < histogram.edges[b]) --b;
    while (b + 1 < n && v >= histogram.edges[b + 1]) ++b;
    ++histogram.counts[b];
  }
  return histogram;
}

}  // namespace steer
