// The small vocabulary of specs: languages, element types, size lookup, work rates.
#include <fmt/core.h>

#include "steer/error.hpp"
#include "steer/spec.hpp"

namespace steer {

const char* to_string(Language language) noexcept {
  switch (language) {
    case Language::Cuda: return "cuda";
    case Language::OpenCL: return "opencl";
  }
  return "?";
}

std::size_t size_of(ElementType type) noexcept {
  switch (type) {
    case ElementType::F64:
    case ElementType::I64:
    case ElementType::U64: return 8;
    case ElementType::F32:
    case ElementType::I32:
    case ElementType::U32: return 4;
    case ElementType::I8:
    case ElementType::U8: return 1;
  }
  return 0;
}

const char* to_string(ElementType type) noexcept {
  switch (type) {
    case ElementType::F32: return "float";
    case ElementType::F64: return "double";
    case ElementType::I32: return "int32";
    case ElementType::U32: return "uint32";
    case ElementType::I64: return "int64";
    case ElementType::U64: return "uint64";
    case ElementType::I8: return "int8";
    case ElementType::U8: return "uint8";
  }
  return "?";
}

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
