#pragma once
// The CUDA driver API, loaded at run time from libcuda.so.1. Only the worker process
// (worker.hpp) uses it: the backend's own process never loads the driver.
//
// Why not link libcuda: the development and CI machines have the toolkit's stub library
// but no driver, and a program with a link-time dependency on libcuda.so.1 does not even
// start there. Loading it with dlopen lets every Steer program start anywhere; without
// a driver, make_cuda_backend throws a BackendError that says so.
//
// The functions are resolved with cuGetProcAddress for the CUDA_VERSION of the headers
// we compiled against, so each pointer has exactly the signature cuda.h declares (cuda.h
// maps e.g. cuMemAlloc to cuMemAlloc_v2; the member names below go through the same
// macros, so `api.cuMemAlloc` is the matching pointer).
#include <cuda.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "steer/error.hpp"

namespace steer::cuda {

// Every driver function the backend calls. Add a name here to make it available.
#define STEER_CUDA_DRIVER_FUNCTIONS(X)                                                      \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString)                     \
  X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute)             \
  X(cuDeviceTotalMem) X(cuDeviceGetPCIBusId)                                                \
  X(cuCtxCreate) X(cuCtxDestroy) X(cuCtxSynchronize)                                        \
  X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction)                              \
  X(cuFuncGetAttribute) X(cuFuncSetAttribute)                                               \
  X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoH)           \
  X(cuMemcpyDtoDAsync) X(cuMemsetD8Async) X(cuMemHostRegister)                              \
  X(cuStreamCreate) X(cuStreamDestroy)                                                      \
  X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventQuery) X(cuEventElapsedTime) \
  X(cuLaunchKernel)

struct DriverApi {
#define STEER_CUDA_DECLARE_POINTER(name) decltype(&::name) name = nullptr;
  STEER_CUDA_DRIVER_FUNCTIONS(STEER_CUDA_DECLARE_POINTER)
#undef STEER_CUDA_DECLARE_POINTER
};

// The loaded driver, with cuInit done. Loads on first use (thread-safe); throws
// BackendError, every time, when there is no driver or cuInit fails (e.g. no device).
const DriverApi& driver();

// With STEER_CUDA_TRACE set, the worker says on standard error what it is about to do,
// with the milliseconds since its first step, so that a crash inside a library (CUPTI, the
// driver) can be placed and the time of each step (e.g. each profiler pass) read off.
void trace(const char* step);

// "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)".
std::string describe(CUresult result);

// A failed driver call. The message names the call, what it was doing, and the error.
class DriverError : public BackendError {
 public:
  DriverError(CUresult result, std::string_view call, std::string_view doing);
  CUresult result() const noexcept { return result_; }

 private:
  CUresult result_;
};

// Throws DriverError unless `result` is CUDA_SUCCESS. `doing` adds context ("buffer 'A'").
inline void check(CUresult result, std::string_view call, std::string_view doing = {}) {
  if (result != CUDA_SUCCESS) throw DriverError(result, call, doing);
}

// Owns one driver handle; `Release` frees it and must not throw (errors are ignored:
// after a sticky error every call fails, and destroying the context frees it anyway).
template <typename Handle, typename Release>
class UniqueHandle {
 public:
  UniqueHandle() = default;
  explicit UniqueHandle(Handle handle) noexcept : handle_(handle) {}
  UniqueHandle(UniqueHandle&& other) noexcept : handle_(std::exchange(other.handle_, Handle{})) {}
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, Handle{});
    }
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  ~UniqueHandle() { reset(); }

  Handle get() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return handle_ != Handle{}; }
  void reset() noexcept {
    if (handle_ != Handle{}) Release{}(handle_);
    handle_ = Handle{};
  }

 private:
  Handle handle_{};
};

struct ReleaseContext {
  void operator()(CUcontext context) const noexcept { driver().cuCtxDestroy(context); }
};
struct ReleaseModule {
  void operator()(CUmodule module) const noexcept { driver().cuModuleUnload(module); }
};
struct ReleaseMemory {
  void operator()(CUdeviceptr memory) const noexcept { driver().cuMemFree(memory); }
};
struct ReleaseStream {
  void operator()(CUstream stream) const noexcept { driver().cuStreamDestroy(stream); }
};
struct ReleaseEvent {
  void operator()(CUevent event) const noexcept { driver().cuEventDestroy(event); }
};

using Context = UniqueHandle<CUcontext, ReleaseContext>;
using Module = UniqueHandle<CUmodule, ReleaseModule>;
using DeviceMemory = UniqueHandle<CUdeviceptr, ReleaseMemory>;
using Stream = UniqueHandle<CUstream, ReleaseStream>;
using Event = UniqueHandle<CUevent, ReleaseEvent>;

// Creators; each throws DriverError naming what it was for. Those below create_context
// need that context current on the calling thread.
Context create_context(CUdevice device);  // also makes it current
DeviceMemory allocate(std::size_t bytes, std::string_view what);
Stream create_stream();
Event create_event();
Module load_module(const void* image, std::string_view what);

}  // namespace steer::cuda
