#pragma once
// CPU references: functions that compute a benchmark's expected outputs, registered by
// name so a spec can say {"reference": {"cpu": "transpose"}}.
//
//   static void transpose_reference(const steer::ReferenceInput& in, steer::ReferenceOutputs& out);
//   STEER_REGISTER_REFERENCE("transpose", transpose_reference);
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "steer/backend.hpp"
#include "steer/spec.hpp"

namespace steer {

struct ReferenceInput {
  const ProblemSize& size;                   // the problem-size variables
  std::span<const HostArgument> arguments;   // initialised inputs, in spec order
  // The argument by name; throws Error if absent.
  const HostArgument& argument(std::string_view name) const;
  // A size variable as an integer; throws Error if absent.
  std::int64_t variable(std::string_view name) const;
  // The scalar argument `name` as T; throws Error if it is a buffer or not of type T.
  template <typename T>
  T scalar(std::string_view name) const;
  // The first `count` elements of buffer `name`, copied (so aligned for T); throws Error
  // if it is not a buffer of T or holds fewer elements.
  template <typename T>
  std::vector<T> buffer(std::string_view name, std::size_t count) const;

 private:
  // The argument, checked to be a scalar or buffer of `type` with at least `bytes` bytes.
  const HostArgument& typed(std::string_view name, ElementType type, bool is_buffer, std::size_t bytes) const;
};

namespace detail {
template <typename T>
constexpr ElementType element_type_of() {
  if constexpr (std::is_same_v<T, float>) return ElementType::F32;
  else if constexpr (std::is_same_v<T, double>) return ElementType::F64;
  else if constexpr (std::is_same_v<T, std::int32_t>) return ElementType::I32;
  else if constexpr (std::is_same_v<T, std::uint32_t>) return ElementType::U32;
  else if constexpr (std::is_same_v<T, std::int64_t>) return ElementType::I64;
  else if constexpr (std::is_same_v<T, std::uint64_t>) return ElementType::U64;
  else if constexpr (std::is_same_v<T, std::int8_t>) return ElementType::I8;
  else {
    static_assert(std::is_same_v<T, std::uint8_t>, "not an element type of a kernel argument");
    return ElementType::U8;
  }
}
}  // namespace detail

template <typename T>
T ReferenceInput::scalar(std::string_view name) const {
  const HostArgument& argument = typed(name, detail::element_type_of<T>(), false, sizeof(T));
  T value;
  std::memcpy(&value, argument.data.data(), sizeof value);
  return value;
}

template <typename T>
std::vector<T> ReferenceInput::buffer(std::string_view name, std::size_t count) const {
  const HostArgument& argument = typed(name, detail::element_type_of<T>(), true, count * sizeof(T));
  std::vector<T> values(count);
  if (count > 0) std::memcpy(values.data(), argument.data.data(), count * sizeof(T));
  return values;
}

// One entry per output argument, in argument order, each pre-sized to that argument's bytes.
using ReferenceOutputs = std::vector<std::vector<std::byte>>;
using ReferenceFunction = std::function<void(const ReferenceInput&, ReferenceOutputs&)>;

// A comparison of one output given in code: whether `actual` is acceptable against
// `expected` (both the output's bytes, elements of `type`); when not, it may say why in
// `message`.
using OutputComparator = std::function<bool(ElementType type, std::span<const std::byte> actual,
                                            std::span<const std::byte> expected, std::string& message)>;

void register_reference(std::string name, ReferenceFunction function);
// Throws Error naming the registered references when `name` is unknown.
const ReferenceFunction& find_reference(std::string_view name);
std::vector<std::string> registered_references();

namespace detail {
struct ReferenceRegistrar {
  ReferenceRegistrar(const char* name, ReferenceFunction function) {
    register_reference(name, std::move(function));
  }
};
}  // namespace detail

}  // namespace steer

#define STEER_REFERENCE_CONCAT_(a, b) a##b
#define STEER_REFERENCE_CONCAT(a, b) STEER_REFERENCE_CONCAT_(a, b)
#define STEER_REGISTER_REFERENCE(name, function)                                  \
  static const ::steer::detail::ReferenceRegistrar STEER_REFERENCE_CONCAT(       \
      steer_reference_registrar_, __LINE__) {                                   \
    name, function                                                               \
  }
