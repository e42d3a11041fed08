// Spec look-ups: problem sizes by name, an output's comparison, work rates; the content hash.
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

Comparison Reference::comparison(std::string_view name) const {
  if (const auto found = comparisons.find(std::string(name)); found != comparisons.end()) return found->second;
  return Comparison{.kind = Comparison::Kind::Tolerance, .abs = abs_tolerance, .rel = rel_tolerance};
}

// FNV-1a, 64 bits: stable across builds and platforms, unlike std::hash.
std::string content_hash(std::string_view bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char byte : bytes) {
    hash ^= byte;
    hash *= 0x100000001b3ULL;
  }
  return fmt::format("{:016x}", hash);
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
