#pragma once
// What a tuning run optimises (docs/energy.md). Lower scores are better for every
// objective, so searchers and the loop rank tests the same way whatever the goal.
//
//   steer::Objective o = steer::Objective::parse("weighted:0.7");  // 0.7 t/t_best + 0.3 e/e_best
//   o.needs_energy();                                             // true
//   double s = o.score(result, bests, flops);                       // NaN when not scorable
//   auto front = steer::pareto_front(results);                      // time-energy non-dominated
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "steer/result.hpp"

namespace steer {

// The best time and energy seen so far (or over a whole recording): the normalisers of
// the weighted objective, M(t, e) = α t / t_best + (1 − α) e / e_best.
struct ObjectiveBests {
  std::optional<double> time_ms;
  std::optional<double> joules;
  void update(const Result& result);  // valid results only
};

class Objective {
 public:
  enum class Kind {
    Time,           // median runtime (ms)
    Energy,         // joules per launch
    Weighted,       // α t / t_best + (1 − α) e / e_best: the energy paper's M(t, e)
    Edp,            // energy-delay product, J·s
    GflopsPerWatt,  // FLOP per joule / 1e9, maximised (its score is the negated value)
  };

  Objective() = default;  // time
  // "time", "energy", "weighted:ALPHA" (0 <= ALPHA <= 1), "edp", "gflops-per-watt".
  // Throws Error naming the text and the accepted forms.
  static Objective parse(std::string_view text);
  static Objective weighted(double alpha);

  Kind kind() const noexcept { return kind_; }
  double alpha() const noexcept { return alpha_; }
  std::string name() const;  // parse(name()) gives the same objective
  bool needs_energy() const noexcept { return kind_ != Kind::Time; }
  bool needs_flops() const noexcept { return kind_ == Kind::GflopsPerWatt; }

  // The score of a result (lower is better); NaN when the result is not valid or lacks
  // what the objective needs (energy; `flops` for gflops-per-watt; the bests for
  // weighted). `flops` is the benchmark's FLOP count per launch.
  double score(const Result& result, const ObjectiveBests& bests, std::optional<double> flops = {}) const;
  // The objective's own value, in its natural direction and unit (GFLOP/J for
  // gflops-per-watt, the others as score()).
  double value(const Result& result, const ObjectiveBests& bests, std::optional<double> flops = {}) const;

 private:
  Kind kind_ = Kind::Time;
  double alpha_ = 1;
};

// Which points are on the Pareto front of minimising both coordinates: no other point is at
// least as good in both and better in one. Of identical points only the first is on it.
// Throws Error when the two lists differ in length.
std::vector<bool> pareto_optimal(const std::vector<double>& runtime_ms, const std::vector<double>& energy_j);

// Valid results with energy whose (time, energy) no other such result dominates (at least
// as fast and as frugal, and strictly better in one), sorted by time. Equal points are
// kept once (the first).
std::vector<Result> pareto_front(std::span<const Result> results);

}  // namespace steer
