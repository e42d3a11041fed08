#include "backend/cuda/cupti_api.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <optional>
#include <vector>

namespace steer::cuda {
namespace {

struct LoadedCupti {
  std::optional<CuptiApi> api;
  std::string problem;
};

// Where libcupti lives: the loader's search path first (LD_LIBRARY_PATH, the cache), then
// the toolkit this build used and the usual toolkit places (it is not in the cache there).
std::vector<std::string> candidate_paths() {
  std::vector<std::string> paths;
  if (const char* forced = std::getenv("STEER_CUPTI_LIBRARY"); forced && *forced) return {forced};
  paths = {"libcupti.so.13", "libcupti.so"};
#ifdef STEER_CUDA_LIBRARY_DIR
  paths.push_back(std::string(STEER_CUDA_LIBRARY_DIR) + "/libcupti.so.13");
  paths.push_back(std::string(STEER_CUDA_LIBRARY_DIR) + "/libcupti.so");
#endif
  for (const char* dir : {"/usr/local/cuda/lib64", "/usr/local/cuda/extras/CUPTI/lib64",
                          "/usr/local/cuda/targets/x86_64-linux/lib"}) {
    paths.push_back(std::string(dir) + "/libcupti.so.13");
    paths.push_back(std::string(dir) + "/libcupti.so");
  }
  return paths;
}

LoadedCupti load_cupti() {
  void* library = nullptr;
  std::string tried;
  for (const std::string& path : candidate_paths()) {
    library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // never closed, as when linked
    if (library) break;
    const char* reason = dlerror();
    tried += fmt::format("\n  {}: {}", path, reason ? reason : "not loadable");
  }
  if (!library) {
    return {std::nullopt, fmt::format("hardware counters need CUPTI (libcupti from the CUDA toolkit), which could "
                                      "not be loaded; set STEER_CUPTI_LIBRARY to its path. Tried:{}",
                                      tried)};
  }
  CuptiApi api;
  std::string missing;
  auto resolve = [&](const char* name, void** pointer) {
    *pointer = dlsym(library, name);
    if (!*pointer) missing += missing.empty() ? name : fmt::format(", {}", name);
  };
#define STEER_CUPTI_RESOLVE(name) resolve(#name, reinterpret_cast<void**>(&api.name));
  STEER_CUPTI_FUNCTIONS(STEER_CUPTI_RESOLVE)
#undef STEER_CUPTI_RESOLVE
  if (!missing.empty()) {
    return {std::nullopt, fmt::format("the CUPTI library found is too old for the range profiler (CUDA 12.6 or "
                                      "newer is needed): it lacks {}",
                                      missing)};
  }
  return {std::move(api), {}};
}

std::string describe(CUptiResult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  try {
    const CuptiApi& api = cupti();
    if (api.cuptiGetResultString(result, &name) != CUPTI_SUCCESS) name = nullptr;
    if (api.cuptiGetErrorMessage(result, &text) != CUPTI_SUCCESS) text = nullptr;
  } catch (const BackendError&) {
  }
  std::string out = name ? name : fmt::format("CUptiResult {}", static_cast<int>(result));
  if (text && *text) out += fmt::format(" ({})", text);
  return out;
}

}  // namespace

const CuptiApi& cupti() {
  static const LoadedCupti loaded = load_cupti();
  if (!loaded.api) throw BackendError(loaded.problem);
  return *loaded.api;
}

CuptiError::CuptiError(CUptiResult result, std::string_view call, std::string_view doing)
    : BackendError(doing.empty() ? fmt::format("{} failed: {}", call, describe(result))
                                 : fmt::format("{} failed for {}: {}", call, doing, describe(result))),
      result_(result) {}

}  // namespace steer::cuda
