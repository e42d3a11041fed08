// Summary statistics of a configuration's timed launches.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "steer/result.hpp"

namespace steer {

TimingStats TimingStats::from_samples(std::vector<double> samples_ms) {
  TimingStats stats;
  stats.repetitions = static_cast<int>(samples_ms.size());
  if (samples_ms.empty()) return stats;

  const auto n = samples_ms.size();
  const auto [min, max] = std::minmax_element(samples_ms.begin(), samples_ms.end());
  stats.min_ms = *min;
  stats.max_ms = *max;
  stats.mean_ms = std::accumulate(samples_ms.begin(), samples_ms.end(), 0.0) / static_cast<double>(n);
  if (n > 1) {
    double squares = 0;
    for (double sample : samples_ms) squares += (sample - stats.mean_ms) * (sample - stats.mean_ms);
    stats.stddev_ms = std::sqrt(squares / static_cast<double>(n - 1));  // sample standard deviation
  }

  // The median on a sorted copy: samples_ms stays in launch order.
  std::vector<double> sorted = samples_ms;
  const auto middle = sorted.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(sorted.begin(), middle, sorted.end());
  stats.median_ms = *middle;
  if (n % 2 == 0) stats.median_ms = (stats.median_ms + *std::max_element(sorted.begin(), middle)) / 2;

  stats.samples_ms = std::move(samples_ms);
  return stats;
}

}  // namespace steer
