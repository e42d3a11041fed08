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

#include "search/source_recording.hpp"
#include "steer/model.hpp"
#include "steer/recording.hpp"
#include "steer/searcher.hpp"

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

// A recording's runtimes as a source; throws as Recording::load.
inline std::shared_ptr<const SourceRuntimes> load_source_runtimes_cached(const std::string& path) {
  return load_cached<SourceRuntimes>(path, [](const std::string& p) {
    SourceRuntimes source = source_runtimes(Recording::load(p));
    source.origin = "'" + p + "'";
    return source;
  });
}

// The runtimes a model file carries of its training recording, as a source; throws as
// CounterModel::load.
inline std::shared_ptr<const SourceRuntimes> load_model_source_cached(const std::string& path) {
  return load_cached<SourceRuntimes>(path, [](const std::string& p) {
    SourceRuntimes source = source_runtimes(*load_model_cached(p));
    source.origin = "(the one model '" + p + "' was trained on)";
    return source;
  });
}

// The source a searcher's model is: the runtimes it carries of its training recording. None
// without a model, from a model that carries none, or in a replay of those very measurements
// (SearcherOptions::replayed): they would be the answers.
inline std::shared_ptr<const SourceRuntimes> model_source(const SearcherOptions& options) {
  if (options.model_path.empty()) return nullptr;
  const RecordedRuntimes& recorded = load_model_cached(options.model_path)->recorded_runtimes();
  if (recorded.rows() == 0 || recorded.fingerprint == options.replayed) return nullptr;
  return load_model_source_cached(options.model_path);
}

}  // namespace steer::search
