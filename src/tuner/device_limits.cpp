// The configurations a device cannot launch, left out of the space before the search, so that
// no test of the budget is spent on a launch that must fail.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "expression/expression.hpp"
#include "steer/error.hpp"
#include "steer/tuner.hpp"

namespace steer {

DeviceLimitedSpace limit_to_device(const Spec& spec, const ProblemSize& size, const DeviceInfo& device) {
  DeviceLimitedSpace limited{spec.space, {}};
  if (!spec.kernel || (device.max_threads_per_block <= 0 && device.max_shared_memory_per_block == 0)) {
    return limited;
  }
  const LaunchSpec& launch = spec.kernel->launch;
  // The parameters the launch expressions read, and only those: a constraint over every
  // parameter would join independent groups of them and slow the space's construction.
  std::vector<std::string> all;
  for (const Parameter& p : spec.space.parameters()) all.push_back(p.name);
  std::vector<std::string> size_names;
  std::vector<expr::Scalar> size_slots;
  for (const auto& [name, value] : size.variables) {
    size_names.push_back(name);
    size_slots.push_back(expr::to_scalar(value));
  }
  std::vector<bool> read(all.size(), false);
  {
    std::vector<std::string> names = all;
    names.insert(names.end(), size_names.begin(), size_names.end());
    std::vector<std::string> texts = launch.block;
    texts.push_back(launch.shared_memory_bytes);
    for (const std::string& text : texts) {
      const expr::Expression parsed = expr::Expression::parse(text, names);
      for (std::size_t slot : parsed.slots_used()) {
        if (slot < all.size()) read[slot] = true;
      }
    }
  }
  std::vector<std::string> parameters;
  for (std::size_t p = 0; p < all.size(); ++p) {
    if (read[p]) parameters.push_back(all[p]);
  }
  if (parameters.empty()) return limited;  // one geometry for all: a launch error says it once
  // Launch expressions see these parameters first, then the size variables.
  std::vector<std::string> names = parameters;
  names.insert(names.end(), size_names.begin(), size_names.end());
  std::vector<expr::Expression> block;
  for (const std::string& text : launch.block) block.push_back(expr::Expression::parse(text, names));
  const expr::Expression shared = expr::Expression::parse(launch.shared_memory_bytes, names);
  const auto max_threads = static_cast<double>(device.max_threads_per_block);
  const auto max_shared = static_cast<double>(device.max_shared_memory_per_block);

  std::vector<std::string> rules;
  if (max_threads > 0) rules.push_back(fmt::format("blocks of at most {} threads", device.max_threads_per_block));
  if (max_shared > 0) {
    rules.push_back(fmt::format("at most {} bytes of dynamic shared memory", device.max_shared_memory_per_block));
  }
  limited.rule = fmt::format("what {} can launch: {}", device.name, fmt::join(rules, " and "));
  limited.definition.add_constraint(
      parameters,
      [=](std::span<const Value> values) {
        std::vector<expr::Scalar> slots;
        slots.reserve(values.size() + size_slots.size());
        for (const Value& v : values) slots.push_back(expr::to_scalar(v));
        slots.insert(slots.end(), size_slots.begin(), size_slots.end());
        try {
          double threads = 1;
          for (const expr::Expression& extent : block) threads *= extent.evaluate(slots).as_double();
          if (max_threads > 0 && threads > max_threads) return false;
          if (max_shared > 0 && shared.evaluate(slots).as_double() > max_shared) return false;
        } catch (const ExpressionError&) {
          // A geometry that does not evaluate fails as a test of its own, with its message.
        }
        return true;
      },
      limited.rule);
  return limited;
}

}  // namespace steer
