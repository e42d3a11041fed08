#include "backend/cuda/cache_flush.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace steer::cuda {

CacheFlush::CacheFlush(CUdevice device) {
  const char* setting = std::getenv("STEER_CUPTI_FLUSH");
  const std::string_view mode = setting ? setting : "copy";
  if (mode == "none") return;
  if (mode != "copy") throw BackendError(fmt::format("STEER_CUPTI_FLUSH={}: expected copy or none", mode));
  int l2_bytes = 0;
  check(driver().cuDeviceGetAttribute(&l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, device), "cuDeviceGetAttribute",
        "the L2 cache size");
  bytes_ = static_cast<std::size_t>(std::max(l2_bytes, 1 << 20)) * 3 / 2;
  scratch_ = allocate(bytes_, "the L2 flush buffer");
  target_ = allocate(bytes_, "the L2 flush copy");
}

void CacheFlush::run(CUstream stream, const std::function<void()>& wait_for_stream) {
  if (bytes_ > 0) {
    check(driver().cuMemcpyDtoDAsync(target_.get(), scratch_.get(), bytes_, stream), "cuMemcpyDtoDAsync",
          "the L2 flush");
  }
  wait_for_stream();
}

}  // namespace steer::cuda
