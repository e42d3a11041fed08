#pragma once
// A tuning spec: the space, the kernel, its launch geometry, arguments, problem sizes and
// how to validate it. Format: docs/spec.md (JSON schema: docs/spec.schema.json).
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "steer/space.hpp"
#include "steer/types.hpp"
#include "steer/value.hpp"

namespace steer {

// How a buffer is filled before each launch.
struct Initialiser {
  enum class Kind { Random, Constant, Zeros, File, Iota } kind = Kind::Zeros;
  std::uint64_t seed = 1;     // Random
  double low = 0, high = 1;   // Random: uniform in [low, high)
  double value = 0;           // Constant
  std::filesystem::path file; // File: raw little-endian elements
};

struct Argument {
  std::string name;
  bool is_buffer = true;
  ElementType type = ElementType::F32;
  std::string size;          // buffers: number of elements, an expression of problem-size variables
  Initialiser init;          // buffers
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

struct Reference {
  enum class Kind { None, Cpu, Configuration } kind = Kind::None;
  std::string cpu_function;  // registered name (see steer/reference.hpp)
  std::vector<std::pair<std::string, Value>> configuration;
  double abs_tolerance = 1e-5;
  double rel_tolerance = 1e-4;
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
  std::string hash;  // stable hash of the file's content, for results provenance

  const ProblemSize& size(std::string_view name) const;  // throws SpecError naming the choices
};

// Loads a Steer JSON spec, or a KTT JSON tuning file (its ConfigurationSpace section).
// Throws SpecError with the file name and JSON path of the culprit, or ExpressionError.
Spec load_spec(const std::filesystem::path& path);
Spec parse_spec(std::string_view json_text, const std::filesystem::path& origin = {});

}  // namespace steer
