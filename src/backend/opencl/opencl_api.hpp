#pragma once
// Thin C++ layer over the OpenCL 1.2 C API: error names, checked calls, RAII handles and
// typed info queries. Private to the OpenCL backend.
#include <CL/cl.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "steer/error.hpp"

namespace steer::opencl {

// "CL_INVALID_WORK_GROUP_SIZE (-54)"; unknown codes as "OpenCL error -1234".
std::string error_name(cl_int code);

// Throws BackendError "<call>: <error name>[ (<context>)]".
[[noreturn]] void throw_error(std::string_view call, cl_int code, std::string_view context = {});

inline void check(cl_int code, std::string_view call, std::string_view context = {}) {
  if (code != CL_SUCCESS) throw_error(call, code, context);
}

// Owns one reference to an OpenCL object; move-only.
template <typename T, cl_int (*Release)(T)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(T object) noexcept : object_(object) {}
  Handle(Handle&& other) noexcept : object_(std::exchange(other.object_, nullptr)) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      object_ = std::exchange(other.object_, nullptr);
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }

  T get() const noexcept { return object_; }
  const T* address() const noexcept { return &object_; }
  explicit operator bool() const noexcept { return object_ != nullptr; }
  void reset() noexcept {
    if (object_ != nullptr) Release(object_);
    object_ = nullptr;
  }

 private:
  T object_ = nullptr;
};

using Context = Handle<cl_context, clReleaseContext>;
using CommandQueue = Handle<cl_command_queue, clReleaseCommandQueue>;
using Buffer = Handle<cl_mem, clReleaseMemObject>;
using ProgramObject = Handle<cl_program, clReleaseProgram>;
using Kernel = Handle<cl_kernel, clReleaseKernel>;
using Event = Handle<cl_event, clReleaseEvent>;

// Typed info queries; throw BackendError naming the query on failure.
std::string device_string(cl_device_id device, cl_device_info what, std::string_view what_name);
std::string platform_string(cl_platform_id platform, cl_platform_info what, std::string_view what_name);

template <typename T>
T device_value(cl_device_id device, cl_device_info what, std::string_view what_name) {
  T value{};
  check(clGetDeviceInfo(device, what, sizeof value, &value, nullptr), "clGetDeviceInfo", what_name);
  return value;
}

std::vector<std::size_t> device_max_work_item_sizes(cl_device_id device);

// The compiler's log of building `program` for `device`, trailing blanks and NULs removed.
std::string build_log(cl_program program, cl_device_id device);

}  // namespace steer::opencl
