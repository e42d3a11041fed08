// The performance score P of a searcher against the calculated random-search baseline, as
// the methodology's package autotuning-methodology 1.1.0 computes it (docs/simulate.md,
// "The performance score P"; scripts/bench/methodology_cross_check.py checks the two agree).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>

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

// A decreasing isotonic regression (pool adjacent violators) through points (x, y), as
// scikit-learn's IsotonicRegression(increasing=False, out_of_bounds="clip"): equal x pooled
// first, each constant block kept as its first and last x, read by linear interpolation
// between them and clamped beyond the ends.
class DecreasingIsotonic {
 public:
  explicit DecreasingIsotonic(std::vector<std::pair<double, double>> points) {
    std::sort(points.begin(), points.end());
    struct Block {
      double sum, weight, first_x, last_x;
      double value() const { return sum / weight; }
    };
    std::vector<Block> blocks;
    for (std::size_t i = 0; i < points.size();) {
      Block block{0, 0, points[i].first, points[i].first};
      for (; i < points.size() && points[i].first == block.first_x; ++i) {
        block.sum += points[i].second;
        block.weight += 1;
      }
      blocks.push_back(block);
      while (blocks.size() > 1 && blocks[blocks.size() - 2].value() < blocks.back().value()) {
        Block last = blocks.back();
        blocks.pop_back();
        Block& into = blocks.back();
        into.sum += last.sum;
        into.weight += last.weight;
        into.last_x = last.last_x;
      }
    }
    for (const Block& block : blocks) {
      xs_.push_back(block.first_x);
      ys_.push_back(block.value());
      if (block.last_x != block.first_x) {
        xs_.push_back(block.last_x);
        ys_.push_back(block.value());
      }
    }
  }
  bool empty() const { return xs_.empty(); }
  double operator()(double x) const {
    if (x <= xs_.front()) return ys_.front();
    if (x >= xs_.back()) return ys_.back();
    const std::size_t k = static_cast<std::size_t>(std::upper_bound(xs_.begin(), xs_.end(), x) - xs_.begin());
    const double t = (x - xs_[k - 1]) / (xs_[k] - xs_[k - 1]);
    return ys_[k - 1] + t * (ys_[k] - ys_[k - 1]);
  }

 private:
  std::vector<double> xs_, ys_;
};

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double mean(const std::vector<double>& values) {
  double sum = 0;
  for (double value : values) sum += value;
  return values.empty() ? NAN : sum / static_cast<double>(values.size());
}

