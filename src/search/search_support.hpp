#pragma once
// What the searchers of src/search/ share: reading their settings, remembering what was
// tested, seeded random draws that give the same numbers with any standard library, and
// turning an invalid configuration into a valid one. Internal to src/search/.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "steer/error.hpp"
#include "steer/result.hpp"
#include "steer/space.hpp"

namespace steer::search {

// Failed tests (compile error, launch error, wrong output, ...) count as infinitely slow,
// so no searcher ever prefers one. Under an objective other than time the loop sets the
// result's score, and every searcher ranks by that instead (NaN: could not be scored).
inline double cost_of(const Result& result) {
  if (!result.ok()) return std::numeric_limits<double>::infinity();
  if (result.score) return std::isnan(*result.score) ? std::numeric_limits<double>::infinity() : *result.score;
  return result.time.median_ms;
}

// What the tests seen so far cost in compiling and on the device, for a searcher that keeps
// several proposals pending so that the loop compiles them while one runs.
class TestCosts {
 public:
  void observe(const Result& result) {
    compile_ms_.push_back(result.compile_ms);
    if (!result.ok() && result.time.samples_ms.empty()) return;  // no launch timed
    double device_ms = result.validation_ms + result.overhead_ms;
    if (result.time.samples_ms.empty()) {
      device_ms += result.time.median_ms * std::max(1, result.time.repetitions);
    } else {
      for (double sample : result.time.samples_ms) device_ms += sample;
    }
    device_ms_.push_back(device_ms);
  }
  // The tests in the pipeline that keep the device busy: the one that runs and enough
  // compiling meanwhile to cover a typical compile (1 before a test was timed).
  std::size_t pipeline_depth() const {
    if (compile_ms_.empty() || device_ms_.empty()) return 1;
    const double device = median(device_ms_);
    const double compile = median(compile_ms_);
    if (!(device > 0)) return std::numeric_limits<std::size_t>::max();
    return 1 + static_cast<std::size_t>(std::ceil(std::min(compile / device, 1e6)));
  }

 private:
  static double median(std::vector<double> values) {
    auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
    std::nth_element(values.begin(), middle, values.end());
    return *middle;
  }
  std::vector<double> compile_ms_, device_ms_;
};

// Seeded draws written out rather than through std::*_distribution, whose algorithms differ
// between standard libraries: a seed must give the same search everywhere.
class Random {
 public:
  explicit Random(std::uint64_t seed) : engine_(seed) {}
  std::mt19937_64& engine() { return engine_; }
  // Uniform in [0, 1).
  double unit() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n), n > 0 (rejection sampling, no modulo bias).
  std::uint64_t below(std::uint64_t n) {
    const std::uint64_t limit =
        std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % n;
    for (;;) {
      std::uint64_t x = engine_();
      if (x < limit) return x % n;
    }
  }
  bool chance(double p) { return unit() < p; }
  template <typename T>
  void shuffle(std::vector<T>& items) {
    for (std::size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[below(i)]);
  }

 private:
  std::mt19937_64 engine_;
};

// Reads a searcher's NAME=VALUE settings; `finish()` rejects any name that was not read, so
// a typo never silently falls back to a default.
class Settings {
 public:
  Settings(std::string searcher, std::map<std::string, std::string> values)
      : searcher_(std::move(searcher)), values_(std::move(values)) {}

  double number(const std::string& name, double fallback, double min, double max) {
    const std::string* text = take(name);
    if (!text) return fallback;
    double value = 0;
    std::size_t used = 0;
    try {
      value = std::stod(*text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text->size() || !(value >= min && value <= max)) {
      throw Error(fmt::format("searcher '{}': setting {}={} is not a number in [{}, {}]", searcher_, name,
                              *text, min, max));
    }
    return value;
  }
  std::uint64_t integer(const std::string& name, std::uint64_t fallback, std::uint64_t min,
                        std::uint64_t max) {
    double value =
        number(name, static_cast<double>(fallback), static_cast<double>(min), static_cast<double>(max));
    if (value != std::floor(value)) {
      throw Error(fmt::format("searcher '{}': setting {} must be a whole number", searcher_, name));
    }
    return static_cast<std::uint64_t>(value);
  }
  std::string choice(const std::string& name, const std::string& fallback,
                     const std::vector<std::string>& allowed) {
    const std::string* text = take(name);
    if (!text) return fallback;
    for (const std::string& option : allowed) {
      if (*text == option) return option;
    }
    throw Error(fmt::format("searcher '{}': setting {}={} is not one of {}", searcher_, name, *text,
                            fmt::join(allowed, ", ")));
  }
  // Free text; empty when not given.
  std::string text(const std::string& name) {
    const std::string* value = take(name);
    return value ? *value : std::string();
  }
  bool flag(const std::string& name, bool fallback) {
    return choice(name, fallback ? "true" : "false", {"true", "false"}) == "true";
  }
  // Throws Error naming every setting that the searcher does not know, and the known ones.
  void finish() const {
    std::vector<std::string> unknown;
    for (const auto& [name, value] : values_) {
      if (!read_.contains(name)) unknown.push_back(name);
    }
    if (!unknown.empty()) {
      throw Error(fmt::format("searcher '{}': unknown setting(s) {}; {}", searcher_, fmt::join(unknown, ", "),
                              read_.empty() ? std::string("it has no settings")
                                            : fmt::format("known: {}", fmt::join(read_, ", "))));
    }
  }

 private:
  const std::string* take(const std::string& name) {
    read_.insert(name);
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }

  std::string searcher_;
  std::map<std::string, std::string> values_;
  std::set<std::string> read_;
};

// What happened to each configuration: never proposed, proposed and waiting for its result,
// or measured (with its cost). Dense over ConfigIndex, one byte per configuration, so a
// space of 10^8 configurations costs 100 MB; costs are kept only for measured ones.
class Memory {
 public:
  void reset(std::uint64_t size) {
    state_.assign(size, State::Unseen);
    costs_.clear();
    proposed_ = 0;
    pending_ = 0;
  }
  std::uint64_t size() const { return state_.size(); }
  bool seen(ConfigIndex c) const { return state_[c] != State::Unseen; }
  bool measured(ConfigIndex c) const { return state_[c] == State::Measured; }
  double cost(ConfigIndex c) const { return costs_.at(c); }
  std::uint64_t pending() const { return pending_; }
  bool exhausted() const { return proposed_ == state_.size(); }

