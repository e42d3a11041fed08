#pragma once
// What the end-to-end tests of steer tune share: running the binary, a fresh store, the
// store's tests, and whether an OpenCL device answers.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "steer/backend.hpp"
#include "steer/spec.hpp"
#include "steer/space.hpp"
#include "steer/store.hpp"
#include "steer_cli_runner.hpp"

namespace e2e {

namespace fs = std::filesystem;

inline const std::string kSpec = std::string(STEER_SOURCE_DIR) + "/kernels/transpose/spec.json";

using Output = steer::test_support::CliOutcome;

// stdout only unless asked: the tests parse --json output.
inline Output run_steer(const std::string& arguments, bool with_stderr = false) {
  return steer::test_support::run_steer(arguments, with_stderr);
}

inline bool have_opencl() {
  try {
    steer::make_opencl_backend({});
    return true;
  } catch (const steer::Error&) {
    return false;
  }
}

inline fs::path fresh_db(const std::string& name) {
  fs::path db = fs::temp_directory_path() / ("steer_e2e_" + name + "_" + std::to_string(getpid()) + ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
  return db;
}

inline std::vector<steer::Result> stored_results(const fs::path& db) {
  steer::Store store = steer::Store::open_existing(db);
  auto tunings = store.tunings();
  if (tunings.size() != 1) return {};
  return store.results(tunings.front().first);
}

}  // namespace e2e
