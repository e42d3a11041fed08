#include "tuner/kernel_problem.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <type_traits>

#include "core/fresh_memory.hpp"
#include "steer/error.hpp"

namespace steer {
namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SpecError(fmt::format("cannot read kernel source '{}'", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// "random" buffers: element i is a function of the seed and i alone (SplitMix64's finaliser of
// a key drawn from the seed, plus i times its increment), the same on every machine, with
// every standard library (std::uniform_*_distribution differ between them) and for any
// number of filling threads.
std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
std::uint64_t random_key(std::uint64_t seed) { return mix64(seed + 0x9E3779B97F4A7C15ull); }
std::uint64_t random_bits(std::uint64_t key, std::uint64_t i) { return mix64(key + (i + 1) * 0x9E3779B97F4A7C15ull); }
// [0, 1) with the element type's precision: 24 random bits for float, 53 for double.
template <typename T>
double unit_interval(std::uint64_t bits) {
  if constexpr (std::is_same_v<T, float>) return static_cast<double>(bits >> 40) * 0x1p-24;
  else return static_cast<double>(bits >> 11) * 0x1p-53;
}

// Fills out[0, n) with generate(i), on several threads for large buffers: a 24,576² image
// (6·10⁸ floats) takes seconds on one. `generate` must be a pure function of i, so that the
// buffer does not depend on the number of threads.
template <typename T, typename Generate>
void fill(std::vector<std::byte>& bytes, std::uint64_t n, std::size_t threads /* >= 1 */, Generate generate) {
  resize_zeroed(bytes, n * sizeof(T));
  T* out = reinterpret_cast<T*>(bytes.data());
  auto range = [out, &generate](std::uint64_t first, std::uint64_t last) {
    for (std::uint64_t i = first; i < last; ++i) out[i] = static_cast<T>(generate(i));
  };
  constexpr std::uint64_t kPerThread = std::uint64_t{1} << 20;  // below, a thread costs more than it saves
  const std::uint64_t count = std::clamp<std::uint64_t>(n / kPerThread, 1, threads);
  if (count == 1) {
    range(0, n);
    return;
  }
  const std::uint64_t chunk = (n + count - 1) / count;
  std::vector<std::jthread> workers;
  for (std::uint64_t t = 1; t < count; ++t) {
    workers.emplace_back(range, std::min(n, t * chunk), std::min(n, (t + 1) * chunk));
  }
  range(0, std::min(n, chunk));
}

template <typename T>
void fill_typed(const Argument& argument, std::uint64_t n, std::size_t threads, std::vector<std::byte>& bytes) {
  const Initialiser& init = argument.init;
  switch (init.kind) {
    case Initialiser::Kind::Zeros:
      resize_zeroed(bytes, n * sizeof(T));
      return;
    case Initialiser::Kind::Constant:
      fill<T>(bytes, n, threads, [&](std::uint64_t) { return init.value; });
      return;
    case Initialiser::Kind::Iota:
      fill<T>(bytes, n, threads, [](std::uint64_t i) { return static_cast<double>(i); });
      return;
    case Initialiser::Kind::Random: {
      const std::uint64_t key = random_key(init.seed);
      if constexpr (std::is_floating_point_v<T>) {
        const double from = init.low, width = init.high - init.low;
        const T low = static_cast<T>(init.low), high = static_cast<T>(init.high);
        const T below_high = std::nextafter(high, low);
        fill<T>(bytes, n, threads, [=](std::uint64_t i) {
          const T value = static_cast<T>(from + unit_interval<T>(random_bits(key, i)) * width);
          return high > low && value >= high ? below_high : value;  // rounding can reach high
        });
      } else {
        using Wide = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;
        const auto low = static_cast<Wide>(init.low), high = static_cast<Wide>(init.high);
        if (high < low) {
          throw SpecError(fmt::format("argument '{}': random integers need low ({}) <= high ({})", argument.name, low, high));
        }
        // Inclusive [low, high], by the multiply-shift of the random bits (bias under range / 2^64).
        const std::uint64_t span = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low) + 1;
        fill<T>(bytes, n, threads, [=](std::uint64_t i) {
          const std::uint64_t bits = random_bits(key, i);
          __extension__ using Wide128 = unsigned __int128;  // as space.cpp's draw_below
          const std::uint64_t offset = span == 0 ? bits : static_cast<std::uint64_t>((static_cast<Wide128>(bits) * span) >> 64);
          return static_cast<Wide>(static_cast<std::uint64_t>(low) + offset);
        });
      }
      return;
    }
    case Initialiser::Kind::Memory: {
      if (init.memory.size() != n * sizeof(T)) {
        throw SpecError(fmt::format("argument '{}': the application's memory holds {} bytes, expected {} ({} elements of {})",
                                    argument.name, init.memory.size(), n * sizeof(T), n, to_string(argument.type)));
      }
      resize_zeroed(bytes, init.memory.size());
      copy_parallel(bytes.data(), init.memory.data(), init.memory.size());
      return;
    }
    case Initialiser::Kind::File: {
      std::string data = read_file(init.file);
      if (data.size() != n * sizeof(T)) {
        throw SpecError(fmt::format("argument '{}': file '{}' holds {} bytes, expected {} ({} elements of {})",
                                    argument.name, init.file.string(), data.size(), n * sizeof(T), n,
                                    to_string(argument.type)));
      }
      bytes.resize(data.size());
      std::memcpy(bytes.data(), data.data(), data.size());
      return;
    }
  }
}

template <typename T>
std::vector<std::byte> scalar_bytes(const Value& value) {
  T v = std::is_floating_point_v<T> ? static_cast<T>(value.as_double()) : static_cast<T>(value.as_int());
  std::vector<std::byte> bytes(sizeof(T));
  std::memcpy(bytes.data(), &v, sizeof(T));
  return bytes;
}

template <typename F>
auto dispatch(ElementType type, F&& f) {
  switch (type) {
    case ElementType::F32: return f(float{});
    case ElementType::F64: return f(double{});
    case ElementType::I32: return f(std::int32_t{});
    case ElementType::U32: return f(std::uint32_t{});
    case ElementType::I64: return f(std::int64_t{});
    case ElementType::U64: return f(std::uint64_t{});
    case ElementType::I8: return f(std::int8_t{});
    case ElementType::U8: return f(std::uint8_t{});
  }
  throw Error("unknown element type");
}

std::uint64_t to_extent(const expr::Scalar& s, const expr::Expression& e) {
  double v = s.as_double();
  if (!(v >= 1) || v != std::floor(v)) {
    throw ExpressionError(fmt::format("launch geometry must be a positive integer, got {}", v), e.text());
  }
  return static_cast<std::uint64_t>(v);
}

}  // namespace

std::vector<std::byte> initialise_buffer(const Argument& argument, std::uint64_t elements, std::size_t threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::byte> bytes;
  dispatch(argument.type, [&](auto tag) { fill_typed<decltype(tag)>(argument, elements, threads, bytes); });
  return bytes;
}

std::string kernel_source(const std::string& kernel_name, const std::map<Language, std::filesystem::path>& files,
                          const std::map<Language, std::string>& texts, Language language, std::string& source_name,
                          std::string& directory) {
  if (const auto text = texts.find(language); text != texts.end()) {
    source_name = kernel_name + (language == Language::OpenCL ? ".cl" : ".cu");
    directory.clear();
    return text->second;
  }
  const auto file = files.find(language);
  if (file == files.end()) throw SpecError(fmt::format("kernel '{}' has no {} source", kernel_name, to_string(language)));
  source_name = file->second.filename().string();
  directory = file->second.parent_path().string();
  return read_file(file->second);
}

KernelProblem::KernelProblem(const Spec& spec, const Space& space, const ProblemSize& size, Language language,
                             LaunchFunction launch)
    : space_(space), size_(size), launch_(std::move(launch)) {
  if (!spec.kernel) throw SpecError(fmt::format("spec '{}' has no kernel section: nothing to run", spec.name));
  const KernelSpec& kernel = *spec.kernel;
  if (!kernel.sources.contains(language) && !kernel.source_texts.contains(language)) {
    throw SpecError(fmt::format("spec '{}' has no {} source", spec.name, to_string(language)));
  }
  program_.language = language;
  std::string directory;
  program_.source = kernel_source(kernel.name, kernel.sources, kernel.source_texts, language, program_.source_name,
                                  directory);
  program_.kernel_name = kernel.name;
  program_.compiler_options = kernel.compiler_options;
  if (!directory.empty()) program_.include_dirs.push_back(directory);

  for (const Argument& argument : kernel.arguments) {
    HostArgument host;
    host.name = argument.name;
    host.is_buffer = argument.is_buffer;
    host.type = argument.type;
    host.output = argument.output;
    try {
      if (argument.is_buffer) {
        std::int64_t n = expr::evaluate_once(argument.size, size.variables).as_int();
        if (n <= 0) throw SpecError(fmt::format("argument '{}': size '{}' is {}", argument.name, argument.size, n));
        host.data = initialise_buffer(argument, static_cast<std::uint64_t>(n));
      } else if (argument.init.kind == Initialiser::Kind::Memory) {  // a scalar given in code
        if (argument.init.memory.size() != size_of(argument.type)) {
          throw SpecError(fmt::format("argument '{}': {} bytes for a scalar of {}", argument.name,
                                      argument.init.memory.size(), to_string(argument.type)));
        }
        host.data.assign(argument.init.memory.begin(), argument.init.memory.end());
      } else {
        Value value = expr::evaluate_once(argument.value, size.variables);
        host.data = dispatch(argument.type, [&](auto tag) { return scalar_bytes<decltype(tag)>(value); });
      }
    } catch (const ExpressionError& e) {
      throw SpecError(fmt::format("argument '{}' of size '{}': {}", argument.name, size.name, e.detailed()));
    }
    if (host.output) outputs_.push_back(program_.arguments.size());
    program_.arguments.push_back(std::move(host));
  }

  // Geometry expressions see the parameters first, then the size variables.
  std::vector<std::string> names;
  for (const Parameter& p : space.parameters()) names.push_back(p.name);
  for (const auto& [name, value] : size.variables) {
    names.push_back(name);
    size_scalars_.push_back(expr::to_scalar(value));
  }
  auto parse_all = [&](const std::vector<std::string>& texts, const char* what) {
    if (texts.empty() || texts.size() > 3) {
      throw SpecError(fmt::format("spec '{}': launch.{} needs 1 to 3 expressions", spec.name, what));
    }
    std::vector<expr::Expression> out;
    for (const std::string& text : texts) out.push_back(expr::Expression::parse(text, names));
    return out;
  };
  grid_ = parse_all(kernel.launch.grid, "grid");
  block_ = parse_all(kernel.launch.block, "block");
  shared_memory_ = expr::Expression::parse(kernel.launch.shared_memory_bytes, names);
  for (const Parameter& p : space.parameters()) {
    std::vector<expr::Scalar> scalars;
    for (const Value& v : p.values) scalars.push_back(expr::to_scalar(v));
    parameter_scalars_.push_back(std::move(scalars));
  }
}

KernelInstance KernelProblem::instance(ConfigIndex config) const {
  const auto& params = space_.parameters();
  ValueIndices indices = space_.value_indices(config);
  std::vector<expr::Scalar> slots;
  slots.reserve(params.size() + size_scalars_.size());
  KernelInstance instance;
  instance.config_index = config;
  instance.defines.reserve(params.size());
  for (std::size_t p = 0; p < params.size(); ++p) {
    slots.push_back(parameter_scalars_[p][indices[p]]);
    instance.defines.emplace_back(params[p].name, params[p].values[indices[p]].to_string());
  }
  if (launch_) {
    std::vector<std::pair<std::string, Value>> configuration;
    configuration.reserve(params.size());
    for (std::size_t p = 0; p < params.size(); ++p) configuration.emplace_back(params[p].name, params[p].values[indices[p]]);
    launch_(configuration, instance);
    return instance;
  }
  slots.insert(slots.end(), size_scalars_.begin(), size_scalars_.end());
  for (std::size_t d = 0; d < grid_.size(); ++d) instance.grid[d] = to_extent(grid_[d].evaluate(slots), grid_[d]);
  for (std::size_t d = 0; d < block_.size(); ++d) {
    instance.block[d] = to_extent(block_[d].evaluate(slots), block_[d]);
  }
  double shared = shared_memory_.evaluate(slots).as_double();
  if (shared < 0) throw ExpressionError("shared memory size is negative", shared_memory_.text());
  instance.shared_memory_bytes = static_cast<std::size_t>(shared);
  return instance;
}

}  // namespace steer
