#pragma once
// Compiles a configuration of a CUDA kernel with NVRTC straight to a cubin for one GPU
// architecture. Needs no GPU and no driver, so CI can check that kernels compile.
//
// Options, in order: --gpu-architecture=sm_XY, --std=c++17 (both only when the program's
// own options do not set them), -DNAME=VALUE for each define, -I for each of the program's
// include directories and then the toolkit's include directory (headers like cuda_fp16.h
// live there), then the program's compiler options.
// Not -default-device: kernels keep nvcc's rules (helpers need __device__), so the same
// kernel.cu compiles with nvcc too; a spec that wants it can list it in its options.
//
// The kernel is looked up through an NVRTC name expression, so a misspelt kernel name is
// a compile error at once, and a kernel need not be extern "C" (a name like "mm<16>" or a
// C++ function is resolved to its mangled symbol).
//
// Thread-safe: each call compiles its own NVRTC program.
#include <string>
#include <vector>

#include "steer/backend.hpp"

namespace steer::cuda {

struct Cubin {
  std::vector<char> image;  // an ELF cubin for the requested architecture
  std::string symbol;       // the kernel's name in the image (mangled unless extern "C")
  std::string log;          // compiler warnings; empty when there were none
};

// The NVRTC options for one configuration (see the top of this file).
std::vector<std::string> nvrtc_options(const Program& program, const KernelInstance& instance, int cc_major,
                                       int cc_minor);

// Throws CompileError whose message names the source, the kernel and the defines, and
// holds NVRTC's log (which names the offending line).
Cubin nvrtc_compile(const Program& program, const KernelInstance& instance, int cc_major, int cc_minor);

// The same, for callers that only need the image (CI's compile checks). `log`, if given,
// receives the compiler's log, also when it throws.
std::vector<char> nvrtc_compile_cubin(const Program& program, const KernelInstance& instance, int cc_major,
                                      int cc_minor, std::string* log = nullptr);

// "13.0"
std::string nvrtc_version();

// The real architectures ("sm_XY") this NVRTC can generate code for, as CC numbers (90).
std::vector<int> nvrtc_supported_architectures();

}  // namespace steer::cuda
