// Space::build: splits the parameters into independent groups and enumerates each group's
// valid rows depth first, testing every constraint as soon as the last parameter it reads
// is bound, so that a failing partial configuration cuts off its whole subtree, and
// remembering each constraint's decisions so that it is evaluated once per assignment of
// the parameters it reads rather than once per partial configuration.
#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <limits>
#include <numeric>
#include <random>
#include <tuple>

#include "expression/expression.hpp"
#include "space/space_impl.hpp"
#include "steer/error.hpp"

namespace steer {
namespace {

// A constraint ready to test against the current partial assignment.
struct CompiledConstraint {
  std::string label;
  std::string text;             // the expression, or the label of a callable
  expr::Expression expression;  // unless callable
  const std::function<bool(std::span<const Value>)>* callable = nullptr;
  std::vector<std::uint32_t> arguments;  // callable: the parameter of each argument, as listed
  std::vector<Value> argument_values;    // callable: the argument buffer, reused for every call
  std::vector<std::uint32_t> reads;      // parameters read: ascending, distinct
  std::uint64_t rejected = 0;
};

std::string describe(const CompiledConstraint& constraint) {
  if (constraint.callable) return fmt::format("{} (function)", constraint.label);
  return fmt::format("'{}' ({})", constraint.text, constraint.label);
}

SpaceError no_valid_configuration(const CompiledConstraint& worst) {
  return SpaceError(
      fmt::format("the space has no valid configuration; constraint {} removed the most ({} partial configuration{})",
                  describe(worst), worst.rejected, worst.rejected == 1 ? "" : "s"));
}

// Expressions are parsed once, against every parameter name, so that slot k of the
// evaluation is parameter k.
std::vector<CompiledConstraint> compile(const SpaceDefinition& definition) {
  std::vector<std::string> names;
  for (const Parameter& parameter : definition.parameters()) names.push_back(parameter.name);
  std::vector<CompiledConstraint> compiled;
  for (const Constraint& constraint : definition.constraints()) {
    CompiledConstraint& c = compiled.emplace_back();
    c.label = constraint.label;
    if (constraint.callable) {
      c.text = constraint.label;
      c.callable = &constraint.callable;
      for (const std::string& name : constraint.parameters) {
        std::optional<std::size_t> parameter = definition.find(name);
        if (!parameter) {
          throw SpaceError(fmt::format("constraint {} names an unknown parameter '{}'", describe(c), name));
        }
        c.arguments.push_back(static_cast<std::uint32_t>(*parameter));
      }
      c.argument_values.resize(c.arguments.size());
      c.reads = c.arguments;
      std::sort(c.reads.begin(), c.reads.end());
      c.reads.erase(std::unique(c.reads.begin(), c.reads.end()), c.reads.end());
    } else {
      c.text = constraint.expression;
      try {
        c.expression = expr::Expression::parse(constraint.expression, names);
      } catch (const ExpressionError& e) {
        throw ExpressionError(fmt::format("constraint {}: {}", describe(c), e.what()), e.expression(), e.position());
      }
      for (std::size_t slot : c.expression.slots_used()) c.reads.push_back(static_cast<std::uint32_t>(slot));
    }
  }
  return compiled;
}

// The order in which one group's parameters are bound, and the constraints tested at each
// level: a constraint is tested at the level that binds the last parameter it reads.
struct SearchPlan {
  std::vector<std::uint32_t> order;
  std::vector<std::vector<std::uint32_t>> checks;
};

// Pruning happens only when a constraint can be tested, so the order aims to make
// constraints complete early. Greedy; the next parameter is the one that
//   1. completes the most constraints (binds the last parameter they read), then
//   2. appears in the most constraints still incomplete (most constrained first), then
//   3. has the fewest values (a small branching factor near the root), then
//   4. comes first in definition order.
SearchPlan plan_search(const std::vector<std::uint32_t>& group_parameters,
                       const std::vector<std::uint32_t>& group_constraints,
                       const std::vector<CompiledConstraint>& constraints, const std::vector<Parameter>& parameters) {
  std::vector<std::size_t> unbound(group_constraints.size());
  for (std::size_t k = 0; k < group_constraints.size(); ++k) {
    unbound[k] = constraints[group_constraints[k]].reads.size();
  }
  auto reads = [&](std::size_t k, std::uint32_t parameter) {
    const auto& r = constraints[group_constraints[k]].reads;
    return std::binary_search(r.begin(), r.end(), parameter);
  };

  SearchPlan plan;
  std::vector<bool> placed(group_parameters.size(), false);
  for (std::size_t level = 0; level < group_parameters.size(); ++level) {
    std::size_t best = 0;
    std::tuple<std::size_t, std::size_t, std::size_t> best_score{};
    bool have_best = false;
    for (std::size_t i = 0; i < group_parameters.size(); ++i) {
      if (placed[i]) continue;
      std::size_t completes = 0, incomplete = 0;
      for (std::size_t k = 0; k < group_constraints.size(); ++k) {
        if (!reads(k, group_parameters[i])) continue;
        ++(unbound[k] == 1 ? completes : incomplete);
      }
      std::tuple score{completes, incomplete,
                       std::numeric_limits<std::size_t>::max() - parameters[group_parameters[i]].values.size()};
      if (!have_best || score > best_score) best = i, best_score = score, have_best = true;
    }
    placed[best] = true;
    plan.order.push_back(group_parameters[best]);
    auto& checks = plan.checks.emplace_back();
    for (std::size_t k = 0; k < group_constraints.size(); ++k) {
      if (reads(k, group_parameters[best]) && --unbound[k] == 0) checks.push_back(group_constraints[k]);
    }
  }
  return plan;
}

// Restores lexicographic row order after a search that bound the parameters in another
// order: a stable LSD radix sort, one counting-sort pass per column, last column first,
// linear in the number of cells.
template <typename Cell>
void sort_rows(std::vector<Cell>& cells, const std::vector<std::size_t>& radix) {
  const std::size_t width = radix.size();
  const std::size_t rows = cells.size() / width;
  std::vector<std::size_t> order(rows), next(rows), start;
  std::iota(order.begin(), order.end(), std::size_t{0});
  for (std::size_t column = width; column-- > 0;) {
    start.assign(radix[column] + 1, 0);
    for (std::size_t row : order) ++start[cells[row * width + column] + 1];
    std::partial_sum(start.begin(), start.end(), start.begin());
    for (std::size_t row : order) next[start[cells[row * width + column]]++] = row;
    order.swap(next);
  }
  std::vector<Cell> sorted(cells.size());
  for (std::size_t i = 0; i < rows; ++i) {
    std::copy_n(cells.begin() + static_cast<std::ptrdiff_t>(order[i] * width), width,
                sorted.begin() + static_cast<std::ptrdiff_t>(i * width));
  }
  cells.swap(sorted);
}

// A set of value indices of one parameter: one bit per value.
using Bits = std::vector<std::uint64_t>;

std::size_t words_for(std::size_t values) { return (values + 63) / 64; }

// The next value in `bits` at or after `from`, or SIZE_MAX.
std::size_t next_value(const Bits& bits, std::size_t from) {
  std::size_t word = from / 64;
  if (word >= bits.size()) return SIZE_MAX;
  std::uint64_t rest = bits[word] & (~std::uint64_t{0} << (from % 64));
  while (rest == 0) {
    if (++word == bits.size()) return SIZE_MAX;
    rest = bits[word];
  }
  return word * 64 + static_cast<std::size_t>(std::countr_zero(rest));
}

// What a constraint decided at its level, remembered per assignment of the other
// parameters it reads: for each value of the level's parameter, whether the constraint was
// evaluated there and whether it accepted. The search meets the same assignment of a
// constraint's few parameters under many parents (conv's TBY_XL rule reads 4 of its 10
// parameters), so with the memo a constraint is evaluated at most once per assignment of
// its own parameters rather than once per partial configuration. Values are evaluated only
// when the search asks for them, so a constraint is still never evaluated where one tested
// before it failed: a guard such as "D != 0" ahead of "N % D == 0" keeps working.
struct Memo {
  std::vector<std::uint32_t> others;  // the other parameters the constraint reads
  std::vector<std::size_t> strides;   // entry = sum of their value indices times these
  std::size_t words = 0;              // per entry
  Bits evaluated, accepted;           // both empty when too large to keep: evaluate every time
};

// Words all the memos of one group may hold (8 MB); a memo that does not fit is not kept.
constexpr std::size_t kMemoWordBudget = std::size_t{1} << 20;

Memo make_memo(const CompiledConstraint& constraint, std::uint32_t bound, const std::vector<Parameter>& parameters,
               std::size_t& words_left) {
  Memo memo;
  memo.words = words_for(parameters[bound].values.size());
  std::size_t entries = 1;
  bool fits = true;
  for (std::uint32_t p : constraint.reads) {
    if (p == bound) continue;
    memo.others.push_back(p);
    memo.strides.push_back(entries);
    fits = fits && !__builtin_mul_overflow(entries, parameters[p].values.size(), &entries);
  }
  if (fits && entries <= words_left / 2 / memo.words) {
    memo.evaluated.assign(entries * memo.words, 0);
    memo.accepted.assign(entries * memo.words, 0);
    words_left -= 2 * entries * memo.words;
  }
  return memo;
}

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// A build's limits as it runs: when to report progress, when to stop.
struct Control {
  const BuildLimits& limits;
  Clock::time_point start = Clock::now();
  Clock::time_point next_report = start;
  std::size_t groups = 0;
  std::size_t group = 0;               // being enumerated
  Clock::time_point group_start = start;
  std::size_t finished_bytes = 0;      // rows of the groups done
  Clock::time_point estimate_deadline;  // once stopped
  double estimate_share_s = 0;          // of the time set aside, for each group estimated

