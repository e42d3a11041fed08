#include "measure/validation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "steer/error.hpp"

namespace steer {
namespace {

struct Tolerance {
  double abs = 0;
  double rel = 0;

  // `a == e` lets equal infinities pass although their difference is NaN; a NaN fails both.
  // `|`, not `||`: no branch, so the loop below stays cheap.
  template <typename T>
  bool passes(T actual, T expected) const {
    const auto a = static_cast<double>(actual), e = static_cast<double>(expected);
    return (a == e) | (std::fabs(a - e) <= abs + rel * std::fabs(e));
  }
  std::string describe() const { return fmt::format("beyond abs {} + rel {}", abs, rel); }
};

// Distance in units in the last place: how many representable values lie between two
// floating-point numbers (+0 and -0 are 0 apart); for integers, their difference.
template <typename T>
std::uint64_t ulp_distance(T a, T e) {
  if constexpr (std::is_floating_point_v<T>) {
    using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    Bits ua, ue;
    std::memcpy(&ua, &a, sizeof a);
    std::memcpy(&ue, &e, sizeof e);
    constexpr Bits sign = Bits{1} << (8 * sizeof(Bits) - 1);
    const std::uint64_t ma = ua & ~sign, me = ue & ~sign;  // magnitudes, ordered as the values are
    if ((ua & sign) == (ue & sign)) return ma > me ? ma - me : me - ma;
    return ma + me;  // on either side of zero
  } else {
    // In 64-bit unsigned arithmetic, which holds the difference of any two values exactly
    // (subtracting in T or int can overflow at the extremes).
    const auto ua = static_cast<std::uint64_t>(a), ue = static_cast<std::uint64_t>(e);
    return a > e ? ua - ue : ue - ua;
  }
}

struct UlpBound {
  std::uint64_t ulps = 0;

  template <typename T>
  bool passes(T actual, T expected) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(actual) || std::isnan(expected)) return false;
    }
    return actual == expected || ulp_distance(actual, expected) <= ulps;
  }
  std::string describe() const { return fmt::format("by more than {} ULPs", ulps); }
};

// Sets ok and, where elements differ, the message.
void finish(ValidationResult& result, const std::string& describe_check) {
  result.ok = result.mismatches == 0;
  if (result.ok) return;
  result.message = fmt::format("{} of {} elements differ {}; first at index {}: {}, expected {}; max |error| {}",
                               result.mismatches, result.elements, describe_check, result.first_mismatch->index,
                               result.first_mismatch->actual, result.first_mismatch->expected, result.max_abs_error);
}

// Compares elements [begin, end). The buffers need not be aligned for T, so elements are
// copied into aligned blocks first.
template <typename T, typename Check>
ValidationResult compare_range(const std::byte* actual_bytes, const std::byte* expected_bytes, std::size_t begin,
                               std::size_t end, const Check& check) {
  constexpr std::size_t kBlock = 4096;
  std::vector<T> actual(kBlock), expected(kBlock);
  ValidationResult result;
  for (std::size_t first = begin; first < end; first += kBlock) {
    const std::size_t count = std::min(kBlock, end - first);
    std::memcpy(actual.data(), actual_bytes + first * sizeof(T), count * sizeof(T));
    std::memcpy(expected.data(), expected_bytes + first * sizeof(T), count * sizeof(T));

    std::size_t failures = 0;
    double max_error = result.max_abs_error;
    for (std::size_t i = 0; i < count; ++i) {
      const auto a = static_cast<double>(actual[i]), e = static_cast<double>(expected[i]);
      const double error = std::fabs(a - e);
      failures += check.passes(actual[i], expected[i]) ? 0 : 1;
      max_error = error > max_error ? error : max_error;  // a NaN error compares false: left out
    }
    result.max_abs_error = max_error;
    if (failures > 0 && !result.first_mismatch) {  // search only a block that has one
      std::size_t i = 0;
      while (check.passes(actual[i], expected[i])) ++i;
      result.first_mismatch = Mismatch{first + i, static_cast<double>(actual[i]), static_cast<double>(expected[i])};
    }
    result.mismatches += failures;
  }
  return result;
}

