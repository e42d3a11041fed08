#include "backend/cuda/driver_api.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>

namespace steer::cuda {
namespace {

#define STEER_CUDA_STRINGIFY_EXPANDED(x) STEER_CUDA_STRINGIFY(x)
#define STEER_CUDA_STRINGIFY(x) #x

struct LoadedDriver {
  std::optional<DriverApi> api;
  std::string problem;  // why api is empty
};

LoadedDriver load_driver() {
  // Never closed: the driver stays loaded for the life of the process, as when linked.
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* reason = dlerror();
    return {std::nullopt, fmt::format("no CUDA driver: cannot load libcuda.so.1 ({}); the CUDA backend needs an "
                                      "NVIDIA GPU with its driver installed",
                                      reason ? reason : "unknown reason")};
  }
  // cuda.h maps cuGetProcAddress to its current versioned symbol; dlsym needs that name.
  const char* get_proc_name = STEER_CUDA_STRINGIFY_EXPANDED(cuGetProcAddress);
  auto get_proc = reinterpret_cast<decltype(&::cuGetProcAddress)>(dlsym(library, get_proc_name));
  if (!get_proc) {
    return {std::nullopt, fmt::format("the CUDA driver is too old: libcuda.so.1 has no {} (this build needs a "
                                      "driver for CUDA {}.{} or newer)",
                                      get_proc_name, CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10)};
  }

  DriverApi api;
  std::string missing;
  CUresult lookup = CUDA_SUCCESS;  // the first failure of cuGetProcAddress itself
  auto resolve = [&](const char* name, void** pointer) {
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult result = get_proc(name, pointer, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &found);
    if (lookup == CUDA_SUCCESS) lookup = result;
    if (result != CUDA_SUCCESS || found != CU_GET_PROC_ADDRESS_SUCCESS || !*pointer) {
      missing += missing.empty() ? name : fmt::format(", {}", name);
    }
  };
#define STEER_CUDA_RESOLVE(name) resolve(#name, reinterpret_cast<void**>(&api.name));
  STEER_CUDA_DRIVER_FUNCTIONS(STEER_CUDA_RESOLVE)
#undef STEER_CUDA_RESOLVE
  if (lookup == CUDA_ERROR_STUB_LIBRARY) {
    return {std::nullopt,
            "no CUDA driver: libcuda.so.1 is the CUDA toolkit's stub library, which only serves "
            "linking; the CUDA backend needs an NVIDIA GPU with its driver installed"};
  }
  if (lookup != CUDA_SUCCESS) {
    return {std::nullopt, fmt::format("the CUDA driver cannot be used: cuGetProcAddress failed with CUresult {}",
                                      static_cast<int>(lookup))};
  }
  if (!missing.empty()) {
    return {std::nullopt, fmt::format("the CUDA driver is too old: it lacks {} for CUDA {}.{}", missing,
                                      CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10)};
  }

  CUresult init = api.cuInit(0);
  if (init != CUDA_SUCCESS) {
    const char* name = nullptr;
    const char* text = nullptr;
    api.cuGetErrorName(init, &name);
    api.cuGetErrorString(init, &text);
    const char* hint = init == CUDA_ERROR_NO_DEVICE ? "no CUDA device" : "the CUDA driver cannot be used";
    return {std::nullopt, fmt::format("{}: cuInit failed: {} ({})", hint, name ? name : "unknown error",
                                      text ? text : "no description")};
  }
  return {std::move(api), {}};
}

}  // namespace

const DriverApi& driver() {
  static const LoadedDriver loaded = load_driver();
  if (!loaded.api) throw BackendError(loaded.problem);
  return *loaded.api;
}

std::string describe(CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  const DriverApi& api = driver();
  if (api.cuGetErrorName(result, &name) != CUDA_SUCCESS) name = nullptr;
  if (api.cuGetErrorString(result, &text) != CUDA_SUCCESS) text = nullptr;
  if (!name) return fmt::format("CUresult {} (unknown to this driver)", static_cast<int>(result));
  return fmt::format("{} ({})", name, text ? text : "no description");
}

DriverError::DriverError(CUresult result, std::string_view call, std::string_view doing)
    : BackendError(doing.empty() ? fmt::format("{} failed: {}", call, describe(result))
                                 : fmt::format("{} failed for {}: {}", call, doing, describe(result))),
      result_(result) {}

void trace(const char* step) {
  static const bool on = std::getenv("STEER_CUDA_TRACE") != nullptr;
  static const auto first = std::chrono::steady_clock::now();
  if (on) {
    // Milliseconds since the first step: the gaps place the time too (data/h200/counters/pass_cost).
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - first).count();
    std::fprintf(stderr, "[steer worker %d +%.3f ms] %s\n", static_cast<int>(::getpid()), ms, step);
    std::fflush(stderr);
  }
}

Context create_context(CUdevice device) {
  CUcontext context = nullptr;
  CUctxCreateParams plain{};  // no execution affinity, no graphics interop
  check(driver().cuCtxCreate(&context, &plain, 0, device), "cuCtxCreate");
  return Context(context);
}

DeviceMemory allocate(std::size_t bytes, std::string_view what) {
  CUdeviceptr memory = 0;
  check(driver().cuMemAlloc(&memory, bytes), "cuMemAlloc", fmt::format("{} ({} bytes)", what, bytes));
  return DeviceMemory(memory);
}

Stream create_stream() {
  CUstream stream = nullptr;
  // Non-blocking: our launches never wait for work other code puts on the legacy stream.
  check(driver().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  return Stream(stream);
}

Event create_event() {
  CUevent event = nullptr;
  check(driver().cuEventCreate(&event, CU_EVENT_DEFAULT), "cuEventCreate");
  return Event(event);
}

Module load_module(const void* image, std::string_view what) {
  CUmodule module = nullptr;
  check(driver().cuModuleLoadData(&module, image), "cuModuleLoadData", what);
  return Module(module);
}

}  // namespace steer::cuda