  double elapsed() const { return seconds_between(start, Clock::now()); }
  // Stopped: from now on the time set aside for sampling runs, in equal shares for the group
  // that stopped and each group after it, so that on a slow machine the later groups still
  // get their descents.
  void begin_estimate() {
    const std::size_t estimated = groups > group ? groups - group : 1;
    estimate_share_s = limits.estimate_seconds / static_cast<double>(estimated);
    begin_next_estimate();
  }
  void begin_next_estimate() {
    estimate_deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(estimate_share_s));
  }
};

// What is known of one group's number of valid rows: found for certain, plus what the
// sampled descents estimate for the part not searched (mean and the variance of that mean).
struct GroupEstimate {
  double found = 0;
  double rest = 0;
  double rest_variance = 0;
  std::uint64_t probes = 0;
  std::uint64_t probes_valid = 0;
  bool exact = false;
  double count() const { return found + rest; }
};

// A build stopped inside a group, with the estimate of that group made where it stopped.
struct GroupStopped {
  SpaceBuildStopped::Reason reason;
  BuildProgress progress;
  std::vector<std::uint64_t> rejected;  // per constraint, by the search (the estimate's descents not counted)
  GroupEstimate estimate;
};

std::size_t popcount(const std::vector<std::uint64_t>& bits) {
  std::size_t count = 0;
  for (std::uint64_t word : bits) count += static_cast<std::size_t>(std::popcount(word));
  return count;
}

// Depth-first enumeration over one partial assignment, a Scalar slot and a value index per
// parameter, overwritten as the search moves, so testing a configuration allocates
// nothing. Each level narrows the values of its parameter to those that every constraint
// completed there accepts, then descends into each.
class Enumerator {
 public:
  Enumerator(const std::vector<Parameter>& parameters, std::vector<CompiledConstraint>& constraints,
             Control* control = nullptr)
      : parameters_(parameters),
        constraints_(constraints),
        slots_(parameters.size()),
        current_(parameters.size(), 0),
        control_(control) {
    for (const Parameter& parameter : parameters) {
      auto& scalars = scalars_.emplace_back();
      for (const Value& value : parameter.values) scalars.push_back(expr::to_scalar(value));
    }
  }

