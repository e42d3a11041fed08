// The spec loader on arbitrary text: an error is a steer::Error naming the culprit, never a
// crash or another exception.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "steer/error.hpp"
#include "steer/space.hpp"
#include "steer/spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    steer::Spec spec = steer::parse_spec(text, "fuzz.json");
    // Spaces of a few thousand configurations at most: the fuzzer is after crashes, not
    // after the time a huge space takes to enumerate.
    std::uint64_t cross = 1;
    for (const steer::Parameter& p : spec.space.parameters()) cross *= std::max<std::size_t>(1, p.values.size());
    if (cross <= 4096) steer::Space::build(spec.space);
  } catch (const steer::Error&) {
  }
  return 0;
}
