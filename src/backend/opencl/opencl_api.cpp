#include "backend/opencl/opencl_api.hpp"

#include <fmt/format.h>

namespace steer::opencl {
namespace {

const char* known_error_name(cl_int code) noexcept {
  switch (code) {
#define STEER_CL_ERROR(name) \
  case name:                 \
    return #name;
    STEER_CL_ERROR(CL_DEVICE_NOT_FOUND)
    STEER_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    STEER_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    STEER_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    STEER_CL_ERROR(CL_OUT_OF_RESOURCES)
    STEER_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
    STEER_CL_ERROR(CL_PROFILING_INFO_NOT_AVAILABLE)
    STEER_CL_ERROR(CL_MEM_COPY_OVERLAP)
    STEER_CL_ERROR(CL_IMAGE_FORMAT_MISMATCH)
    STEER_CL_ERROR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    STEER_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    STEER_CL_ERROR(CL_MAP_FAILURE)
    STEER_CL_ERROR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    STEER_CL_ERROR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    STEER_CL_ERROR(CL_COMPILE_PROGRAM_FAILURE)
    STEER_CL_ERROR(CL_LINKER_NOT_AVAILABLE)
    STEER_CL_ERROR(CL_LINK_PROGRAM_FAILURE)
    STEER_CL_ERROR(CL_DEVICE_PARTITION_FAILED)
    STEER_CL_ERROR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    STEER_CL_ERROR(CL_INVALID_VALUE)
    STEER_CL_ERROR(CL_INVALID_DEVICE_TYPE)
    STEER_CL_ERROR(CL_INVALID_PLATFORM)
    STEER_CL_ERROR(CL_INVALID_DEVICE)
    STEER_CL_ERROR(CL_INVALID_CONTEXT)
    STEER_CL_ERROR(CL_INVALID_QUEUE_PROPERTIES)
    STEER_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
    STEER_CL_ERROR(CL_INVALID_HOST_PTR)
    STEER_CL_ERROR(CL_INVALID_MEM_OBJECT)
    STEER_CL_ERROR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    STEER_CL_ERROR(CL_INVALID_IMAGE_SIZE)
    STEER_CL_ERROR(CL_INVALID_SAMPLER)
    STEER_CL_ERROR(CL_INVALID_BINARY)
    STEER_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
    STEER_CL_ERROR(CL_INVALID_PROGRAM)
    STEER_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    STEER_CL_ERROR(CL_INVALID_KERNEL_NAME)
    STEER_CL_ERROR(CL_INVALID_KERNEL_DEFINITION)
    STEER_CL_ERROR(CL_INVALID_KERNEL)
    STEER_CL_ERROR(CL_INVALID_ARG_INDEX)
    STEER_CL_ERROR(CL_INVALID_ARG_VALUE)
    STEER_CL_ERROR(CL_INVALID_ARG_SIZE)
    STEER_CL_ERROR(CL_INVALID_KERNEL_ARGS)
    STEER_CL_ERROR(CL_INVALID_WORK_DIMENSION)
    STEER_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    STEER_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE)
    STEER_CL_ERROR(CL_INVALID_GLOBAL_OFFSET)
    STEER_CL_ERROR(CL_INVALID_EVENT_WAIT_LIST)
    STEER_CL_ERROR(CL_INVALID_EVENT)
    STEER_CL_ERROR(CL_INVALID_OPERATION)
    STEER_CL_ERROR(CL_INVALID_GL_OBJECT)
    STEER_CL_ERROR(CL_INVALID_BUFFER_SIZE)
    STEER_CL_ERROR(CL_INVALID_MIP_LEVEL)
    STEER_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
    STEER_CL_ERROR(CL_INVALID_PROPERTY)
    STEER_CL_ERROR(CL_INVALID_IMAGE_DESCRIPTOR)
    STEER_CL_ERROR(CL_INVALID_COMPILER_OPTIONS)
    STEER_CL_ERROR(CL_INVALID_LINKER_OPTIONS)
    STEER_CL_ERROR(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef STEER_CL_ERROR
    case -1001:  // cl_khr_icd: the ICD loader found no platform
      return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
      return nullptr;
  }
}

// clGetDeviceInfo and clGetPlatformInfo share a signature; both return NUL-terminated text.
template <typename Object, typename Info>
std::string info_string(cl_int (*get_info)(Object, Info, std::size_t, void*, std::size_t*), Object object,
                        Info what, std::string_view call, std::string_view what_name) {
  std::size_t bytes = 0;
  check(get_info(object, what, 0, nullptr, &bytes), call, what_name);
  std::string text(bytes, '\0');
  check(get_info(object, what, bytes, text.data(), nullptr), call, what_name);
  while (!text.empty() && (text.back() == '\0' || text.back() == ' ')) text.pop_back();
  return text;
}

}  // namespace

std::string error_name(cl_int code) {
  if (const char* name = known_error_name(code)) return fmt::format("{} ({})", name, code);
  return fmt::format("OpenCL error {}", code);
}

void throw_error(std::string_view call, cl_int code, std::string_view context) {
  if (context.empty()) throw BackendError(fmt::format("{}: {}", call, error_name(code)));
  throw BackendError(fmt::format("{} ({}): {}", call, context, error_name(code)));
}

std::string device_string(cl_device_id device, cl_device_info what, std::string_view what_name) {
  return info_string(clGetDeviceInfo, device, what, "clGetDeviceInfo", what_name);
}

std::string platform_string(cl_platform_id platform, cl_platform_info what, std::string_view what_name) {
  return info_string(clGetPlatformInfo, platform, what, "clGetPlatformInfo", what_name);
}

std::string build_log(cl_program program, cl_device_id device) {
  std::size_t bytes = 0;
  check(clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &bytes), "clGetProgramBuildInfo",
        "CL_PROGRAM_BUILD_LOG");
  std::string log(bytes, '\0');
  check(clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, bytes, log.data(), nullptr),
        "clGetProgramBuildInfo", "CL_PROGRAM_BUILD_LOG");
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n' || log.back() == ' ')) log.pop_back();
  return log;
}

std::vector<std::size_t> device_max_work_item_sizes(cl_device_id device) {
  const auto dimensions = device_value<cl_uint>(device, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS,
                                                "CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS");
  std::vector<std::size_t> sizes(dimensions);
  check(clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizes.size() * sizeof(std::size_t),
                        sizes.data(), nullptr),
        "clGetDeviceInfo", "CL_DEVICE_MAX_WORK_ITEM_SIZES");
  return sizes;
}

}  // namespace steer::opencl