  bool test(CompiledConstraint& constraint) {
    if (constraint.callable) {
      for (std::size_t k = 0; k < constraint.arguments.size(); ++k) {
        const std::uint32_t p = constraint.arguments[k];
        constraint.argument_values[k] = parameters_[p].values[current_[p]];
      }
      return (*constraint.callable)(constraint.argument_values);
    }
    try {
      return constraint.expression.test(slots_);
    } catch (const ExpressionError& e) {
      throw ExpressionError(fmt::format("constraint {} failed to evaluate with {}: {}", describe(constraint),
                                        bound_values(constraint), e.what()),
                            e.expression(), e.position());
    }
  }

  // The valid rows of one group, in lexicographic order of value indices by column
  // (the group's parameters in definition order).
  template <typename Cell>
  std::vector<Cell> rows(const std::vector<std::uint32_t>& group_parameters,
                         const std::vector<std::uint32_t>& group_constraints) {
    const SearchPlan plan = plan_search(group_parameters, group_constraints, constraints_, parameters_);
    const std::size_t depth = plan.order.size();
    std::vector<std::vector<Memo>> memos = make_memos(plan);
    std::vector<Bits> allowed(depth);
    std::vector<std::size_t> next(depth, 0);
    std::vector<Cell> cells;
    std::size_t level = 0;
    narrow(plan.order[0], plan.checks[0], memos[0], allowed[0]);
    std::uint32_t ticks = 0;
    while (true) {
      if (control_ && ++ticks % 256 == 0) {
        const std::uint64_t found = cells.size() / group_parameters.size();
        const auto stop = [&](SpaceBuildStopped::Reason reason) {
          GroupStopped stopped{reason, progress_at(plan, next, level, found), {}, {}};
          for (const CompiledConstraint& c : constraints_) stopped.rejected.push_back(c.rejected);
          control_->begin_estimate();
          stopped.estimate = estimate_rest(plan, memos, allowed, next, level, found);
          throw stopped;
        };
        if (control_->limits.seconds > 0 && control_->elapsed() >= control_->limits.seconds) {
          stop(SpaceBuildStopped::Reason::Time);
        }
        if (control_->limits.memory_bytes > 0 &&
            control_->finished_bytes + cells.capacity() * sizeof(Cell) >= control_->limits.memory_bytes) {
          stop(SpaceBuildStopped::Reason::Memory);
        }
        if (control_->limits.on_progress && Clock::now() >= control_->next_report) {
          control_->limits.on_progress(progress_at(plan, next, level, found));
          control_->next_report = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                     std::chrono::duration<double>(control_->limits.progress_interval_s));
        }
      }
      const std::size_t value = next_value(allowed[level], next[level]);
      if (value == SIZE_MAX) {  // level exhausted: back up
        if (level == 0) break;
        --level;
        continue;
      }
      next[level] = value + 1;
      bind(plan.order[level], value);
      if (level + 1 < depth) {
        ++level;
        narrow(plan.order[level], plan.checks[level], memos[level], allowed[level]);
        next[level] = 0;
      } else {
        for (std::uint32_t q : group_parameters) cells.push_back(static_cast<Cell>(current_[q]));
      }
    }
    if (!std::is_sorted(plan.order.begin(), plan.order.end())) {
      std::vector<std::size_t> radix;
      for (std::uint32_t q : group_parameters) radix.push_back(parameters_[q].values.size());
      sort_rows(cells, radix);
    }
    cells.shrink_to_fit();
    return cells;
  }

