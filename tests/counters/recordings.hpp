#pragma once
// The KTT recordings of data/recordings (see its PROVENANCE.md), imported once per test
// program, for the tests of the counter tables and of the expert system.
#include <cstddef>
#include <map>
#include <string>

#include "steer/counters.hpp"
#include "steer/recording.hpp"
#include "steer/store.hpp"

namespace steer::test_data {

// File names under STEER_DATA_DIR/recordings/ktt.
inline constexpr const char* kCoulombRtx2080 = "coulomb_rtx2080.ktt.json.gz";    // Volta+, KTT's 33 counters
inline constexpr const char* kPnpolyRtx2080Ti = "pnpoly_rtx2080ti.ktt.json.gz";  // Volta+, KTT's 33 counters
inline constexpr const char* kCoulombGtx1070 = "coulomb_gtx1070.ktt.json.gz";    // pre-Volta names
// The first result of the GTX 1070 file that carries counters (67 of its 475 do).
inline constexpr std::size_t kFirstProfiledGtx1070 = 6;

// A recording, imported on first use.
inline const ImportedRecording& recording(const std::string& file) {
  static std::map<std::string, ImportedRecording> cache;
  auto found = cache.find(file);
  if (found == cache.end()) {
    found = cache.emplace(file, import_recording(std::string(STEER_DATA_DIR) + "/recordings/ktt/" + file)).first;
  }
  return found->second;
}

// The raw counters of result `index` of a recording, as the importer gives them.
inline const CounterValues& recorded_counters(const std::string& file, std::size_t index) {
  return recording(file).results.at(index).counters;
}

}  // namespace steer::test_data
