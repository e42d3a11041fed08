#pragma once
// What `steer simulate --data` and `steer report --db` read: a Steer results store (SQLite,
// plain or gzip-compressed) or any recording `steer import` reads (KTT, Kernel Tuner, T4,
// Steer JSON; gzip or not).
#include <cstdint>
#include <filesystem>
#include <optional>

#include "steer/replay.hpp"
#include "steer/space.hpp"
#include "steer/store.hpp"

namespace steer::cli {

// import_recording, with a clear error for a file that does not exist. A store is read in
// the order its tests were appended. Throws Error / StoreError naming the file.
ImportedRecording read_recording(const std::filesystem::path& file, std::optional<std::int64_t> tuning = {});

// Which recorded tests load_recording keeps.
enum class RecordedTests {
  All,
  // Valid tests without counters are left out (failed ones, which never have counters, stay):
  // a recording whose counters are still being added, replayed for a counter-guided searcher
  // over the configurations it could have profiled.
  WithCounters,
};

// read_recording, laid over `definition`'s space when given (Recording::from_import); errors
// name the file. `left_out`, if given, receives how many tests `keep` left out.
Recording load_recording(const std::filesystem::path& file, const SpaceDefinition* definition = nullptr,
                         std::optional<std::int64_t> tuning = {}, RecordedTests keep = RecordedTests::All,
                         std::size_t* left_out = nullptr);

}  // namespace steer::cli
