// Spec look-ups: problem sizes by name, work rates.
#include <fmt/core.h>

#include "steer/error.hpp"
#include "steer/spec.hpp"

namespace steer {

const ProblemSize& Spec::size(std::string_view size_name) const {
  for (const ProblemSize& candidate : sizes) {
    if (candidate.name == size_name) return candidate;
  }
  std::string choices;
  for (const ProblemSize& candidate : sizes) {
    choices += choices.empty() ? candidate.name : ", " + candidate.name;
  }
  throw SpecError(fmt::format("spec '{}' has no size '{}' ({})", name, size_name,
                              choices.empty() ? "it defines no sizes" : "sizes: " + choices));
}

Throughput throughput(const ProblemSize& size, double median_ms) {
  Throughput rate;
  if (!(median_ms > 0)) return rate;
  const double seconds = median_ms / 1e3;
  if (size.flops && *size.flops > 0) rate.gflop_per_s = *size.flops / seconds / 1e9;
  if (size.bytes && *size.bytes > 0) rate.gb_per_s = *size.bytes / seconds / 1e9;
  return rate;
}

}  // namespace steer
