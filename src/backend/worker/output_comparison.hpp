#pragma once
// Comparing outputs on the device (Backend::expect_outputs): one small kernel per element
// type, in CUDA or OpenCL C from the same text, that tests every element exactly as
// validate_output does on the host (measure/validation.cpp) and leaves one summary per
// work-group: mismatches, the first mismatch's index and the largest error. The worker reads
// those summaries back (24 bytes a group) instead of the output itself.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "steer/backend.hpp"
#include "steer/spec.hpp"
#include "steer/types.hpp"

namespace steer::worker {

inline constexpr const char* kComparisonKernel = "steer_compare_outputs";
inline constexpr std::uint64_t kComparisonGroupSize = 256;  // the kernel's reduction assumes it
inline constexpr std::uint64_t kComparisonMaxGroups = 1024;
inline constexpr std::size_t kComparisonWordsPerGroup = 3;  // mismatches, first index, max error's bits

// How one output is compared, sent with each request that compares (RunRequest::compared).
struct ComparedOutput {
  std::size_t argument = 0;
  bool ulps_bound = false;  // Comparison::Kind::Ulps; else Tolerance
  double abs = 0, rel = 0;
  std::uint64_t ulps = 0;
};

ComparedOutput compared_output(std::size_t argument, const Comparison& comparison);

// The comparison kernel's source for elements of `type`. It takes (actual, expected, n,
// ulps_bound (int), abs, rel, ulps, partials) and runs comparison_groups(n) groups of
// kComparisonGroupSize work-items. CUDA needs it compiled without contracting a * b + c
// (NVRTC --fmad=false), as the host computes abs + rel * |e|; the OpenCL text turns
// contraction off itself.
std::string comparison_kernel_source(Language language, ElementType type);

std::uint64_t comparison_groups(std::uint64_t elements);

// The groups' summaries (kComparisonWordsPerGroup words each) added up: mismatches, the
// first mismatch's index and the largest error. `elements` and the first mismatch's values
// are the caller's to fill.
OutputComparison reduce_comparison(std::span<const std::uint64_t> partials);

// One element of `type`, as a double (for the first mismatch's values).
double element_as_double(ElementType type, const std::byte* element);

}  // namespace steer::worker
