#pragma once
// The kernel languages and buffer element types that a spec, a backend and output
// validation all speak of.
#include <cstddef>

namespace steer {

enum class Language { Cuda, OpenCL };
const char* to_string(Language language) noexcept;

enum class ElementType { F32, F64, I32, U32, I64, U64, I8, U8 };
std::size_t size_of(ElementType type) noexcept;
const char* to_string(ElementType type) noexcept;  // "float", "double", "int32", ...

}  // namespace steer