  // An estimate, by random descents, of the valid rows of a group not enumerated at all.
  GroupEstimate estimate(const std::vector<std::uint32_t>& group_parameters,
                         const std::vector<std::uint32_t>& group_constraints) {
    if (control_ != nullptr) control_->begin_next_estimate();
    const SearchPlan plan = plan_search(group_parameters, group_constraints, constraints_, parameters_);
    std::vector<std::vector<Memo>> memos = make_memos(plan);
    std::vector<Bits> allowed(plan.order.size());
    std::vector<std::size_t> next(plan.order.size(), 0);
    narrow(plan.order[0], plan.checks[0], memos[0], allowed[0]);
    return estimate_rest(plan, memos, allowed, next, 0, 0);
  }

 private:
  std::vector<std::vector<Memo>> make_memos(const SearchPlan& plan) const {
    std::vector<std::vector<Memo>> memos(plan.order.size());
    std::size_t memo_words_left = kMemoWordBudget;
    for (std::size_t level = 0; level < plan.order.size(); ++level) {
      for (std::uint32_t id : plan.checks[level]) {
        memos[level].push_back(make_memo(constraints_[id], plan.order[level], parameters_, memo_words_left));
      }
    }
    return memos;
  }

  // Where the search of a group stands: at `level`, with the values before next[level]
  // done and, above it, the value next[l] - 1 of each level l in progress.
  BuildProgress progress_at(const SearchPlan& plan, const std::vector<std::size_t>& next, std::size_t level,
                            std::uint64_t found) const {
    BuildProgress progress;
    progress.group = control_->group;
    progress.groups = control_->groups;
    progress.group_parameters = plan.order.size();
    progress.group_combinations = 1;
    double scale = 1;  // the share of the combinations one value of this level stands for
    for (std::size_t l = 0; l < plan.order.size(); ++l) {
      const double values = static_cast<double>(parameters_[plan.order[l]].values.size());
      progress.group_combinations *= values;
      if (l > level) continue;
      scale /= values;
      progress.searched += static_cast<double>(l < level ? next[l] - 1 : next[l]) * scale;
    }
    progress.rows = found;
    progress.seconds = control_->elapsed();
    progress.group_seconds = seconds_between(control_->group_start, Clock::now());
    return progress;
  }

