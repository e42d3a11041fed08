#pragma once
// Everything that lives in one CUDA context: the context itself, the stream and timing
// events, the arguments on the device and the modules loaded from cubins. It lives in the
// worker process (see cuda_backend.cpp), on that process's only thread, where the
// context stays current from its creation on.
#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "backend/cuda/driver_api.hpp"
#include "backend/worker/lru_cache.hpp"
#include "steer/spec.hpp"

namespace steer::cuda {

class DeviceSession {
 public:
  // Creates a context on `device`, current on the calling thread.
  explicit DeviceSession(CUdevice device);
  DeviceSession(const DeviceSession&) = delete;
  DeviceSession& operator=(const DeviceSession&) = delete;

  // One argument's initial contents, wherever they are stored.
  struct ArgumentData {
    std::string name;
    bool is_buffer = true;
    ElementType type = ElementType::F32;
    std::span<const std::byte> bytes;
  };
  // Replaces the arguments: a working copy of every buffer on the device, and a pristine copy
  // of each that does not start as zeros.
  // Throws BackendError (e.g. out of device memory, a scalar of the wrong size).
  void upload(const std::vector<ArgumentData>& arguments);
  // Copies every buffer's pristine contents over its working copy (or sets it to zeros),
  // queued on the stream, so the next launch sees exactly the inputs that were loaded.
  void restore_arguments();
  // The argument array for cuLaunchKernel, valid until the next upload().
  void** kernel_parameters() { return parameters_.data(); }
  // Copies argument `index`'s working copy (a buffer) to `destination`, which has its size.
  // The stream must be idle.
  void read_buffer(std::size_t index, std::span<std::byte> destination) const;
  // Copies `source`, of its size, over argument `index`'s working copy (a buffer), queued on
  // the stream: an application's data for its launch (Backend::launch).
  void write_buffer(std::size_t index, std::span<const std::byte> source);
  // The device address of argument `index`'s working copy (a buffer; 0 when empty).
  CUdeviceptr buffer_address(std::size_t index) const { return arguments_.at(index).address; }
  // Passes scalar argument `index` as `value` (of its type's size) from now on.
  void set_scalar(std::size_t index, std::span<const std::byte> value);

  // The kernel `symbol` of a cubin, loading the module on first use. Keeps the most
  // recently used modules loaded; `key` identifies the cubin.
  CUfunction function(const std::string& key, const std::vector<char>& image, const std::string& symbol);
  // Whether the module of cubin `key` is loaded.
  bool holds_module(const std::string& key) { return modules_.find(key) != nullptr; }

  CUcontext context() const noexcept { return context_.get(); }
  CUstream stream() const noexcept { return stream_.get(); }
  CUevent start_event() const noexcept { return start_.get(); }
  CUevent stop_event() const noexcept { return stop_.get(); }

  // False when the context has hit a sticky error, after which every CUDA call in this
  // process fails. Waits for queued work.
  bool healthy() const;

 private:
  struct DeviceArgument {
    std::string name;
    bool is_buffer = true;
    std::size_t bytes = 0;
    DeviceMemory working, pristine;  // buffers (none for an empty one; no pristine for zeros)
    CUdeviceptr address = 0;         // of `working` (0 when empty); passed by pointer
    alignas(8) std::array<std::byte, 8> scalar{};
  };
  struct LoadedModule {
    Module module;
    CUfunction function = nullptr;
  };

  // Declared first, destroyed last: everything below lives in it.
  Context context_;
  Stream stream_;
  Event start_, stop_;
  std::vector<DeviceArgument> arguments_;
  std::vector<void*> parameters_;
  worker::LruCache<LoadedModule> modules_;
};

}  // namespace steer::cuda
