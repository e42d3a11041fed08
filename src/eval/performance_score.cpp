// The performance score P of a searcher against the calculated random-search baseline
// (docs/simulate.md, "The performance score P").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "steer/error.hpp"
#include "steer/eval.hpp"

namespace steer {
namespace {

// Round half to even, as Python's round() and NumPy's: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2.
double round_half_even(double value) {
  const double floor = std::floor(value);
  const double fraction = value - floor;
  if (fraction > 0.5) return floor + 1;
  if (fraction < 0.5) return floor;
  return std::fmod(floor, 2.0) == 0 ? floor : floor + 1;
}

// Mean over runs of the best valid runtime found by each x (ascending), where position()
// places an improvement on the axis; a run without a valid test by x counts as `worst`.
template <typename Position>
std::vector<double> mean_best_found(const std::vector<std::vector<Improvement>>& runs, const std::vector<double>& xs,
                                    double worst, Position&& position) {
  std::vector<double> sums(xs.size(), 0);
  for (const std::vector<Improvement>& improvements : runs) {
    std::size_t step = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      while (step < improvements.size() && position(improvements[step]) <= xs[i]) ++step;
      sums[i] += step == 0 ? worst : improvements[step - 1].best_ms;
    }
  }
  for (double& sum : sums) sum /= static_cast<double>(runs.size());
  return sums;
}

double mean(const std::vector<double>& values) {
  double sum = 0;
  for (double value : values) sum += value;
  return values.empty() ? NAN : sum / static_cast<double>(values.size());
}

// `points` equidistant values from `first` to `last`, both included (one point: `first`).
std::vector<double> equidistant(double first, double last, std::size_t points) {
  std::vector<double> xs(points);
  for (std::size_t i = 0; i < points; ++i) {
    xs[i] = points == 1 ? first : first + (last - first) * static_cast<double>(i) / static_cast<double>(points - 1);
  }
  if (points > 1) xs.back() = last;  // exactly, whatever the rounding of the sum
  return xs;
}

}  // namespace

RandomSearchBaseline::RandomSearchBaseline(std::vector<double> valid_runtimes_ms)
    : worst_first_(std::move(valid_runtimes_ms)) {
  if (worst_first_.empty()) throw Error("the random-search baseline needs at least one valid runtime");
  for (double runtime : worst_first_) {
    if (!std::isfinite(runtime)) throw Error(fmt::format("the random-search baseline got the runtime {}", runtime));
  }
  std::sort(worst_first_.begin(), worst_first_.end(), std::greater<>());
}

RandomSearchBaseline RandomSearchBaseline::of(const Recording& recording) {
  std::vector<double> runtimes;
  runtimes.reserve(recording.valid_count());
  for (ConfigIndex config = 0; config < recording.space().size(); ++config) {
    if (recording.status(config) == Status::Ok && std::isfinite(recording.runtime_ms(config))) {
      runtimes.push_back(recording.runtime_ms(config));
    }
  }
  if (runtimes.empty()) {
    throw Error(fmt::format("the recording has no valid configuration ({} recorded, none with status ok)",
                            recording.present_count()));
  }
  return RandomSearchBaseline(std::move(runtimes));
}

std::size_t RandomSearchBaseline::index(std::uint64_t evaluations) const noexcept {
  const std::uint64_t n = worst_first_.size();
  // From M = N on the index is N - 1 (it is from M >= (N - 1) / 2), and M (N + 1) stays small.
  const std::uint64_t m = std::clamp<std::uint64_t>(evaluations, 1, n);
  // round(M (N + 1) / (M + 1)) half to even, in integers: quotient q, remainder r of M (N + 1) / (M + 1).
  const std::uint64_t numerator = m * (n + 1), denominator = m + 1;
  std::uint64_t rounded = numerator / denominator;
  const std::uint64_t twice_remainder = 2 * (numerator % denominator);
  if (twice_remainder > denominator || (twice_remainder == denominator && rounded % 2 == 1)) ++rounded;
  return static_cast<std::size_t>(std::min(n - 1, rounded));
}

