// Chooses a backend by name; "auto" prefers a CUDA GPU and falls back to OpenCL.
#include <fmt/format.h>

#include "steer/backend.hpp"
#include "steer/error.hpp"

namespace steer {

std::unique_ptr<Backend> open_backend(const std::string& kind, const BackendOptions& options, std::string* note) {
  if (kind == "cuda") return make_cuda_backend(options);
  if (kind == "opencl") return make_opencl_backend(options);
  if (kind != "auto") throw BackendError(fmt::format("unknown backend '{}'; choose cuda, opencl or auto", kind));
  std::string cuda_problem;
  try {
    return make_cuda_backend(options);
  } catch (const BackendError& e) {
    cuda_problem = e.what();
  }
  try {
    auto backend = make_opencl_backend(options);
    if (note) *note = fmt::format("no CUDA GPU ({}); using OpenCL", cuda_problem);
    return backend;
  } catch (const BackendError& e) {
    throw BackendError(fmt::format("no backend available: CUDA: {}; OpenCL: {}", cuda_problem, e.what()));
  }
}

}  // namespace steer