// Large outputs (64M elements at the paper's sizes) are split over the hardware threads. The
// loop costs ~2 ns an element on one core (bench/output_validation), so a 4096² matrix took
// ~17 ms of each ~97 ms timing-only test on the H200's 16 cores when a thread needed 4M
// elements (4 threads); from 1M elements on, all 16 share it (each then has ~2 ms of work,
// far more than starting a thread costs).
template <typename T, typename Check>
ValidationResult compare(const std::byte* actual, const std::byte* expected, std::size_t n, const Check& check) {
  constexpr std::size_t kMinElementsPerThread = std::size_t{1} << 20;
  const std::size_t threads =
      std::clamp<std::size_t>(n / kMinElementsPerThread, 1, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<ValidationResult> parts(threads);
  {
    std::vector<std::jthread> workers;
    for (std::size_t t = 1; t < threads; ++t)
      workers.emplace_back([&, t] { parts[t] = compare_range<T>(actual, expected, n * t / threads, n * (t + 1) / threads, check); });
    parts[0] = compare_range<T>(actual, expected, 0, n / threads, check);
  }

  ValidationResult result{.elements = n};
  for (const ValidationResult& part : parts) {  // in order, so the first mismatch found is the first
    result.mismatches += part.mismatches;
    result.max_abs_error = std::max(result.max_abs_error, part.max_abs_error);
    if (!result.first_mismatch) result.first_mismatch = part.first_mismatch;
  }
  finish(result, check.describe());
  return result;
}

}  // namespace

ValidationResult comparison_result(std::size_t elements, std::size_t mismatches, double max_abs_error,
                                   const Mismatch& first, const Comparison& comparison) {
  ValidationResult result{.elements = elements, .mismatches = mismatches, .max_abs_error = max_abs_error};
  if (mismatches > 0) result.first_mismatch = first;
  finish(result, comparison.kind == Comparison::Kind::Ulps ? UlpBound{comparison.ulps}.describe()
                                                           : Tolerance{comparison.abs, comparison.rel}.describe());
  return result;
}

ValidationResult validate_output(ElementType type, std::span<const std::byte> actual,
                                 std::span<const std::byte> expected, double abs_tolerance, double rel_tolerance) {
  return validate_output(type, actual, expected,
                         Comparison{.kind = Comparison::Kind::Tolerance, .abs = abs_tolerance, .rel = rel_tolerance});
}

ValidationResult validate_output(ElementType type, std::span<const std::byte> actual,
                                 std::span<const std::byte> expected, const Comparison& comparison) {
  if (comparison.kind == Comparison::Kind::Ignore) return ValidationResult{};
  const auto run = [&]<typename T>(T) {
    if (actual.size() != expected.size() || actual.size() % sizeof(T) != 0)
      throw Error(fmt::format("validation: output of {} bytes against a reference of {} bytes of {}-byte elements",
                              actual.size(), expected.size(), sizeof(T)));
    const std::size_t n = actual.size() / sizeof(T);
    if (comparison.kind == Comparison::Kind::Ulps)
      return compare<T>(actual.data(), expected.data(), n, UlpBound{comparison.ulps});
    return compare<T>(actual.data(), expected.data(), n, Tolerance{comparison.abs, comparison.rel});
  };
  switch (type) {
    case ElementType::F32: return run(float{});
    case ElementType::F64: return run(double{});
    case ElementType::I32: return run(std::int32_t{});
    case ElementType::U32: return run(std::uint32_t{});
    case ElementType::I64: return run(std::int64_t{});
    case ElementType::U64: return run(std::uint64_t{});
    case ElementType::I8: return run(std::int8_t{});
    case ElementType::U8: return run(std::uint8_t{});
  }
  throw Error("validation: unknown element type");
}

}  // namespace steer
