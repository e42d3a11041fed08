#pragma once
// Choosing an OpenCL device by platform and index, the same way in the backend's process and
// in its worker, and the limits a launch on it is checked against.
#include <string>
#include <vector>

#include "backend/opencl/opencl_api.hpp"
#include "steer/backend.hpp"

namespace steer::opencl {

struct DeviceChoice {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
};

// Device `options.device`, counted over all platforms in order (or within
// `options.platform`). Throws BackendError listing the devices there are.
DeviceChoice choose_device(const BackendOptions& options);

// What Steer reports of the device (DeviceInfo).
DeviceInfo describe_device(cl_device_id device);

}  // namespace steer::opencl
