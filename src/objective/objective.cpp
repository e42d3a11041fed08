#include "steer/objective.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numeric>

#include "steer/error.hpp"

namespace steer {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::optional<double> joules_of(const Result& result) {
  if (!result.energy || !(result.energy->joules_per_launch > 0)) return std::nullopt;
  return result.energy->joules_per_launch;
}

}  // namespace

void ObjectiveBests::update(const Result& result) {
  if (!result.ok()) return;
  if (!time_ms || result.time.median_ms < *time_ms) time_ms = result.time.median_ms;
  if (auto joules = joules_of(result); joules && (!this->joules || *joules < *this->joules)) this->joules = joules;
}

Objective Objective::weighted(double alpha) {
  if (!(alpha >= 0 && alpha <= 1)) {
    throw Error(fmt::format("objective weighted:{}: the weight ALPHA of weighted:ALPHA must be between 0 and 1", alpha));
  }
  Objective objective;
  objective.kind_ = Kind::Weighted;
  objective.alpha_ = alpha;
  return objective;
}

Objective Objective::parse(std::string_view text) {
  Objective objective;
  if (text == "time") return objective;
  if (text == "energy") {
    objective.kind_ = Kind::Energy;
  } else if (text == "edp") {
    objective.kind_ = Kind::Edp;
  } else if (text == "gflops-per-watt") {
    objective.kind_ = Kind::GflopsPerWatt;
  } else if (text.starts_with("weighted:")) {
    std::string_view number = text.substr(9);
    double alpha = kNaN;
    auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), alpha);
    if (error != std::errc() || end != number.data() + number.size() || number.empty()) {
      throw Error(fmt::format("objective '{}': expected weighted:ALPHA with a number ALPHA in [0, 1]", text));
    }
    return weighted(alpha);
  } else {
    throw Error(fmt::format("unknown objective '{}': use time, energy, weighted:ALPHA (0..1), edp or gflops-per-watt",
                            text));
  }
  return objective;
}

std::string Objective::name() const {
  switch (kind_) {
    case Kind::Time: return "time";
    case Kind::Energy: return "energy";
    case Kind::Weighted: return fmt::format("weighted:{}", alpha_);
    case Kind::Edp: return "edp";
    case Kind::GflopsPerWatt: return "gflops-per-watt";
  }
  return "time";
}

double Objective::value(const Result& result, const ObjectiveBests& bests, std::optional<double> flops) const {
  if (!result.ok()) return kNaN;
  const double t = result.time.median_ms;
  if (kind_ == Kind::Time) return t;
  const std::optional<double> e = joules_of(result);
  if (!e) return kNaN;
  switch (kind_) {
    case Kind::Energy: return *e;
    case Kind::Edp: return *e * t * 1e-3;
    case Kind::GflopsPerWatt: return flops && *flops > 0 ? *flops / *e / 1e9 : kNaN;
    case Kind::Weighted:
      if (!bests.time_ms || !bests.joules || !(*bests.time_ms > 0)) return kNaN;
      return alpha_ * t / *bests.time_ms + (1 - alpha_) * *e / *bests.joules;
    case Kind::Time: break;
  }
  return kNaN;
}

double Objective::score(const Result& result, const ObjectiveBests& bests, std::optional<double> flops) const {
  const double v = value(result, bests, flops);
  return kind_ == Kind::GflopsPerWatt ? -v : v;
}

std::vector<bool> pareto_optimal(const std::vector<double>& runtime_ms, const std::vector<double>& energy_j) {
  if (runtime_ms.size() != energy_j.size()) throw Error("pareto_optimal: runtimes and energies differ in number");
  std::vector<std::size_t> order(runtime_ms.size());
  std::iota(order.begin(), order.end(), 0);
  // Fastest first, then least energy, then first seen; a point is on the front when it
  // needs less energy than every point before it in this order.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (runtime_ms[a] != runtime_ms[b]) return runtime_ms[a] < runtime_ms[b];
    return energy_j[a] < energy_j[b];
  });
  std::vector<bool> front(runtime_ms.size(), false);
  double least = std::numeric_limits<double>::infinity();
  for (std::size_t i : order) {
    if (energy_j[i] < least) {
      front[i] = true;
      least = energy_j[i];
    }
  }
  return front;
}


std::vector<Result> pareto_front(std::span<const Result> results) {
  std::vector<const Result*> points;
  std::vector<double> times, joules;
  for (const Result& r : results) {
    if (!r.ok() || !joules_of(r)) continue;
    points.push_back(&r);
    times.push_back(r.time.median_ms);
    joules.push_back(r.energy->joules_per_launch);
  }
  const std::vector<bool> on_front = pareto_optimal(times, joules);
  std::vector<Result> front;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (on_front[i]) front.push_back(*points[i]);
  }
  std::stable_sort(front.begin(), front.end(),
                   [](const Result& a, const Result& b) { return a.time.median_ms < b.time.median_ms; });
  return front;
}

}  // namespace steer
