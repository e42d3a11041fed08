// Stands in for the CUDA backend when the build found no CUDA toolkit.
#include <unistd.h>

#include "backend/worker/serve.hpp"
#include "steer/backend.hpp"

namespace steer {
std::unique_ptr<Backend> make_cuda_backend(const BackendOptions&) {
  throw BackendError("the CUDA backend was not built: CMake found no CUDA toolkit (driver API and NVRTC); "
                     "install the CUDA toolkit and rebuild");
}
bool cuda_backend_built() noexcept { return false; }
}  // namespace steer

// Never started: make_cuda_backend refuses before any worker is.
void steer::worker::serve_cuda_worker() { ::_exit(1); }
