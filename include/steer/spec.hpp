#pragma once
// A tuning spec: the space, the kernel, its launch geometry, arguments, problem sizes and
// how to validate it. Format: docs/spec.md (JSON schema: docs/spec.schema.json).
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "steer/space.hpp"
#include "steer/types.hpp"
#include "steer/value.hpp"

namespace steer {

// How a buffer is filled before each launch.
struct Initialiser {
  enum class Kind { Random, Constant, Zeros, File, Iota, Memory } kind = Kind::Zeros;
  std::uint64_t seed = 1;     // Random
  double low = 0, high = 1;   // Random: uniform in [low, high)
  double value = 0;           // Constant
  std::filesystem::path file; // File: raw little-endian elements
  // Memory (in code only, steer/embed.hpp): the application's own elements (or a scalar's
  // bytes), read each time a run starts; the memory must stay valid while the spec is used.
  std::span<const std::byte> memory;
};

struct Argument {
  std::string name;
  bool is_buffer = true;
  ElementType type = ElementType::F32;
  std::string size;          // buffers: number of elements, an expression of problem-size variables
  Initialiser init;          // buffers (and scalars given in code: Memory)
  bool output = false;       // buffers: compared with the reference after a launch
  std::string value;         // scalars: an expression of problem-size variables and parameters
};

// Grid and block: expressions of parameters and problem-size variables. `grid` counts
// blocks (work-groups), as CUDA does; OpenCL's global size is grid * block.
// The expression language has cdiv(a, b) for divide-and-round-up.
struct LaunchSpec {
  std::vector<std::string> grid{"1", "1", "1"};
  std::vector<std::string> block{"1", "1", "1"};
  std::string shared_memory_bytes = "0";  // dynamic shared/local memory
};

struct KernelSpec {
  std::string name;  // entry point
  std::map<Language, std::filesystem::path> sources;  // absolute after loading
  std::map<Language, std::string> source_texts;       // in code: the source itself, in place of a file
  LaunchSpec launch;
  std::vector<Argument> arguments;
  std::vector<std::string> compiler_options;
  bool compute_bound = false;  // hint for the expert system (inst_reaction 0.5)
  // A launch slower than this is a timeout (steer tune --timeout-ms overrides it); unset:
  // 10 s (RunOptions::timeout_ms).
  std::optional<double> timeout_ms;
};

struct ProblemSize {
  std::string name;
  std::vector<std::pair<std::string, Value>> variables;  // e.g. {"N", 8192}
  std::optional<double> flops;  // expression results, per launch
  std::optional<double> bytes;
};

// The work rate of one launch of `median_ms` at `size`: GFLOP/s from its flops, GB/s from
// its bytes. Each is absent when the spec gives no such count, gives 0 (a copy does no
// floating-point work), or the time is not positive.
struct Throughput {
  std::optional<double> gflop_per_s;
  std::optional<double> gb_per_s;
};
Throughput throughput(const ProblemSize& size, double median_ms);

// How one output is compared with its expected values, element by element:
//   Tolerance: passes when actual == expected or |actual - expected| <= abs + rel * |expected|;
//   Ulps:      passes when at most `ulps` representable values lie between them (float and
//              double; integers: their difference);
//   Ignore:    not compared.
// NaN never passes.
struct Comparison {
  enum class Kind { Tolerance, Ulps, Ignore } kind = Kind::Tolerance;
  double abs = 1e-5, rel = 1e-4;
  std::uint64_t ulps = 0;
};

// A kernel that computes the expected outputs on the device: same arguments as the tuned
// kernel, its own source, entry point and launch geometry (expressions of size variables).
struct ReferenceKernel {
  std::string name;  // entry point; empty: the tuned kernel's name
  std::map<Language, std::filesystem::path> sources;  // absolute after loading
  std::map<Language, std::string> source_texts;       // in code: the source itself
  LaunchSpec launch;
};

struct Reference {
  // Cpu: a function compiled into the program (steer/reference.hpp); Configuration: the
  // outputs of a trusted configuration; Files: expected outputs read from files; Kernel: a
  // reference kernel run on the device.
  enum class Kind { None, Cpu, Configuration, Files, Kernel } kind = Kind::None;
  std::string cpu_function;  // registered name (see steer/reference.hpp)
  std::vector<std::pair<std::string, Value>> configuration;
  // Files: per output argument, raw little-endian elements or a NumPy .npy array; "{size}"
  // in a path stands for the problem size's name.
  std::map<std::string, std::filesystem::path> expected_files;
  ReferenceKernel kernel;
  double abs_tolerance = 1e-5;
  double rel_tolerance = 1e-4;
  std::map<std::string, Comparison> comparisons;  // per output argument, by name

  // The comparison of output `name`: its own, else a tolerance of abs_tolerance, rel_tolerance.
  Comparison comparison(std::string_view name) const;
};

struct Spec {
  std::filesystem::path path;  // file it came from (empty if built in code)
  std::string name;
  std::string description;
  SpaceDefinition space;
  std::optional<KernelSpec> kernel;  // absent in a space-only spec
  std::vector<ProblemSize> sizes;
  std::string default_size;
  Reference reference;
  // A hash of the file's text, for provenance. A results store keys a tuning by the spec's
  // content instead (src/tuner/tuning_content.hpp): a description or the layout of the
  // JSON changes this hash, not that.
  std::string hash;

  const ProblemSize& size(std::string_view name) const;  // throws SpecError naming the choices
};

// The hash Spec::hash holds: 16 hex digits of a stable 64-bit hash of `bytes` (the spec
// file's content, or a spec built in code described as text).
std::string content_hash(std::string_view bytes);

// Loads a Steer JSON spec, or a KTT JSON tuning file (its ConfigurationSpace section).
// Throws SpecError with the file name and JSON path of the culprit, or ExpressionError.
Spec load_spec(const std::filesystem::path& path);
Spec parse_spec(std::string_view json_text, const std::filesystem::path& origin = {});

}  // namespace steer
