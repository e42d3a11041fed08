#include "backend/worker/output_comparison.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "steer/error.hpp"

namespace steer::worker {
namespace {

// What differs between the two languages; the kernel below is written in their common part.
constexpr const char* kCudaPrelude = R"(typedef unsigned long long u64;
#define DEVICE __device__
#define KERNEL extern "C" __global__
#define GLOBAL
#define LOCAL __shared__
#define LOCAL_ID threadIdx.x
#define GROUP_ID blockIdx.x
#define GROUPS gridDim.x
#define BARRIER() __syncthreads()
#define BITS32(x) ((u64)__float_as_uint(x))
#define BITS64(x) ((u64)__double_as_longlong(x))
)";

constexpr const char* kOpenclPrelude = R"(#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF
typedef ulong u64;
#define DEVICE
#define KERNEL __kernel
#define GLOBAL __global
#define LOCAL __local
#define LOCAL_ID get_local_id(0)
#define GROUP_ID get_group_id(0)
#define GROUPS get_num_groups(0)
#define BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#define BITS32(x) ((u64)as_uint(x))
#define BITS64(x) as_ulong(x)
)";

// The same tests as measure/validation.cpp, element for element: within a tolerance
// (a == e, or |a - e| <= abs + rel * |e|, in double), or within a number of ULPs; NaN never
// passes; the largest error leaves NaN errors out.
constexpr const char* kKernel = R"(
DEVICE u64 ulp_distance(T a, T e) {
#if FLOATING
  const u64 ua = BITS(a), ue = BITS(e);
  const u64 ma = ua & ~SIGN_BIT, me = ue & ~SIGN_BIT;
  if ((ua & SIGN_BIT) == (ue & SIGN_BIT)) return ma > me ? ma - me : me - ma;
  return ma + me;
#else
  return a > e ? (u64)a - (u64)e : (u64)e - (u64)a;
#endif
}

DEVICE int within_ulps(T a, T e, u64 ulps) {
#if FLOATING
  if (isnan(a) || isnan(e)) return 0;
#endif
  return a == e || ulp_distance(a, e) <= ulps;
}

KERNEL void steer_compare_outputs(GLOBAL const T* actual, GLOBAL const T* expected, u64 n, int ulps_bound,
                                  double abs_tolerance, double rel_tolerance, u64 ulps, GLOBAL u64* partials) {
  LOCAL u64 group_mismatches[GROUP_SIZE];
  LOCAL u64 group_first[GROUP_SIZE];
  LOCAL double group_error[GROUP_SIZE];
  u64 mismatches = 0;
  u64 first = ~(u64)0;
  double max_error = 0.0;
  const u64 stride = (u64)GROUPS * GROUP_SIZE;
  for (u64 i = (u64)GROUP_ID * GROUP_SIZE + LOCAL_ID; i < n; i += stride) {
    const T a = actual[i];
    const T e = expected[i];
    const double da = (double)a;
    const double de = (double)e;
    const double error = fabs(da - de);
    const int passes =
        ulps_bound ? within_ulps(a, e, ulps) : ((da == de) | (error <= abs_tolerance + rel_tolerance * fabs(de)));
    if (!passes) {
      if (mismatches == 0) first = i;
      mismatches += 1;
    }
    if (error > max_error) max_error = error;
  }
  const unsigned int t = LOCAL_ID;
  group_mismatches[t] = mismatches;
  group_first[t] = first;
  group_error[t] = max_error;
  BARRIER();
  for (unsigned int width = GROUP_SIZE / 2; width > 0; width >>= 1) {
    if (t < width) {
      group_mismatches[t] += group_mismatches[t + width];
      if (group_first[t + width] < group_first[t]) group_first[t] = group_first[t + width];
      if (group_error[t + width] > group_error[t]) group_error[t] = group_error[t + width];
    }
    BARRIER();
  }
  if (t == 0) {
    partials[3 * GROUP_ID] = group_mismatches[0];
    partials[3 * GROUP_ID + 1] = group_first[0];
    partials[3 * GROUP_ID + 2] = BITS64(group_error[0]);
  }
}
)";

struct TypeText {
  const char* cuda;
  const char* opencl;
  int floating_bits;  // 32 or 64 for floating point, else 0
};

TypeText type_text(ElementType type) {
  switch (type) {
    case ElementType::F32: return {"float", "float", 32};
    case ElementType::F64: return {"double", "double", 64};
    case ElementType::I32: return {"int", "int", 0};
    case ElementType::U32: return {"unsigned int", "uint", 0};
    case ElementType::I64: return {"long long", "long", 0};
    case ElementType::U64: return {"unsigned long long", "ulong", 0};
    case ElementType::I8: return {"signed char", "char", 0};
    case ElementType::U8: return {"unsigned char", "uchar", 0};
  }
  throw Error("output comparison: unknown element type");
}

template <typename T>
double as_double(const std::byte* element) {
  T value;
  std::memcpy(&value, element, sizeof value);
  return static_cast<double>(value);
}

}  // namespace

ComparedOutput compared_output(std::size_t argument, const Comparison& comparison) {
  return ComparedOutput{.argument = argument,
                        .ulps_bound = comparison.kind == Comparison::Kind::Ulps,
                        .abs = comparison.abs,
                        .rel = comparison.rel,
                        .ulps = comparison.ulps};
}

std::string comparison_kernel_source(Language language, ElementType type) {
  const TypeText text = type_text(type);
  std::string source = language == Language::Cuda ? kCudaPrelude : kOpenclPrelude;
  source += fmt::format("#define GROUP_SIZE {}\ntypedef {} T;\n", kComparisonGroupSize,
                        language == Language::Cuda ? text.cuda : text.opencl);
  if (text.floating_bits > 0) {
    source += fmt::format("#define FLOATING 1\n#define BITS(x) BITS{}(x)\n#define SIGN_BIT ((u64)1 << {})\n",
                          text.floating_bits, text.floating_bits - 1);
  } else {
    source += "#define FLOATING 0\n";
  }
  return source + kKernel;
}

std::uint64_t comparison_groups(std::uint64_t elements) {
  return std::clamp<std::uint64_t>((elements + kComparisonGroupSize - 1) / kComparisonGroupSize, 1,
                                   kComparisonMaxGroups);
}

OutputComparison reduce_comparison(std::span<const std::uint64_t> partials) {
  OutputComparison result;
  result.first_mismatch = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t g = 0; g + kComparisonWordsPerGroup <= partials.size(); g += kComparisonWordsPerGroup) {
    result.mismatches += partials[g];
    result.first_mismatch = std::min(result.first_mismatch, partials[g + 1]);
    double error = 0;
    std::memcpy(&error, &partials[g + 2], sizeof error);
    result.max_abs_error = std::max(result.max_abs_error, error);
  }
  if (result.mismatches == 0) result.first_mismatch = 0;
  return result;
}

double element_as_double(ElementType type, const std::byte* element) {
  switch (type) {
    case ElementType::F32: return as_double<float>(element);
    case ElementType::F64: return as_double<double>(element);
    case ElementType::I32: return as_double<std::int32_t>(element);
    case ElementType::U32: return as_double<std::uint32_t>(element);
    case ElementType::I64: return as_double<std::int64_t>(element);
    case ElementType::U64: return as_double<std::uint64_t>(element);
    case ElementType::I8: return as_double<std::int8_t>(element);
    case ElementType::U8: return as_double<std::uint8_t>(element);
  }
  throw Error("output comparison: unknown element type");
}

}  // namespace steer::worker
