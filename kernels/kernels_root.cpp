// Where the benchmark kernels live, for tests and the demo.
#include <string>

namespace steer::kernels {
std::string root_directory() { return STEER_KERNELS_DIR; }
}  // namespace steer::kernels
