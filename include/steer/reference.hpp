#pragma once
// CPU references: functions that compute a benchmark's expected outputs, registered by
// name so a spec can say {"reference": {"cpu": "transpose"}}.
//
//   static void transpose_reference(const steer::ReferenceInput& in, steer::ReferenceOutputs& out);
//   STEER_REGISTER_REFERENCE("transpose", transpose_reference);
#include <cstddef>
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
};

// One entry per output argument, in argument order, each pre-sized to that argument's bytes.
using ReferenceOutputs = std::vector<std::vector<std::byte>>;
using ReferenceFunction = std::function<void(const ReferenceInput&, ReferenceOutputs&)>;

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
