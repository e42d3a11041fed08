// The results store opener and readers on arbitrary bytes as the file: a damaged store is a
// StoreError naming it.
#include <cstddef>
#include <cstdint>

#include "fuzz_file.hpp"
#include "steer/error.hpp"
#include "steer/store.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::filesystem::path file = fuzz_input_file(data, size, ".db");
  try {
    steer::Store store = steer::Store::open_read_only(file);
    for (const auto& [id, key] : store.tunings()) store.results(id);
  } catch (const steer::Error&) {
  }
  return 0;
}