  // Knuth's estimator over what the search has not reached, the part after the frontier
  // (next, level as in progress_at): a descent first walks down the frontier's path,
  // choosing at each level uniformly among its values not yet searched and going on along
  // the path, then descends at random below a value it chose; its weight is the product of
  // the numbers of choices it had. The mean weight is an unbiased estimate of the rows there.
  GroupEstimate estimate_rest(const SearchPlan& plan, std::vector<std::vector<Memo>>& memos,
                              const std::vector<Bits>& allowed, const std::vector<std::size_t>& next,
                              std::size_t level, std::uint64_t found) {
    GroupEstimate estimate;
    estimate.found = static_cast<double>(found);
    const std::size_t depth = plan.order.size();
    std::mt19937_64 rng(control_ != nullptr ? control_->limits.seed : 1);
    std::vector<Bits> scratch(depth);
    std::vector<std::size_t> choices;
    double sum = 0, sum_squares = 0;
    const std::uint64_t most = control_ != nullptr ? control_->limits.estimate_probes : 10'000;
    while (estimate.probes < most) {
      if (control_ != nullptr && estimate.probes % 64 == 0 && Clock::now() >= control_->estimate_deadline) break;
      // Each level of the frontier's path is one node of the tree: the weight multiplies its
      // number of choices whichever is taken. At `level` there is no path left to follow.
      double weight = 1;
      for (std::size_t l = 0; l <= level; ++l) {
        choices.clear();
        for (std::size_t v = next_value(allowed[l], next[l]); v != SIZE_MAX; v = next_value(allowed[l], v + 1)) {
          choices.push_back(v);
        }
        const std::size_t options = choices.size() + (l < level ? 1 : 0);
        if (options == 0) {
          weight = 0;
          break;
        }
        weight *= static_cast<double>(options);
        const std::size_t pick = std::uniform_int_distribution<std::size_t>(0, options - 1)(rng);
        if (pick == choices.size()) {  // along the path
          bind(plan.order[l], next[l] - 1);
          continue;
        }
        bind(plan.order[l], choices[pick]);
        weight *= descend(plan, memos, scratch, l + 1, rng);
        break;
      }
      ++estimate.probes;
      if (weight > 0) ++estimate.probes_valid;
      sum += weight;
      sum_squares += weight * weight;
    }
    if (estimate.probes > 0) {
      const double n = static_cast<double>(estimate.probes);
      estimate.rest = sum / n;
      const double variance = n > 1 ? std::max(0.0, (sum_squares - sum * sum / n) / (n - 1)) : 0;
      estimate.rest_variance = variance / n;
    }
    return estimate;
  }

  // A random descent from `from` to the last level, values bound so far; the product of the
  // numbers of values allowed at each level (0 at a dead end).
  double descend(const SearchPlan& plan, std::vector<std::vector<Memo>>& memos, std::vector<Bits>& scratch,
                 std::size_t from, std::mt19937_64& rng) {
    double weight = 1;
    for (std::size_t l = from; l < plan.order.size(); ++l) {
      narrow(plan.order[l], plan.checks[l], memos[l], scratch[l]);
      const std::size_t count = popcount(scratch[l]);
      if (count == 0) return 0;
      weight *= static_cast<double>(count);
      std::size_t pick = std::uniform_int_distribution<std::size_t>(0, count - 1)(rng);
      std::size_t value = next_value(scratch[l], 0);
      while (pick-- > 0) value = next_value(scratch[l], value + 1);
      bind(plan.order[l], value);
    }
    return weight;
  }

