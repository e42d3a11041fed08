// Stands in for the OpenCL backend when the build found no OpenCL headers and ICD loader.
#include <unistd.h>

#include "backend/worker/serve.hpp"
#include "steer/backend.hpp"

namespace steer {
std::unique_ptr<Backend> make_opencl_backend(const BackendOptions&) {
  throw BackendError("the OpenCL backend was not built: CMake found no OpenCL (run scripts/setup, "
                     "which installs ocl-icd-opencl-dev, opencl-headers and pocl-opencl-icd)");
}
bool opencl_backend_built() noexcept { return false; }
}  // namespace steer

// Never started: make_opencl_backend refuses before any worker is.
void steer::worker::serve_opencl_worker() { ::_exit(1); }
