#pragma once
// Output validation: a computed buffer against the expected one, element by element, as a
// Comparison (steer/spec.hpp) says: within a tolerance (actual == expected or |actual -
// expected| <= abs + rel * |expected|), within a number of ULPs, or not at all. NaN never
// passes (not even against NaN).
#include <cstddef>
#include <optional>
#include <span>
#include <string>

#include "steer/spec.hpp"

namespace steer {

struct Mismatch {
  std::size_t index = 0;
  double actual = 0;
  double expected = 0;
};

struct ValidationResult {
  bool ok = true;
  std::size_t elements = 0;
  std::size_t mismatches = 0;
  double max_abs_error = 0;  // largest |actual - expected| over the elements without NaN
  std::optional<Mismatch> first_mismatch;
  // Empty when ok, else e.g. "3 of 4096 elements differ beyond abs 0 + rel 0; first at
  // index 17: 1.5, expected 1.25; max |error| 0.25" ("differ by more than 4 ULPs" for Ulps).
  std::string message;
};

// The result of a comparison made elsewhere (on the device, Backend::expect_outputs), as
// validate_output would have phrased it: `first` matters only when there are mismatches.
ValidationResult comparison_result(std::size_t elements, std::size_t mismatches, double max_abs_error,
                                   const Mismatch& first, const Comparison& comparison);

// Throws Error if the buffers' sizes differ or are not a whole number of elements.
ValidationResult validate_output(ElementType type, std::span<const std::byte> actual,
                                 std::span<const std::byte> expected, const Comparison& comparison);
// The same with a tolerance.
ValidationResult validate_output(ElementType type, std::span<const std::byte> actual,
                                 std::span<const std::byte> expected, double abs_tolerance, double rel_tolerance);

}  // namespace steer