  void bind(std::uint32_t parameter, std::size_t value) {
    current_[parameter] = static_cast<std::uint32_t>(value);
    slots_[parameter] = scalars_[parameter][value];
  }

  // Sets `allowed` to the values of `parameter` that every constraint in `checks` accepts,
  // given the parameters bound so far; a rejection counts against the first constraint
  // that fails.
  void narrow(std::uint32_t parameter, const std::vector<std::uint32_t>& checks, std::vector<Memo>& memos,
              Bits& allowed) {
    const std::size_t count = parameters_[parameter].values.size();
    allowed.assign(words_for(count), ~std::uint64_t{0});
    if (count % 64 != 0) allowed.back() = (std::uint64_t{1} << (count % 64)) - 1;
    for (std::size_t k = 0; k < checks.size(); ++k) {
      CompiledConstraint& constraint = constraints_[checks[k]];
      Memo& memo = memos[k];
      if (memo.accepted.empty()) {
        for (std::size_t v = next_value(allowed, 0); v != SIZE_MAX; v = next_value(allowed, v + 1)) {
          bind(parameter, v);
          if (!test(constraint)) {
            allowed[v / 64] &= ~(std::uint64_t{1} << (v % 64));
            ++constraint.rejected;
          }
        }
        continue;
      }
      std::size_t entry = 0;
      for (std::size_t i = 0; i < memo.others.size(); ++i) entry += current_[memo.others[i]] * memo.strides[i];
      std::uint64_t* evaluated = memo.evaluated.data() + entry * memo.words;
      std::uint64_t* accepted = memo.accepted.data() + entry * memo.words;
      for (std::size_t w = 0; w < memo.words; ++w) {
        std::uint64_t unknown = allowed[w] & ~evaluated[w];
        evaluated[w] |= unknown;
        for (; unknown != 0; unknown &= unknown - 1) {
          const int bit = std::countr_zero(unknown);
          bind(parameter, w * 64 + static_cast<std::size_t>(bit));
          if (test(constraint)) accepted[w] |= std::uint64_t{1} << bit;
        }
        constraint.rejected += static_cast<std::uint64_t>(std::popcount(allowed[w] & ~accepted[w]));
        allowed[w] &= accepted[w];
      }
    }
  }

  std::string bound_values(const CompiledConstraint& constraint) const {
    std::string text;
    for (std::uint32_t p : constraint.reads) {
      if (!text.empty()) text += ", ";
      text += parameters_[p].name + "=" + parameters_[p].values[current_[p]].to_string();
    }
    return text;
  }

  const std::vector<Parameter>& parameters_;
  std::vector<CompiledConstraint>& constraints_;
  std::vector<std::vector<expr::Scalar>> scalars_;  // per parameter, per value
  std::vector<expr::Scalar> slots_;                 // the partial assignment, by parameter
  std::vector<std::uint32_t> current_;              // its value indices, by parameter
  Control* control_;                                // limits and progress; null: none
};

// The groups' estimates multiplied: independent groups, so the space's count is the
// product, with the variance of a product of independent estimates.
SizeEstimate combine(const std::vector<GroupEstimate>& groups) {
  SizeEstimate estimate;
  double mean = 1, second_moment = 1, at_least = 1;
  bool sampled = false;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const GroupEstimate& group = groups[g];
    mean *= group.count();
    second_moment *= group.count() * group.count() + group.rest_variance;
    at_least *= group.found;
    if (group.exact) continue;
    estimate.probes += group.probes;
    if (!sampled || group.probes_valid < estimate.weakest_valid) {
      estimate.weakest_group = g;
      estimate.weakest_probes = group.probes;
      estimate.weakest_valid = group.probes_valid;
    }
    sampled = true;
  }
  // Too few descents reached a valid row to say how many the unsearched part holds.
  estimate.reliable = estimate.weakest_valid >= 10;
  const double spread = 1.96 * std::sqrt(std::max(0.0, second_moment - mean * mean));
  estimate.count = mean;
  estimate.at_least = at_least;
  estimate.low = std::max(at_least, mean - spread);
  estimate.high = mean + spread;
  return estimate;
}

