#pragma once
// The recordings of other tools that the replay-everything tests run over: every file of
// data/recordings (see its PROVENANCE.md), and, when the environment variable
// BENCHMARK_HUB names a folder filled by scripts/fetch-benchmark-hub, benchmark_hub's
// larger spaces there too.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

namespace steer::test_support {

inline bool is_recording_file(const std::filesystem::path& path) {
  const std::string name = path.filename().string();
  return name.size() > 8 && name.compare(name.size() - 8, 8, ".json.gz") == 0;
}

// The committed recordings, sorted.
inline std::vector<std::filesystem::path> committed_recordings() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(STEER_DATA_DIR "/recordings")) {
    if (entry.is_regular_file() && is_recording_file(entry.path())) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The files of $BENCHMARK_HUB (its top level only: the folder also keeps the clone they came
// from), sorted; none, with a note on stderr, when BENCHMARK_HUB is unset.
inline std::vector<std::filesystem::path> benchmark_hub_recordings() {
  std::vector<std::filesystem::path> files;
  const char* folder = std::getenv("BENCHMARK_HUB");
  if (folder == nullptr || *folder == '\0') {
    std::cerr << "BENCHMARK_HUB is not set: benchmark_hub's larger recordings are skipped "
                 "(scripts/fetch-benchmark-hub DIR fetches them)\n";
    return files;
  }
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.is_regular_file() && is_recording_file(entry.path())) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace steer::test_support
