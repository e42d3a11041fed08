#include "backend/cuda/device_session.hpp"

#include <fmt/format.h>

#include <cstring>

#include "core/fresh_memory.hpp"

namespace steer::cuda {
namespace {

// Loaded modules kept per context. Each holds its code and constant banks in device
// memory, so tuning thousands of configurations must not keep them all; reloading an
// evicted one from its cubin takes about 0.2 ms.
constexpr std::size_t kLoadedModules = 256;

}  // namespace

DeviceSession::DeviceSession(CUdevice device)
    : context_(create_context(device)),
      stream_(create_stream()),
      start_(create_event()),
      stop_(create_event()),
      modules_(kLoadedModules) {}

void DeviceSession::upload(const std::vector<ArgumentData>& arguments) {
  parameters_.clear();
  arguments_.clear();  // frees the old buffers before allocating the new ones
  std::vector<DeviceArgument> uploaded(arguments.size());
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const ArgumentData& host = arguments[i];
    DeviceArgument& device = uploaded[i];
    device.name = host.name;
    device.is_buffer = host.is_buffer;
    device.bytes = host.bytes.size();
    if (!host.is_buffer) {
      if (host.bytes.size() != size_of(host.type)) {
        throw BackendError(fmt::format("scalar argument '{}' holds {} bytes, but its type {} has {}", host.name,
                                       host.bytes.size(), to_string(host.type), size_of(host.type)));
      }
      std::memcpy(device.scalar.data(), host.bytes.data(), host.bytes.size());
      continue;
    }
    if (host.bytes.empty()) continue;  // passed as a null pointer
    const std::string what = fmt::format("argument '{}'", host.name);
    device.working = allocate(device.bytes, what);
    device.address = device.working.get();
    // A buffer that starts as zeros (an output, mostly) is reset with a memset, which writes
    // it once where a copy from a pristine copy reads that as well, and keeps no such copy.
    if (all_zero(host.bytes.data(), host.bytes.size())) continue;
    device.pristine = allocate(device.bytes, what + " (pristine copy)");
    check(driver().cuMemcpyHtoD(device.pristine.get(), host.bytes.data(), device.bytes), "cuMemcpyHtoD", what);
  }
  arguments_ = std::move(uploaded);
  parameters_.reserve(arguments_.size());
  for (DeviceArgument& argument : arguments_) {
    // A buffer is passed as its device address, a scalar as its bytes.
    parameters_.push_back(argument.is_buffer ? static_cast<void*>(&argument.address)
                                             : static_cast<void*>(argument.scalar.data()));
  }
}

void DeviceSession::restore_arguments() {
  for (const DeviceArgument& argument : arguments_) {
    if (!argument.working) continue;
    if (!argument.pristine) {
      check(driver().cuMemsetD8Async(argument.working.get(), 0, argument.bytes, stream()), "cuMemsetD8Async",
            fmt::format("resetting argument '{}' to zeros", argument.name));
      continue;
    }
    check(driver().cuMemcpyDtoDAsync(argument.working.get(), argument.pristine.get(), argument.bytes, stream()),
          "cuMemcpyDtoDAsync", fmt::format("restoring argument '{}'", argument.name));
  }
}

void DeviceSession::read_buffer(std::size_t index, std::span<std::byte> destination) const {
  const DeviceArgument& argument = arguments_.at(index);
  if (destination.size() != argument.bytes) {
    throw BackendError(
        fmt::format("output '{}' has {} bytes, the destination {}", argument.name, argument.bytes, destination.size()));
  }
  if (!argument.working) return;  // empty
  check(driver().cuMemcpyDtoH(destination.data(), argument.working.get(), argument.bytes), "cuMemcpyDtoH",
        fmt::format("reading output '{}'", argument.name));
}

void DeviceSession::write_buffer(std::size_t index, std::span<const std::byte> source) {
  const DeviceArgument& argument = arguments_.at(index);
  if (source.size() != argument.bytes) {
    throw BackendError(fmt::format("argument '{}' has {} bytes, the data written to it {}", argument.name,
                                   argument.bytes, source.size()));
  }
  if (!argument.working) return;  // empty
  check(driver().cuMemcpyHtoDAsync(argument.working.get(), source.data(), argument.bytes, stream()),
        "cuMemcpyHtoDAsync", fmt::format("writing argument '{}'", argument.name));
}

void DeviceSession::set_scalar(std::size_t index, std::span<const std::byte> value) {
  DeviceArgument& argument = arguments_.at(index);
  if (argument.is_buffer || value.size() != argument.bytes) {
    throw BackendError(fmt::format("argument '{}' is not a scalar of {} bytes", argument.name, value.size()));
  }
  std::memcpy(argument.scalar.data(), value.data(), value.size());
}

CUfunction DeviceSession::function(const std::string& key, const std::vector<char>& image, const std::string& symbol) {
  if (LoadedModule* loaded = modules_.find(key)) return loaded->function;
  const std::string what = fmt::format("kernel '{}'", symbol);
  LoadedModule loaded;
  loaded.module = load_module(image.data(), what);
  check(driver().cuModuleGetFunction(&loaded.function, loaded.module.get(), symbol.c_str()), "cuModuleGetFunction",
        what);
  return modules_.insert(key, std::move(loaded)).function;
}

bool DeviceSession::healthy() const { return driver().cuCtxSynchronize() == CUDA_SUCCESS; }

}  // namespace steer::cuda
