#include "backend/cuda/nvrtc_compiler.hpp"

#include <fmt/format.h>
#include <nvrtc.h>

#include <algorithm>
#include <utility>

namespace steer::cuda {
namespace {

// Owns one NVRTC program.
class NvrtcProgram {
 public:
  NvrtcProgram(const std::string& source, const std::string& name) {
    nvrtcResult result = nvrtcCreateProgram(&program_, source.c_str(), name.c_str(), 0, nullptr, nullptr);
    if (result != NVRTC_SUCCESS) {
      throw CompileError(fmt::format("nvrtcCreateProgram failed for {}: {}", name, nvrtcGetErrorString(result)));
    }
  }
  NvrtcProgram(const NvrtcProgram&) = delete;
  NvrtcProgram& operator=(const NvrtcProgram&) = delete;
  ~NvrtcProgram() { nvrtcDestroyProgram(&program_); }

  nvrtcProgram get() const noexcept { return program_; }

  std::string log() const {
    std::size_t size = 0;
    if (nvrtcGetProgramLogSize(program_, &size) != NVRTC_SUCCESS || size <= 1) return {};
    std::string log(size, '\0');
    if (nvrtcGetProgramLog(program_, log.data()) != NVRTC_SUCCESS) return {};
    log.resize(size - 1);  // the size counts the terminating NUL
    while (!log.empty() && (log.back() == '\n' || log.back() == '\r')) log.pop_back();
    return log;
  }

 private:
  nvrtcProgram program_ = nullptr;
};

bool sets_option(const std::vector<std::string>& options, std::initializer_list<std::string_view> prefixes) {
  return std::any_of(options.begin(), options.end(), [&](const std::string& option) {
    return std::any_of(prefixes.begin(), prefixes.end(),
                       [&](std::string_view prefix) { return option.starts_with(prefix); });
  });
}

// STEER_CUDA_INCLUDE_DIR comes from CMake's CUDAToolkit_INCLUDE_DIRS, which may be a
// ';'-separated list (newer toolkits add their cccl folder).
std::vector<std::string> toolkit_include_dirs() {
  std::vector<std::string> dirs;
  std::string_view list = STEER_CUDA_INCLUDE_DIR;
  while (!list.empty()) {
    std::size_t end = std::min(list.find(';'), list.size());
    if (end > 0) dirs.emplace_back(list.substr(0, end));
    list.remove_prefix(std::min(end + 1, list.size()));
  }
  return dirs;
}

std::string describe_defines(const KernelInstance& instance) {
  if (instance.defines.empty()) return "no defines";
  std::string text;
  for (const auto& [name, value] : instance.defines) {
    text += fmt::format("{}{}={}", text.empty() ? "" : " ", name, value);
  }
  return text;
}

void require(nvrtcResult result, const char* call, const Program& program) {
  if (result != NVRTC_SUCCESS) {
    throw CompileError(fmt::format("{} failed for {}: {}", call, program.source_name, nvrtcGetErrorString(result)));
  }
}

Cubin compile(const Program& program, const KernelInstance& instance, int cc_major, int cc_minor,
              std::string* log_out) {
  const std::string source_name = program.source_name.empty() ? "kernel.cu" : program.source_name;
  NvrtcProgram nvrtc(program.source, source_name);
  require(nvrtcAddNameExpression(nvrtc.get(), program.kernel_name.c_str()), "nvrtcAddNameExpression", program);

  std::vector<std::string> options = nvrtc_options(program, instance, cc_major, cc_minor);
  std::vector<const char*> option_pointers;
  option_pointers.reserve(options.size());
  for (const std::string& option : options) option_pointers.push_back(option.c_str());

  nvrtcResult result =
      nvrtcCompileProgram(nvrtc.get(), static_cast<int>(option_pointers.size()), option_pointers.data());
  Cubin cubin;
  cubin.log = nvrtc.log();
  if (log_out) *log_out = cubin.log;
  if (result != NVRTC_SUCCESS) {
    // The defines come before NVRTC's own header, whose templates name their parameters T and
    // the like: a tuning parameter of such a name breaks that header, not the kernel.
    const bool in_builtin_header = cubin.log.find("__nv_nvrtc_builtin_header.h") != std::string::npos;
    const std::string hint =
        in_builtin_header && !instance.defines.empty()
            ? fmt::format("\nThe errors are in NVRTC's own header, which the defines are seen by too: a define whose "
                          "name that header uses (such as T) breaks it. Rename the parameter ({}).",
                          describe_defines(instance))
            : "";
    throw CompileError(fmt::format("NVRTC could not compile {} (kernel '{}', {}, sm_{}{}): {}\n{}{}", source_name,
                                   program.kernel_name, describe_defines(instance), cc_major, cc_minor,
                                   nvrtcGetErrorString(result), cubin.log, hint));
  }

  std::size_t size = 0;
  require(nvrtcGetCUBINSize(nvrtc.get(), &size), "nvrtcGetCUBINSize", program);
  if (size == 0) {
    throw CompileError(
        fmt::format("NVRTC produced no cubin for {}: the options name a virtual architecture "
                    "(compute_XY); use a real one (sm_XY)",
                    source_name));
  }
  cubin.image.resize(size);
  require(nvrtcGetCUBIN(nvrtc.get(), cubin.image.data()), "nvrtcGetCUBIN", program);

  const char* symbol = nullptr;
  require(nvrtcGetLoweredName(nvrtc.get(), program.kernel_name.c_str(), &symbol), "nvrtcGetLoweredName", program);
  cubin.symbol = symbol;  // owned by the program: copy before it is destroyed
  return cubin;
}

}  // namespace

std::vector<std::string> nvrtc_options(const Program& program, const KernelInstance& instance, int cc_major,
                                       int cc_minor) {
  std::vector<std::string> options;
  const auto& own = program.compiler_options;
  if (!sets_option(own, {"--gpu-architecture", "-arch"})) {
    options.push_back(fmt::format("--gpu-architecture=sm_{}{}", cc_major, cc_minor));
  }
  if (!sets_option(own, {"--std", "-std"})) options.emplace_back("--std=c++17");
  for (const auto& [name, value] : instance.defines) options.push_back(fmt::format("-D{}={}", name, value));
  for (const std::string& dir : program.include_dirs) options.push_back("-I" + dir);
  for (const std::string& dir : toolkit_include_dirs()) options.push_back("-I" + dir);
  options.insert(options.end(), own.begin(), own.end());
  return options;
}

Cubin nvrtc_compile(const Program& program, const KernelInstance& instance, int cc_major, int cc_minor) {
  return compile(program, instance, cc_major, cc_minor, nullptr);
}

std::vector<char> nvrtc_compile_cubin(const Program& program, const KernelInstance& instance, int cc_major,
                                      int cc_minor, std::string* log) {
  return compile(program, instance, cc_major, cc_minor, log).image;
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return fmt::format("{}.{}", major, minor);
}

std::vector<int> nvrtc_supported_architectures() {
  int count = 0;
  if (nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0) return {};
  std::vector<int> architectures(static_cast<std::size_t>(count));
  if (nvrtcGetSupportedArchs(architectures.data()) != NVRTC_SUCCESS) return {};
  return architectures;
}

}  // namespace steer::cuda
