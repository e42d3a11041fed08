// Reading a recording or a (possibly gzipped) results store into an ImportedRecording.
#include "recording_input.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "steer/counters.hpp"
#include "steer/error.hpp"

namespace steer::cli {

ImportedRecording read_recording(const std::filesystem::path& file, std::optional<std::int64_t> tuning) {
  if (!std::filesystem::exists(file)) throw StoreError(fmt::format("cannot read '{}': no such file", file.string()));
  return import_recording(file, tuning);
}

Recording load_recording(const std::filesystem::path& file, const SpaceDefinition* definition,
                         std::optional<std::int64_t> tuning, RecordedTests keep, std::size_t* left_out) {
  ImportedRecording imported = read_recording(file, tuning);
  const std::size_t recorded = imported.results.size();
  if (keep == RecordedTests::WithCounters) {
    std::erase_if(imported.results, [](const Result& r) { return r.ok() && !has_hardware_counters(r.counters); });
    if (std::none_of(imported.results.begin(), imported.results.end(),
                     [](const Result& r) { return has_hardware_counters(r.counters); }))
      throw Error(fmt::format("{}: no test has counters, so none could have been profiled", file.string()));
  }
  if (left_out) *left_out = recorded - imported.results.size();
  try {
    return definition ? Recording::from_import(imported, *definition) : Recording::from_import(imported);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", file.string(), e.what()));
  }
}

}  // namespace steer::cli
