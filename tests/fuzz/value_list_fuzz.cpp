// Value lists ("[1, 2]", "range(...)", comprehensions) on arbitrary text.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "expression/expression.hpp"
#include "steer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    steer::expr::evaluate_list(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const steer::Error&) {
  }
  return 0;
}
