#include "backend/opencl/opencl_device.hpp"

#include <fmt/format.h>

namespace steer::opencl {

DeviceChoice choose_device(const BackendOptions& options) {
  cl_uint platform_count = 0;
  check(clGetPlatformIDs(0, nullptr, &platform_count), "clGetPlatformIDs",
        "no OpenCL platform: is an ICD (e.g. pocl-opencl-icd) installed?");
  std::vector<cl_platform_id> platforms(platform_count);
  check(clGetPlatformIDs(platform_count, platforms.data(), nullptr), "clGetPlatformIDs");
  if (options.platform >= static_cast<int>(platform_count))
    throw BackendError(fmt::format("OpenCL platform {} does not exist: {} platform(s) found",
                                   options.platform, platform_count));

  std::vector<DeviceChoice> candidates;
  std::string listing;
  for (cl_uint p = 0; p < platform_count; ++p) {
    if (options.platform >= 0 && static_cast<int>(p) != options.platform) continue;
    cl_uint device_count = 0;
    cl_int error = clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, nullptr, &device_count);
    if (error == CL_DEVICE_NOT_FOUND) continue;
    check(error, "clGetDeviceIDs");
    std::vector<cl_device_id> devices(device_count);
    check(clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, device_count, devices.data(), nullptr),
          "clGetDeviceIDs");
    for (cl_device_id device : devices) {
      listing += fmt::format("\n  {}: {} ({})", candidates.size(), device_string(device, CL_DEVICE_NAME, "CL_DEVICE_NAME"),
                             platform_string(platforms[p], CL_PLATFORM_NAME, "CL_PLATFORM_NAME"));
      candidates.push_back({platforms[p], device});
    }
  }
  if (options.device < 0 || options.device >= static_cast<int>(candidates.size()))
    throw BackendError(fmt::format("OpenCL device {} does not exist; devices{}:{}", options.device,
                                   options.platform >= 0 ? fmt::format(" of platform {}", options.platform) : "",
                                   listing.empty() ? " none" : listing));
  return candidates[static_cast<std::size_t>(options.device)];
}

DeviceInfo describe_device(cl_device_id device) {
  DeviceInfo info;
  info.backend = "opencl";
  info.name = device_string(device, CL_DEVICE_NAME, "CL_DEVICE_NAME");
  info.vendor = device_string(device, CL_DEVICE_VENDOR, "CL_DEVICE_VENDOR");
  info.multiprocessors =
      static_cast<int>(device_value<cl_uint>(device, CL_DEVICE_MAX_COMPUTE_UNITS, "CL_DEVICE_MAX_COMPUTE_UNITS"));
  info.global_memory_bytes = device_value<cl_ulong>(device, CL_DEVICE_GLOBAL_MEM_SIZE, "CL_DEVICE_GLOBAL_MEM_SIZE");
  info.max_shared_memory_per_block = device_value<cl_ulong>(device, CL_DEVICE_LOCAL_MEM_SIZE, "CL_DEVICE_LOCAL_MEM_SIZE");
  info.max_threads_per_block = static_cast<int>(
      device_value<std::size_t>(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, "CL_DEVICE_MAX_WORK_GROUP_SIZE"));
  info.driver_version = device_string(device, CL_DRIVER_VERSION, "CL_DRIVER_VERSION");
  const auto platform = device_value<cl_platform_id>(device, CL_DEVICE_PLATFORM, "CL_DEVICE_PLATFORM");
  info.compiler_version = platform_string(platform, CL_PLATFORM_VERSION, "CL_PLATFORM_VERSION");
  const auto type = device_value<cl_device_type>(device, CL_DEVICE_TYPE, "CL_DEVICE_TYPE");
  info.runs_on_host_cores = (type & CL_DEVICE_TYPE_CPU) != 0;
  return info;
}

}  // namespace steer::opencl
