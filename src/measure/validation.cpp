#include "measure/validation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "steer/error.hpp"

namespace steer {
namespace {

struct Tolerance {
  double abs = 0;
  double rel = 0;
};

// `a == e` lets equal infinities pass although their difference is NaN; a NaN fails both.
// `|`, not `||`: no branch, so the loop below stays cheap.
bool passes(double a, double e, const Tolerance& tolerance) {
  return (a == e) | (std::fabs(a - e) <= tolerance.abs + tolerance.rel * std::fabs(e));
}

// Compares elements [begin, end). The buffers need not be aligned for T, so elements are
// copied into aligned blocks first.
template <typename T>
ValidationResult compare_range(const std::byte* actual_bytes, const std::byte* expected_bytes, std::size_t begin,
                               std::size_t end, const Tolerance& tolerance) {
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
      failures += passes(a, e, tolerance) ? 0 : 1;
      max_error = error > max_error ? error : max_error;  // a NaN error compares false: left out
    }
    result.max_abs_error = max_error;
    if (failures > 0 && !result.first_mismatch) {  // search only a block that has one
      std::size_t i = 0;
      while (passes(static_cast<double>(actual[i]), static_cast<double>(expected[i]), tolerance)) ++i;
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
template <typename T>
ValidationResult compare(const std::byte* actual, const std::byte* expected, std::size_t n,
                         const Tolerance& tolerance) {
  constexpr std::size_t kMinElementsPerThread = std::size_t{1} << 20;
  const std::size_t threads =
      std::clamp<std::size_t>(n / kMinElementsPerThread, 1, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<ValidationResult> parts(threads);
  {
    std::vector<std::jthread> workers;
    for (std::size_t t = 1; t < threads; ++t)
      workers.emplace_back([&, t] { parts[t] = compare_range<T>(actual, expected, n * t / threads, n * (t + 1) / threads, tolerance); });
    parts[0] = compare_range<T>(actual, expected, 0, n / threads, tolerance);
  }

  ValidationResult result{.elements = n};
  for (const ValidationResult& part : parts) {  // in order, so the first mismatch found is the first
    result.mismatches += part.mismatches;
    result.max_abs_error = std::max(result.max_abs_error, part.max_abs_error);
    if (!result.first_mismatch) result.first_mismatch = part.first_mismatch;
  }
  result.ok = result.mismatches == 0;
  if (!result.ok)
    result.message = fmt::format("{} of {} elements differ beyond abs {} + rel {}; first at index {}: {}, expected {}; "
                                 "max |error| {}",
                                 result.mismatches, n, tolerance.abs, tolerance.rel, result.first_mismatch->index,
                                 result.first_mismatch->actual, result.first_mismatch->expected, result.max_abs_error);
  return result;
}

}  // namespace

ValidationResult validate_output(ElementType type, std::span<const std::byte> actual,
                                 std::span<const std::byte> expected, double abs_tolerance, double rel_tolerance) {
  const Tolerance tolerance{abs_tolerance, rel_tolerance};
  const auto run = [&]<typename T>(T) {
    if (actual.size() != expected.size() || actual.size() % sizeof(T) != 0)
      throw Error(fmt::format("validation: output of {} bytes against a reference of {} bytes of {}-byte elements",
                              actual.size(), expected.size(), sizeof(T)));
    return compare<T>(actual.data(), expected.data(), actual.size() / sizeof(T), tolerance);
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
