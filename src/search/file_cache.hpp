#pragma once
// Files that searchers read (counter models, source recordings), read once per process and
// file version: a simulation builds a searcher per run, and each would otherwise parse the
// same file again.
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "steer/model.hpp"
#include "steer/recording.hpp"

namespace steer::search {

// `load(path)` once per path and modification time; thread-safe. Its errors pass through.
template <typename T, typename Load>
std::shared_ptr<const T> load_cached(const std::string& path, Load load) {
  static std::mutex mutex;
  static std::map<std::string, std::pair<std::filesystem::file_time_type, std::shared_ptr<const T>>> cache;
  std::error_code error;
  const auto stamp = std::filesystem::last_write_time(path, error);
  std::lock_guard lock(mutex);
  auto found = cache.find(path);
  if (!error && found != cache.end() && found->second.first == stamp) return found->second.second;
  auto loaded = std::make_shared<const T>(load(path));
  if (!error) cache[path] = {stamp, loaded};
  return loaded;
}

// Throws ModelError as CounterModel::load.
inline std::shared_ptr<const CounterModel> load_model_cached(const std::string& path) {
  return load_cached<CounterModel>(path, [](const std::string& p) { return CounterModel::load(p); });
}

// Throws as Recording::load.
inline std::shared_ptr<const Recording> load_source_cached(const std::string& path) {
  return load_cached<Recording>(path, [](const std::string& p) { return Recording::load(p); });
}

}  // namespace steer::search