// Connected components of the parameter-constraint graph, ordered by first parameter.
struct Partition {
  std::vector<std::vector<std::uint32_t>> parameters;   // per group, ascending
  std::vector<std::vector<std::uint32_t>> constraints;  // per group, ascending
};

Partition partition(std::size_t parameter_count, const std::vector<CompiledConstraint>& constraints) {
  std::vector<std::uint32_t> parent(parameter_count);
  std::iota(parent.begin(), parent.end(), 0u);
  auto root = [&](std::uint32_t p) {
    while (parent[p] != p) p = parent[p] = parent[parent[p]];
    return p;
  };
  for (const CompiledConstraint& c : constraints) {
    for (std::uint32_t p : c.reads) parent[root(p)] = root(c.reads.front());
  }
  Partition result;
  std::vector<std::size_t> group_of_root(parameter_count, SIZE_MAX);
  for (std::uint32_t p = 0; p < parameter_count; ++p) {
    std::size_t& group = group_of_root[root(p)];
    if (group == SIZE_MAX) {
      group = result.parameters.size();
      result.parameters.emplace_back();
      result.constraints.emplace_back();
    }
    result.parameters[group].push_back(p);
  }
  for (std::uint32_t id = 0; id < constraints.size(); ++id) {
    if (!constraints[id].reads.empty()) {
      result.constraints[group_of_root[root(constraints[id].reads.front())]].push_back(id);
    }
  }
  return result;
}

std::size_t heap_bytes(const std::string& s) {
  const char* object = reinterpret_cast<const char*>(&s);
  const bool in_place = s.data() >= object && s.data() < object + sizeof s;  // short-string optimisation
  return in_place ? 0 : s.capacity() + 1;
}

}  // namespace

std::size_t Space::Impl::storage_bytes() const {
  std::size_t bytes = sizeof *this;
  bytes += parameters.capacity() * sizeof(Parameter);
  for (const Parameter& parameter : parameters) {
    bytes += heap_bytes(parameter.name) + parameter.values.capacity() * sizeof(Value);
    for (const Value& value : parameter.values) {
      if (value.is_string()) bytes += heap_bytes(value.as_string());
    }
  }
  bytes += groups.capacity() * sizeof(Group);
  for (const Group& group : groups) {
    bytes += group.parameters.capacity() * sizeof(std::uint32_t);
    bytes += std::visit([](const auto& cells) { return cells.capacity() * sizeof cells[0]; }, group.cells);
  }
  bytes += (group_of.capacity() + column_of.capacity()) * sizeof(std::uint32_t);
  bytes += stats.constraints.capacity() * sizeof(ConstraintStats);
  for (const ConstraintStats& c : stats.constraints) bytes += heap_bytes(c.text);
  return bytes;
}

