// The registry of CPU reference functions, filled by static registration
// (STEER_REGISTER_REFERENCE) before main().
#include <algorithm>
#include <map>
#include <mutex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "steer/reference.hpp"

namespace steer {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, ReferenceFunction, std::less<>> functions;
};

// A function-local static, so that registrations from other translation units' static
// initialisers find it constructed whatever the initialisation order.
Registry& registry() {
  static Registry instance;
  return instance;
}

}  // namespace

const HostArgument& ReferenceInput::argument(std::string_view name) const {
  const auto found = std::find_if(arguments.begin(), arguments.end(),
                                  [&](const HostArgument& argument) { return argument.name == name; });
  if (found == arguments.end()) {
    std::vector<std::string_view> names;
    for (const auto& argument : arguments) names.push_back(argument.name);
    throw Error(fmt::format("reference: no argument '{}' (arguments: {})", name, fmt::join(names, ", ")));
  }
  return *found;
}

const HostArgument& ReferenceInput::typed(std::string_view name, ElementType type, bool is_buffer,
                                          std::size_t bytes) const {
  const HostArgument& found = argument(name);
  if (found.is_buffer != is_buffer || found.type != type || found.data.size() < bytes) {
    throw Error(fmt::format("reference: argument '{}' must be a {} {} of at least {} bytes; it is a {} {} of {} bytes",
                            name, to_string(type), is_buffer ? "buffer" : "scalar", bytes, to_string(found.type),
                            found.is_buffer ? "buffer" : "scalar", found.data.size()));
  }
  return found;
}

std::int64_t ReferenceInput::variable(std::string_view name) const {
  for (const auto& [variable_name, value] : size.variables)
    if (variable_name == name) return value.as_int();
  std::vector<std::string_view> names;
  for (const auto& variable : size.variables) names.push_back(variable.first);
  throw Error(fmt::format("reference: problem size '{}' has no variable '{}' (variables: {})", size.name, name,
                          fmt::join(names, ", ")));
}

void register_reference(std::string name, ReferenceFunction function) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (r.functions.contains(name)) throw Error(fmt::format("CPU reference '{}' is registered twice", name));
  r.functions.emplace(std::move(name), std::move(function));
}

const ReferenceFunction& find_reference(std::string_view name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  // std::map never moves its elements, so the reference stays valid after the lock.
  if (const auto found = r.functions.find(name); found != r.functions.end()) return found->second;
  std::vector<std::string_view> names;
  for (const auto& entry : r.functions) names.push_back(entry.first);
  throw Error(fmt::format(
      "no CPU reference '{}' (registered: {}). A CPU reference is a function compiled into the program "
      "(STEER_REGISTER_REFERENCE); without recompiling, give the spec's reference as files of expected outputs "
      "(\"reference\": {{\"outputs\": {{\"out\": \"out.npy\"}}}}), as a reference kernel (\"reference\": "
      "{{\"kernel\": {{...}}}}) or as a configuration whose outputs are trusted (docs/spec.md, Reference)",
      name, names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))));
}

std::vector<std::string> registered_references() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& entry : r.functions) names.push_back(entry.first);
  return names;
}

}  // namespace steer
