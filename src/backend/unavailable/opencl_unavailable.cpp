// Stands in for the OpenCL backend when the build found no OpenCL headers and ICD loader.
#include "steer/backend.hpp"

namespace steer {
std::unique_ptr<Backend> make_opencl_backend(const BackendOptions&) {
  throw BackendError("the OpenCL backend was not built: CMake found no OpenCL (run scripts/setup, "
                     "which installs ocl-icd-opencl-dev, opencl-headers and pocl-opencl-icd)");
}
bool opencl_backend_built() noexcept { return false; }
}  // namespace steer
