// Reading a recording or a (possibly gzipped) results store into an ImportedRecording.
#include "recording_input.hpp"

#include <fmt/format.h>

#include "steer/error.hpp"

namespace steer::cli {

ImportedRecording read_recording(const std::filesystem::path& file, std::optional<std::int64_t> tuning) {
  if (!std::filesystem::exists(file)) throw StoreError(fmt::format("cannot read '{}': no such file", file.string()));
  return import_recording(file, tuning);
}

Recording load_recording(const std::filesystem::path& file, const SpaceDefinition* definition, std::optional<std::int64_t> tuning) {
  ImportedRecording imported = read_recording(file, tuning);
  try {
    return definition ? Recording::from_import(imported, *definition) : Recording::from_import(imported);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", file.string(), e.what()));
  }
}

}  // namespace steer::cli