double standard_deviation(const std::vector<double>& values) {
  if (values.empty()) return NAN;
  const double centre = mean(values);
  double squares = 0;
  for (double value : values) squares += (value - centre) * (value - centre);
  return std::sqrt(squares / static_cast<double>(values.size()));
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

// The monotone piecewise-cubic interpolant (PCHIP, Fritsch-Carlson, with SciPy's end
// conditions) through (xs, ys), xs strictly ascending, evaluated at `at`; clamped to the ends.
class Pchip {
 public:
  Pchip(std::vector<double> xs, std::vector<double> ys) : xs_(std::move(xs)), ys_(std::move(ys)), d_(xs_.size(), 0) {
    const std::size_t n = xs_.size();
    if (n < 2) return;
    std::vector<double> h(n - 1), delta(n - 1);
    for (std::size_t k = 0; k + 1 < n; ++k) {
      h[k] = xs_[k + 1] - xs_[k];
      delta[k] = (ys_[k + 1] - ys_[k]) / h[k];
    }
    if (n == 2) {
      d_[0] = d_[1] = delta[0];
      return;
    }
    for (std::size_t k = 1; k + 1 < n; ++k) {
      if (delta[k - 1] == 0 || delta[k] == 0 || std::signbit(delta[k - 1]) != std::signbit(delta[k])) continue;
      const double w1 = 2 * h[k] + h[k - 1], w2 = h[k] + 2 * h[k - 1];
      d_[k] = (w1 + w2) / (w1 / delta[k - 1] + w2 / delta[k]);
    }
    d_[0] = edge(h[0], h[1], delta[0], delta[1]);
    d_[n - 1] = edge(h[n - 2], h[n - 3], delta[n - 2], delta[n - 3]);
  }

  double operator()(double x) const {
    if (xs_.size() == 1 || x <= xs_.front()) return ys_.front();
    if (x >= xs_.back()) return ys_.back();
    const std::size_t k = static_cast<std::size_t>(std::upper_bound(xs_.begin(), xs_.end(), x) - xs_.begin()) - 1;
    const double h = xs_[k + 1] - xs_[k], t = (x - xs_[k]) / h;
    const double t2 = t * t, t3 = t2 * t;
    return (2 * t3 - 3 * t2 + 1) * ys_[k] + (t3 - 2 * t2 + t) * h * d_[k] + (-2 * t3 + 3 * t2) * ys_[k + 1] +
           (t3 - t2) * h * d_[k + 1];
  }

 private:
  static double edge(double h0, double h1, double m0, double m1) {
    double d = ((2 * h0 + h1) * m0 - h0 * m1) / (h0 + h1);
    const auto sign = [](double v) { return (v > 0) - (v < 0); };
    if (sign(d) != sign(m0)) return 0;
    if (sign(m0) != sign(m1) && std::abs(d) > 3 * std::abs(m0)) return 3 * m0;
    return d;
  }
  std::vector<double> xs_, ys_, d_;
};

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

double RandomSearchBaseline::median_ms() const noexcept {
  const std::size_t n = worst_first_.size();
  return n % 2 == 1 ? worst_first_[n / 2] : (worst_first_[n / 2 - 1] + worst_first_[n / 2]) / 2;
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

std::uint64_t RandomSearchBaseline::cutoff_tests(double percentile) const {
  const double optimum = optimum_ms();
  const double threshold = optimum + (median_ms() - optimum) * (1 - percentile);
  std::size_t i = 0;
  while (i < worst_first_.size() && worst_first_[i] > threshold) ++i;
  if (i == worst_first_.size()) i = worst_first_.size() - 1;  // rounding: the optimum is always within
  if (percentile != 1.0 && worst_first_[i] == optimum) {
    if (i == 0) {
      throw Error(fmt::format("every valid configuration runs in the optimum {} ms: there is nothing to search for",
                              optimum));
    }
    --i;
  }
  const std::uint64_t n = worst_first_.size();
  return (static_cast<std::uint64_t>(i) + (n - i)) / (n + 1 - i);  // ceil(i / (N + 1 - i))
}

std::size_t RandomSearchBaseline::best_first_rank(double runtime_ms) const noexcept {
  // The number of valid runtimes strictly faster than it.
  const auto faster = std::upper_bound(worst_first_.begin(), worst_first_.end(), runtime_ms,
                                       [](double value, double element) { return value > element; });
  return static_cast<std::size_t>(worst_first_.end() - faster);
}

SpaceTestCosts space_test_costs(const Recording& recording, const CostModel& cost, const MeasureRequest& measured) {
  SpaceTestCosts costs;
  costs.recorded = RecordedCosts::of(recording);
  std::vector<double> valid, failed;
  for (ConfigIndex config = 0; config < recording.space().size(); ++config) {
    if (!recording.present(config) || recording.status(config) == Status::Skipped) continue;
    const double ms = test_cost_ms(recording, config, measured, cost, costs.recorded);
    (recording.status(config) == Status::Ok ? valid : failed).push_back(ms);
  }
  const double tests = static_cast<double>(valid.size() + failed.size());
  if (tests == 0) return {NAN, NAN, costs.recorded};
  costs.per_test_ms = (valid.empty() ? 0 : mean(valid)) +
                      (failed.empty() ? 0 : static_cast<double>(failed.size()) / tests * mean(failed));
  std::vector<double> all = valid;
  all.insert(all.end(), failed.begin(), failed.end());
  costs.median_ms = median_of(std::move(all));
  return costs;
}

double performance_score(double baseline_ms, double best_found_ms, double optimum_ms) noexcept {
  if (baseline_ms == optimum_ms) return 0;
  return (baseline_ms - best_found_ms) / (baseline_ms - optimum_ms);
}

ScoreCutoffs score_cutoffs(const RandomSearchBaseline& baseline, const SpaceTestCosts& costs,
                           const ScoreSettings& settings) {
  if (!(costs.per_test_ms > 0) || !(costs.median_ms > 0)) {
    throw Error("the performance score's time axis needs tests that cost time: the recording holds no costs");
  }
  ScoreCutoffs cutoffs;
  cutoffs.settings = settings;
  cutoffs.settings.time_points = std::max<std::size_t>(settings.time_points, 2);
  cutoffs.settings.max_test_points = std::max<std::size_t>(settings.max_test_points, 2);
  cutoffs.test_cost_ms = costs.per_test_ms;
  cutoffs.median_test_cost_ms = costs.median_ms;
  std::uint64_t start = baseline.cutoff_tests(settings.start_percentile);
  std::uint64_t end = baseline.cutoff_tests(settings.end_percentile);
  // At least two tests apart (the package's margin; it bounds the end by the space, N).
  if (end < start + 2) {
    if (start == 0) {
      end = end + 2;
    } else {
      end = end + 1;
      start = start - 1;
    }
  }
  cutoffs.start_tests = start;  // 0: the test axis starts before the first test
  cutoffs.end_tests = end;
  cutoffs.start_s = settings.start_percentile > 0 ? static_cast<double>(start) * costs.median_ms / 1e3 : 0;
  cutoffs.end_s = static_cast<double>(end) * costs.median_ms / 1e3;
  return cutoffs;
}

RunTrace trace_of(const std::vector<double>& end_s, const std::vector<Improvement>& improvements) {
  RunTrace trace;
  trace.end_s = end_s;
  trace.best_ms.assign(end_s.size(), NAN);
  std::size_t step = 0;
  double best = NAN;
  for (std::size_t t = 0; t < end_s.size(); ++t) {
    while (step < improvements.size() && improvements[step].test <= t + 1) best = improvements[step++].best_ms;
    trace.best_ms[t] = best;
  }
  return trace;
}

PerformanceScore score_runs(const RandomSearchBaseline& baseline, const ScoreCutoffs& cutoffs,
                            const std::vector<RunTrace>& runs) {
  if (runs.empty()) throw Error("the performance score needs at least one run");
  const double optimum = baseline.optimum_ms();
  const double worst_rank = static_cast<double>(baseline.size() - 1);
  auto rank = [&](double best_ms) {
    return std::isnan(best_ms) ? NAN : static_cast<double>(baseline.best_first_rank(best_ms));
  };
  auto found = [&](double rank_estimate) {
    return baseline.runtime_at_rank(static_cast<std::size_t>(std::clamp(round_half_even(rank_estimate), 0.0, worst_rank)));
  };
  PerformanceScore score;

  // Tests: every whole number between the cut-offs (equidistant and rounded when too many);
  // at each, the mean rank over the runs that are at least as long as the median run, each
  // run's length counted up to the end cut-off, as the package counts it: runs that go on
  // past the cut-off all count, however far past. (The package's plot over tests takes the
  // median over runs, which puts random search well above its own baseline, the expected
  // rank; the mean puts it at 0.)
  const std::uint64_t first = cutoffs.start_tests, last = cutoffs.end_tests;
  if (last - first + 1 <= cutoffs.settings.max_test_points) {
    for (std::uint64_t m = first; m <= last; ++m) score.fevals_x.push_back(static_cast<double>(m));
  } else {
    for (double x : equidistant(static_cast<double>(first), static_cast<double>(last), cutoffs.settings.max_test_points)) {
      score.fevals_x.push_back(round_half_even(x));
    }
  }
  std::vector<double> lengths;
  auto counted_length = [&](const RunTrace& run) { return std::min<std::size_t>(run.end_s.size(), last); };
  for (const RunTrace& run : runs) lengths.push_back(static_cast<double>(counted_length(run)));
  const auto kept_length = static_cast<std::size_t>(std::floor(median_of(lengths)));
  double held = worst_rank;
  for (double x : score.fevals_x) {
    const std::size_t m = static_cast<std::size_t>(x);
    double estimate = held;
    if (m >= 1 && m <= kept_length) {
      std::vector<double> ranks;
      for (const RunTrace& run : runs) {
        if (counted_length(run) < kept_length) continue;
        const double r = rank(run.best_ms[m - 1]);
        if (!std::isnan(r)) ranks.push_back(r);
      }
      estimate = ranks.empty() ? worst_rank : mean(ranks);
      held = estimate;
    } else if (m == 0) {
      estimate = worst_rank;
    }
    const double base = baseline.runtime_ms(static_cast<std::uint64_t>(x));
    score.fevals_curve.push_back(performance_score(base, found(estimate), optimum));
  }
  score.fevals = mean(score.fevals_curve);

  // Simulated seconds: the isotonic regression through the pooled points within the
  // cut-offs (with a margin), held from the first point after the stop: the first run end
  // later than the median run end.
  const std::size_t points = cutoffs.settings.time_points;
  score.time_x = equidistant(cutoffs.start_s, cutoffs.end_s, points);
  std::size_t rows = 0;
  std::vector<double> run_ends;
  for (const RunTrace& run : runs) {
    rows = std::max(rows, run.end_s.size());
    for (std::size_t t = run.end_s.size(); t-- > 0;) {
      if (!std::isnan(run.best_ms[t])) {
        run_ends.push_back(run.end_s.back());
        break;
      }
    }
  }
  const double margin = 0.1 + 0.25 / static_cast<double>(std::max<std::size_t>(rows, 1));
  const double from = cutoffs.start_s * (1 - margin), to = cutoffs.end_s * (1 + margin);
  std::vector<std::pair<double, double>> pooled;
  for (const RunTrace& run : runs) {
    for (std::size_t t = 0; t < run.end_s.size(); ++t) {
      if (std::isnan(run.best_ms[t]) || run.end_s[t] < from || run.end_s[t] > to) continue;
      pooled.emplace_back(run.end_s[t], rank(run.best_ms[t]));
    }
  }
  double stop = score.time_x.back();
  if (!run_ends.empty()) {
    const double median_end = median_of(run_ends);
    std::sort(run_ends.begin(), run_ends.end());
    const auto later = std::upper_bound(run_ends.begin(), run_ends.end(), median_end);
    if (later != run_ends.end()) stop = *later;
  }
  std::vector<double> rank_by_time(points, worst_rank);
  if (!pooled.empty()) {
    double low = worst_rank, high = 0;
    for (const auto& [t, r] : pooled) {
      low = std::min(low, r);
      high = std::max(high, r);
    }
    // Bagging as the package's: max(runs, 3) regressions, each on int(n / sqrt(that)) points
    // drawn with replacement, averaged; drawn from a fixed seed, so the score is repeatable.
    std::sort(pooled.begin(), pooled.end());
    // The package fits max(runs, 3) of them; at least 400 here, each of the same size, average
    // to the same expected curve with less of the noise of the draws.
    const std::size_t package_estimators = std::max<std::size_t>(runs.size(), 3);
    const std::size_t estimators = std::max<std::size_t>(package_estimators, 400);
    const auto drawn = std::max<std::size_t>(
        1, static_cast<std::size_t>(static_cast<double>(pooled.size()) /
                                    std::sqrt(static_cast<double>(package_estimators))));
    std::mt19937_64 engine(0x5eed);
    std::vector<double> sums(points, 0);
    std::vector<std::size_t> picks(drawn);
    std::vector<std::pair<double, double>> sample(drawn);
    for (std::size_t b = 0; b < estimators; ++b) {
      for (std::size_t& pick : picks) pick = static_cast<std::size_t>(engine() % pooled.size());
      std::sort(picks.begin(), picks.end());
      for (std::size_t k = 0; k < drawn; ++k) sample[k] = pooled[picks[k]];
      const DecreasingIsotonic fit(sample);
      for (std::size_t i = 0; i < points; ++i) sums[i] += std::clamp(fit(score.time_x[i]), low, high);
    }
    for (std::size_t i = 0; i < points; ++i) rank_by_time[i] = sums[i] / static_cast<double>(estimators);
    for (std::size_t i = 0; i < points; ++i) {
      if (score.time_x[i] > stop) {
        for (std::size_t j = i + 1; j < points; ++j) rank_by_time[j] = rank_by_time[i];
        break;
      }
    }
  }

  // The baseline over time: as the package does, the whole numbers of tests the points
  // round to are the nodes of a monotone interpolation, read at equidistant points between
  // the first and the last.
  const double test_cost_s = cutoffs.test_cost_ms / 1e3;
  std::vector<double> nodes;
  for (double x : score.time_x) {
    const double tests = round_half_even(std::max(x / test_cost_s, 1.0));
    if (nodes.empty() || tests > nodes.back()) nodes.push_back(tests);
  }
  std::vector<double> node_runtimes;
  for (double tests : nodes) node_runtimes.push_back(baseline.runtime_ms(static_cast<std::uint64_t>(tests)));
  const Pchip baseline_over_tests(nodes, node_runtimes);
  const std::vector<double> reads = equidistant(nodes.front(), nodes.back(), points);
  for (std::size_t i = 0; i < points; ++i) {
    const double base = nodes.size() > 2 ? baseline_over_tests(reads[i])
                                         : baseline.runtime_ms(static_cast<std::uint64_t>(
                                               round_half_even(std::max(score.time_x[i] / test_cost_s, 1.0))));
    score.time_curve.push_back(performance_score(base, found(rank_by_time[i]), optimum));
  }
  score.time = mean(score.time_curve);
  return score;
}

RunTrace trace_of(const std::vector<ExternalTest>& tests) {
  RunTrace trace;
  double best = NAN;
  for (const ExternalTest& test : tests) {
    if (std::isfinite(test.runtime_ms) && !(test.runtime_ms >= best)) best = test.runtime_ms;
    trace.end_s.push_back(test.time_s);
    trace.best_ms.push_back(best);
  }
  return trace;
}

std::vector<Improvement> improvements_of(const std::vector<ExternalTest>& tests) {
  std::vector<Improvement> improvements;
  for (std::size_t i = 0; i < tests.size(); ++i) {
    const ExternalTest& test = tests[i];
    if (!std::isfinite(test.runtime_ms)) continue;
    if (improvements.empty() || test.runtime_ms < improvements.back().best_ms) {
      improvements.push_back({i + 1, test.time_s, test.runtime_ms});
    }
  }
  return improvements;
}

namespace {

// A curve sampled at `points` equidistant fractions of its x range, linearly interpolated.
std::vector<double> over_fractions(const std::vector<double>& xs, const std::vector<double>& ys, std::size_t points) {
  std::vector<double> out(points, NAN);
  if (xs.empty()) return out;
  for (std::size_t i = 0; i < points; ++i) {
    const double fraction = points == 1 ? 0 : static_cast<double>(i) / static_cast<double>(points - 1);
    const double x = xs.front() + fraction * (xs.back() - xs.front());
    const auto after = std::lower_bound(xs.begin(), xs.end(), x);
    if (after == xs.begin()) {
      out[i] = ys.front();
    } else if (after == xs.end()) {
      out[i] = ys.back();
    } else {
      const std::size_t k = static_cast<std::size_t>(after - xs.begin());
      const double span = xs[k] - xs[k - 1];
      const double t = span > 0 ? (x - xs[k - 1]) / span : 1;
      out[i] = ys[k - 1] + t * (ys[k] - ys[k - 1]);
    }
  }
  return out;
}

}  // namespace

std::vector<AggregateScore> aggregate_scores(const std::vector<const Evaluation*>& spaces, std::size_t points) {
  std::vector<AggregateScore> aggregates;
  if (spaces.empty()) return aggregates;
  for (const Evaluation* space : spaces) {
    if (!space->score) throw Error("aggregating the performance score needs evaluations that computed it");
  }
  for (const SearcherEvaluation& first : spaces.front()->searchers) {
    AggregateScore aggregate;
    aggregate.name = first.name;
    std::vector<double> fevals, time;
    std::vector<std::vector<double>> fevals_curves, time_curves;
    for (const Evaluation* space : spaces) {
      auto found = std::find_if(space->searchers.begin(), space->searchers.end(),
                                [&](const SearcherEvaluation& e) { return e.name == first.name; });
      if (found == space->searchers.end() || std::isnan(found->score.time)) break;
      fevals.push_back(found->score.fevals);
      time.push_back(found->score.time);
      fevals_curves.push_back(over_fractions(found->score.fevals_x, found->score.fevals_curve, points));
      time_curves.push_back(over_fractions(found->score.time_x, found->score.time_curve, points));
    }
    if (time.size() != spaces.size()) continue;  // not scored in every space
    aggregate.spaces = spaces.size();
    aggregate.fevals = mean(fevals);
    aggregate.fevals_spread = standard_deviation(fevals);
    aggregate.time = mean(time);
    aggregate.time_spread = standard_deviation(time);
    aggregate.fevals_curve.assign(points, 0);
    aggregate.time_curve.assign(points, 0);
    for (std::size_t s = 0; s < spaces.size(); ++s) {
      for (std::size_t i = 0; i < points; ++i) {
        aggregate.fevals_curve[i] += fevals_curves[s][i] / static_cast<double>(spaces.size());
        aggregate.time_curve[i] += time_curves[s][i] / static_cast<double>(spaces.size());
      }
    }
    aggregates.push_back(std::move(aggregate));
  }
  return aggregates;
}

}  // namespace steer
