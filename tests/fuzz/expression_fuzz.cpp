// The expression compiler and evaluator on arbitrary text over three named values.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "expression/expression.hpp"
#include "steer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::array<std::string, 3> names{"A", "B", "C"};
  try {
    steer::expr::Expression e = steer::expr::Expression::parse(text, names);
    const std::array<steer::expr::Scalar, 3> slots{steer::expr::Scalar::of_int(3), steer::expr::Scalar::of_int(-7),
                                                   steer::expr::Scalar::of_float(0.5)};
    e.evaluate(slots);
  } catch (const steer::Error&) {
  }
  return 0;
}
