// The extension module steer._steer. The package `steer` (python/steer/) builds its Python
// interface on it: tune_kernel in Kernel Tuner's terms, and the native classes as they are.
#include "convert.hpp"

#include "steer/backend.hpp"

NB_MODULE(_steer, module) {
  using namespace steer::python;
  module.doc() = "Steer's C++ core: spaces, specs, searchers, the tuner, recordings, simulation, store, models";
  register_exceptions(module);
  bind_space(module);
  bind_tuner(module);
  bind_data(module);
  module.attr("opencl_built") = steer::opencl_backend_built();
  module.attr("cuda_built") = steer::cuda_backend_built();
}