std::uint64_t RandomSearchBaseline::evaluations_in(double seconds, double test_cost_s) noexcept {
  const double evaluations = round_half_even(seconds / test_cost_s);
  if (!(evaluations >= 1)) return 1;  // NaN too
  if (evaluations >= 1e18) return static_cast<std::uint64_t>(1e18);
  return static_cast<std::uint64_t>(evaluations);
}

std::uint64_t RandomSearchBaseline::evaluations_to_reach(double runtime) const {
  if (!(runtime >= optimum_ms())) {
    throw Error(fmt::format("no budget brings the random-search baseline to {} ms: the optimum is {} ms", runtime,
                            optimum_ms()));
  }
  // runtime_ms(M) never grows with M and is the optimum from M = N on: bisect [1, N].
  std::uint64_t low = 1, high = std::max<std::uint64_t>(worst_first_.size(), 1);
  while (low < high) {
    const std::uint64_t middle = low + (high - low) / 2;
    if (runtime_ms(middle) <= runtime) {
      high = middle;
    } else {
      low = middle + 1;
    }
  }
  return low;
}

double mean_test_cost_ms(const Recording& recording, const CostModel& cost) {
  double sum = 0;
  std::uint64_t tests = 0;
  for (ConfigIndex config = 0; config < recording.space().size(); ++config) {
    if (!recording.present(config) || recording.status(config) == Status::Skipped) continue;
    sum += test_cost_ms(recording, config, MeasureRequest{}, cost);
    ++tests;
  }
  return tests == 0 ? NAN : sum / static_cast<double>(tests);
}

double performance_score(double baseline_ms, double best_found_ms, double optimum_ms) noexcept {
  if (baseline_ms == optimum_ms) return 0;
  return (baseline_ms - best_found_ms) / (baseline_ms - optimum_ms);
}

ScoreCutoffs score_cutoffs(const RandomSearchBaseline& baseline, double test_cost_ms, double target,
                           std::size_t points) {
  ScoreCutoffs cutoffs;
  cutoffs.points = std::max<std::size_t>(points, 1);
  cutoffs.target = target;
  cutoffs.test_cost_ms = test_cost_ms;
  cutoffs.end_tests = baseline.evaluations_to_reach(target * baseline.optimum_ms());
  cutoffs.start_s = test_cost_ms / 1e3;
  cutoffs.end_s = static_cast<double>(cutoffs.end_tests) * test_cost_ms / 1e3;
  return cutoffs;
}

PerformanceScore score_runs(const RandomSearchBaseline& baseline, const ScoreCutoffs& cutoffs,
                            const std::vector<std::vector<Improvement>>& runs) {
  if (runs.empty()) throw Error("the performance score needs at least one run");
  const std::size_t points = std::max<std::size_t>(cutoffs.points, 1);
  const double optimum = baseline.optimum_ms();
  PerformanceScore score;

  // Tests: whole numbers of tests, equidistant between the cut-offs before rounding.
  score.fevals_x = equidistant(1, static_cast<double>(cutoffs.end_tests), points);
  for (double& x : score.fevals_x) x = round_half_even(x);
  const std::vector<double> found_by_test =
      mean_best_found(runs, score.fevals_x, baseline.worst_ms(),
                      [](const Improvement& step) { return static_cast<double>(step.test); });
  for (std::size_t i = 0; i < points; ++i) {
    const double base = baseline.runtime_ms(static_cast<std::uint64_t>(score.fevals_x[i]));
    score.fevals_curve.push_back(performance_score(base, found_by_test[i], optimum));
  }
  score.fevals = mean(score.fevals_curve);

  // Simulated seconds: the baseline after as many tests as the mean test cost fits in.
  score.time_x = equidistant(cutoffs.start_s, cutoffs.end_s, points);
  const std::vector<double> found_by_time =
      mean_best_found(runs, score.time_x, baseline.worst_ms(), [](const Improvement& step) { return step.time_s; });
  for (std::size_t i = 0; i < points; ++i) {
    const std::uint64_t evaluations = RandomSearchBaseline::evaluations_in(score.time_x[i], cutoffs.test_cost_ms / 1e3);
    score.time_curve.push_back(performance_score(baseline.runtime_ms(evaluations), found_by_time[i], optimum));
  }
  score.time = mean(score.time_curve);
  return score;
}

}  // namespace steer
