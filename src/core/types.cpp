// Names and sizes of the kernel languages and element types.
#include "steer/types.hpp"

namespace steer {

const char* to_string(Language language) noexcept {
  switch (language) {
    case Language::Cuda: return "cuda";
    case Language::OpenCL: return "opencl";
  }
  return "?";
}

std::size_t size_of(ElementType type) noexcept {
  switch (type) {
    case ElementType::F64:
    case ElementType::I64:
    case ElementType::U64: return 8;
    case ElementType::F32:
    case ElementType::I32:
    case ElementType::U32: return 4;
    case ElementType::I8:
    case ElementType::U8: return 1;
  }
  return 0;
}

const char* to_string(ElementType type) noexcept {
  switch (type) {
    case ElementType::F32: return "float";
    case ElementType::F64: return "double";
    case ElementType::I32: return "int32";
    case ElementType::U32: return "uint32";
    case ElementType::I64: return "int64";
    case ElementType::U64: return "uint64";
    case ElementType::I8: return "int8";
    case ElementType::U8: return "uint8";
  }
  return "?";
}

}  // namespace steer