Space::Space(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SpaceBuildStopped::SpaceBuildStopped(Reason why, BuildProgress where, SizeEstimate size, BuildStats so_far)
    : SpaceError(fmt::format("building the space stopped at its {} after {:.1f} s, in group {} of {} ({:.3g} % of "
                             "its combinations searched)",
                             why == Reason::Time ? "time limit" : "memory limit", where.seconds, where.group + 1,
                             where.groups, 100 * where.searched)),
      reason(why),
      progress(where),
      estimate(size),
      stats(std::move(so_far)) {}

Space Space::build(const SpaceDefinition& definition, const BuildLimits& limits) {
  const auto start = std::chrono::steady_clock::now();
  auto impl = std::make_unique<Impl>();
  impl->parameters = definition.parameters();
  const std::vector<Parameter>& parameters = impl->parameters;
  if (parameters.empty()) throw SpaceError("the space has no parameters");
  for (const Parameter& parameter : parameters) {
    if (parameter.values.empty()) {
      throw SpaceError(fmt::format("parameter '{}' has an empty value list", parameter.name));
    }
  }

  std::vector<CompiledConstraint> constraints = compile(definition);
  const bool controlled = limits.seconds > 0 || limits.memory_bytes > 0 || limits.on_progress;
  Control control{limits};
  // Quick builds draw nothing: the first report comes one interval in.
  control.next_report = control.start + std::chrono::duration_cast<Clock::duration>(
                                            std::chrono::duration<double>(limits.progress_interval_s));
  Enumerator enumerator(parameters, constraints, controlled ? &control : nullptr);
  for (CompiledConstraint& c : constraints) {  // constants: true or false for every configuration
    if (c.reads.empty() && !enumerator.test(c)) {
      c.rejected = 1;
      throw no_valid_configuration(c);
    }
  }

  Partition parts = partition(parameters.size(), constraints);
  impl->group_of.resize(parameters.size());
  impl->column_of.resize(parameters.size());
  control.groups = parts.parameters.size();
  auto cross_product = [&] {
    std::uint64_t product = 1;
    for (const Parameter& parameter : parameters) {
      if (__builtin_mul_overflow(product, parameter.values.size(), &product)) return std::numeric_limits<std::uint64_t>::max();
    }
    return product;
  };
  // A bound was reached in group `stopped.progress.group`: estimate it and the groups after
  // it, in the time set aside for that, and say how far the build got.
  auto stop = [&](const GroupStopped& stopped) {
    std::vector<GroupEstimate> estimates;
    for (const Group& done : impl->groups) {
      if (&done == &impl->groups.back()) break;  // the group that stopped
      estimates.push_back(GroupEstimate{.found = static_cast<double>(done.rows), .exact = true});
    }
    estimates.push_back(stopped.estimate);
    for (std::size_t later = stopped.progress.group + 1; later < parts.parameters.size(); ++later) {
      estimates.push_back(enumerator.estimate(parts.parameters[later], parts.constraints[later]));
    }
    BuildStats so_far;
    so_far.groups = parts.parameters.size();
    so_far.cross_product = cross_product();
    for (std::size_t c = 0; c < constraints.size(); ++c) {
      so_far.constraints.push_back({constraints[c].text, stopped.rejected[c]});
    }
    so_far.seconds = stopped.progress.seconds;
    throw SpaceBuildStopped(stopped.reason, stopped.progress, combine(estimates), std::move(so_far));
  };
  for (std::size_t g = 0; g < parts.parameters.size(); ++g) {
    control.group = g;
    control.group_start = Clock::now();
    Group& group = impl->groups.emplace_back();
    group.parameters = parts.parameters[g];
    std::size_t most_values = 0;
    for (std::size_t column = 0; column < group.width(); ++column) {
      const std::uint32_t p = group.parameters[column];
      impl->group_of[p] = static_cast<std::uint32_t>(g);
      impl->column_of[p] = static_cast<std::uint32_t>(column);
      most_values = std::max(most_values, parameters[p].values.size());
    }
    try {
      if (most_values <= std::size_t{1} << 8) {
        group.cells = enumerator.rows<std::uint8_t>(group.parameters, parts.constraints[g]);
      } else if (most_values <= std::size_t{1} << 16) {
        group.cells = enumerator.rows<std::uint16_t>(group.parameters, parts.constraints[g]);
      } else {
        group.cells = enumerator.rows<std::uint32_t>(group.parameters, parts.constraints[g]);
      }
    } catch (const GroupStopped& stopped) {
      stop(stopped);
    }
    group.rows = visit_cells(group, [](auto cells) { return cells.size(); }) / group.width();
    control.finished_bytes += visit_cells(group, [](auto cells) { return cells.size_bytes(); });
    if (group.rows == 0) {
      auto worst = std::max_element(parts.constraints[g].begin(), parts.constraints[g].end(),
                                    [&](auto a, auto b) { return constraints[a].rejected < constraints[b].rejected; });
      throw no_valid_configuration(constraints[*worst]);
    }
  }

  std::uint64_t size = 1;
  for (auto group = impl->groups.rbegin(); group != impl->groups.rend(); ++group) {
    group->stride = size;
    if (__builtin_mul_overflow(size, group->rows, &size)) {
      throw SpaceError("the space has more valid configurations than a 64-bit index can count");
    }
  }
  impl->size = size;

  BuildStats& stats = impl->stats;
  stats.groups = impl->groups.size();
  stats.cross_product = cross_product();
  for (const CompiledConstraint& c : constraints) stats.constraints.push_back({c.text, c.rejected});
  stats.memory_bytes = impl->storage_bytes();
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return Space(std::move(impl));
}

}  // namespace steer