  void propose(ConfigIndex c) {
    state_[c] = State::Pending;
    ++proposed_;
    ++pending_;
  }
  // Returns the cost recorded for the result.
  double observe(const Result& result) {
    const ConfigIndex c = result.config_index;
    if (c >= state_.size() || state_[c] != State::Pending) {
      throw Error(fmt::format("searcher: result for configuration {} that was not proposed", c));
    }
    state_[c] = State::Measured;
    --pending_;
    return costs_[c] = cost_of(result);
  }

  // A uniformly random configuration never proposed, or nullopt when none is left. Draws
  // from the whole space first (cheap while most is unseen), then walks from a random point.
  std::optional<ConfigIndex> random_unseen(const Space& space, Random& random) const {
    if (exhausted()) return std::nullopt;
    for (int attempt = 0; attempt < 64; ++attempt) {
      ConfigIndex c = space.sample(random.engine());
      if (!seen(c)) return c;
    }
    const std::uint64_t n = state_.size();
    const std::uint64_t from = random.below(n);
    for (std::uint64_t step = 0; step < n; ++step) {
      ConfigIndex c = (from + step) % n;
      if (!seen(c)) return c;
    }
    return std::nullopt;
  }

 private:
  enum class State : std::uint8_t { Unseen, Pending, Measured };
  std::vector<State> state_;
  std::map<ConfigIndex, double> costs_;
  std::uint64_t proposed_ = 0;
  std::uint64_t pending_ = 0;
};

// The valid configuration nearest to `wanted` on the way to the valid `anchor`: parameters
// return to the anchor's values one at a time, in random order, until the configuration is
// valid (at the latest it is the anchor itself). Used for mutated, crossed and jumped
// configurations that break a constraint.
inline ConfigIndex repair(const Space& space, ValueIndices wanted, const ValueIndices& anchor,
                          Random& random) {
  std::vector<std::size_t> order;
  for (std::size_t p = 0; p < wanted.size(); ++p) {
    if (wanted[p] != anchor[p]) order.push_back(p);
  }
  random.shuffle(order);
  for (std::size_t p : order) {
    if (auto index = space.index_of(wanted)) return *index;
    wanted[p] = anchor[p];
  }
  return *space.index_of(wanted);
}

// A random configuration reached from `from` by `moves` random steps to Hamming-1 neighbours
// (Kernel Tuner's mutate); fewer steps when a configuration has no neighbour.
inline ConfigIndex random_walk(const Space& space, ConfigIndex from, std::uint64_t moves, Random& random) {
  for (std::uint64_t m = 0; m < moves; ++m) {
    std::vector<ConfigIndex> next = space.neighbours(from);
    if (next.empty()) break;
    from = next[random.below(next.size())];
  }
  return from;
}

// scipy's RandomDisplacement (basin hopping's jump) in value units: every parameter's position
// moves by a uniform real in [-stepsize, stepsize] from the centre of its value and snaps to
// the nearest value (clamped to its list), as Kernel Tuner's scaled coordinates do. With
// stepsize 1 a parameter moves one value either way with probability 1/4 each and stays with
// probability 1/2. An invalid result is repaired toward `from`.
inline ConfigIndex displace(const Space& space, ConfigIndex from, double stepsize, Random& random) {
  const ValueIndices anchor = space.value_indices(from);
  ValueIndices target = anchor;
  const auto& parameters = space.parameters();
  for (std::size_t p = 0; p < target.size(); ++p) {
    const auto last = static_cast<std::int64_t>(parameters[p].values.size()) - 1;
    const auto step = static_cast<std::int64_t>(std::llround((2 * random.unit() - 1) * stepsize));
    target[p] = static_cast<std::uint32_t>(std::clamp<std::int64_t>(target[p] + step, 0, last));
  }
  return repair(space, target, anchor, random);
}

// The valid configurations that swap the values of two parameters of one value list (MDIMC and
// NDIMC, the block's two sides): one exchange each, in parameter order. A model of the counters
// sees an exchange as alike, and no one-parameter step reaches it.
inline std::vector<ConfigIndex> exchanges(const Space& space, ConfigIndex from) {
  const ValueIndices at = space.value_indices(from);
  const auto& parameters = space.parameters();
  std::vector<ConfigIndex> out;
  for (std::size_t p = 0; p < at.size(); ++p) {
    for (std::size_t q = p + 1; q < at.size(); ++q) {
      if (at[p] == at[q] || parameters[p].values != parameters[q].values) continue;
      ValueIndices swapped = at;
      std::swap(swapped[p], swapped[q]);
      if (const std::optional<ConfigIndex> c = space.index_of(swapped)) out.push_back(*c);
    }
  }
  return out;
}

}  // namespace steer::search
