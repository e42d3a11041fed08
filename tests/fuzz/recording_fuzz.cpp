// The importers (KTT JSON and CSV, Kernel Tuner cache, T4, Steer JSON: told apart by content) and the
// recording laid over its space, on arbitrary bytes.
#include <cstddef>
#include <cstdint>

#include "fuzz_file.hpp"
#include "steer/error.hpp"
#include "steer/recording.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::filesystem::path file = fuzz_input_file(data, size, ".json");
  try {
    steer::ImportedRecording imported = steer::import_recording(file);
    if (imported.results.size() <= 4096) steer::Recording::from_import(imported);
  } catch (const steer::Error&) {
  }
  return 0;
}
