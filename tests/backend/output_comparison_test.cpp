// Comparing outputs on the device (Backend::expect_outputs, backend/worker/output_comparison):
// for every element type and both kinds of comparison, the device must find exactly what
// validate_output finds on the host (the same mismatches, first mismatch and largest error),
// on OpenCL (PoCL's CPU device in CI) and, where a GPU answers, on CUDA. Without a GPU the
// CUDA kernel is still compiled for every type with NVRTC.
#include <gtest/gtest.h>
#include <gmock/gmock.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backend/worker/output_comparison.hpp"
#include "measure/validation.hpp"
#include "steer/backend.hpp"
#if __has_include("backend/cuda/nvrtc_compiler.hpp")
#include "backend/cuda/nvrtc_compiler.hpp"
#endif

namespace steer {
namespace {

using ::testing::HasSubstr;

// More elements than the kernel's groups cover at once (1024 × 256), so that each work-item
// tests several: the first mismatch must still be the first.
constexpr std::size_t kElements = 300'001;

constexpr const char* kOpenclCopy = R"(
__kernel void copy(__global ELEMENT* destination, __global const ELEMENT* source, const int n) {
  const int i = get_global_id(0);
  if (i < n) destination[i] = source[i];
})";

constexpr const char* kCudaCopy = R"(
extern "C" __global__ void copy(ELEMENT* destination, const ELEMENT* source, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) destination[i] = source[i];
})";

template <typename T>
std::vector<std::byte> to_bytes(const std::vector<T>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// A type's name in each language, for the copy kernel's -D T=...
struct TypeCase {
  ElementType type;
  const char* opencl;
  const char* cuda;
};

// What the kernel copies (`source`) and what it is compared against (`expected`): equal but
// for a few hundred elements, some within the comparison's bounds and some beyond, with the
// values where comparing is easy to get wrong (NaN, infinities, ±0, extremes) among them.
struct Case {
  std::vector<std::byte> source, expected;
};

template <typename T>
Case make_case(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> source(kElements), expected;
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<double> value(-1000.0, 1000.0);
    for (T& v : source) v = static_cast<T>(value(rng));
    expected = source;
    const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
    const auto set = [&](std::size_t i, T s, T e) { source[i] = s, expected[i] = e; };
    set(5, 0, -0.0);                                             // ±0: equal
    set(6, inf, inf);                                            // equal infinities
    set(7, nan, nan);                                            // NaN never passes
    set(8, 1, nan);
    set(9, inf, -inf);
    set(10, std::numeric_limits<T>::denorm_min(), 0);
    set(11, -std::numeric_limits<T>::denorm_min(), std::numeric_limits<T>::denorm_min());
    set(12, std::numeric_limits<T>::max(), std::numeric_limits<T>::lowest());
    for (int k = 0; k < 300; ++k) {
      const std::size_t i = 100 + rng() % (kElements - 100);
      const int steps = static_cast<int>(rng() % 12);
      T e = source[i];
      for (int s = 0; s < steps; ++s) e = std::nextafter(e, inf);  // 0-11 ULPs away
      if (k % 3 == 0) e = static_cast<T>(source[i] * (1 + 1e-6 * static_cast<double>(rng() % 2000)));
      expected[i] = e;
    }
  } else {
    std::uniform_int_distribution<long long> value(static_cast<long long>(std::numeric_limits<T>::lowest() / 2),
                                                   static_cast<long long>(std::numeric_limits<T>::max() / 2));
    for (T& v : source) v = static_cast<T>(value(rng));
    expected = source;
    source[3] = std::numeric_limits<T>::lowest(), expected[3] = std::numeric_limits<T>::max();
    source[4] = std::numeric_limits<T>::max(), expected[4] = std::numeric_limits<T>::lowest();
    for (int k = 0; k < 300; ++k) {
      const std::size_t i = 100 + rng() % (kElements - 100);
      expected[i] = static_cast<T>(source[i] + static_cast<T>(rng() % 9));  // 0-8 apart
    }
  }
  return Case{to_bytes(source), to_bytes(expected)};
}

Case make_case(ElementType type, std::uint64_t seed) {
  switch (type) {
    case ElementType::F32: return make_case<float>(seed);
    case ElementType::F64: return make_case<double>(seed);
    case ElementType::I32: return make_case<std::int32_t>(seed);
    case ElementType::U32: return make_case<std::uint32_t>(seed);
    case ElementType::I64: return make_case<std::int64_t>(seed);
    case ElementType::U64: return make_case<std::uint64_t>(seed);
    case ElementType::I8: return make_case<std::int8_t>(seed);
    case ElementType::U8: return make_case<std::uint8_t>(seed);
  }
  return {};
}

const std::vector<TypeCase>& type_cases() {
  static const std::vector<TypeCase> cases = {
      {ElementType::F32, "float", "float"},       {ElementType::F64, "double", "double"},
      {ElementType::I32, "int", "int"},           {ElementType::U32, "uint", "unsigned int"},
      {ElementType::I64, "long", "long long"},    {ElementType::U64, "ulong", "unsigned long long"},
      {ElementType::I8, "char", "signed char"},   {ElementType::U8, "uchar", "unsigned char"}};
  return cases;
}

std::vector<Comparison> comparisons() {
  return {Comparison{.kind = Comparison::Kind::Tolerance, .abs = 2, .rel = 1e-4},
          Comparison{.kind = Comparison::Kind::Tolerance, .abs = 0, .rel = 0},
          Comparison{.kind = Comparison::Kind::Ulps, .ulps = 4}};
}

Program copy_program(Language language, ElementType type, const Case& data) {
  Program program;
  program.language = language;
  program.source = language == Language::Cuda ? kCudaCopy : kOpenclCopy;
  program.source_name = language == Language::Cuda ? "copy.cu" : "copy.cl";
  program.kernel_name = "copy";
  std::vector<std::byte> n(sizeof(std::int32_t));
  const auto count = static_cast<std::int32_t>(kElements);
  std::memcpy(n.data(), &count, sizeof count);
  program.arguments = {
      HostArgument{"destination", true, type, std::vector<std::byte>(data.source.size()), true},
      HostArgument{"source", true, type, data.source, false},
      HostArgument{"n", false, ElementType::I32, n, false},
  };
  return program;
}

// For every type and comparison: the device's comparison against the host's of the same
// output, read back.
void expect_device_compares_as_the_host(Backend& backend, Language language) {
  for (const TypeCase& type : type_cases()) {
    const Case data = make_case(type.type, 7);
    backend.load(copy_program(language, type.type, data));
    KernelInstance instance;
    instance.defines = {{"ELEMENT", language == Language::Cuda ? type.cuda : type.opencl}};
    instance.block = {256, 1, 1};
    instance.grid = {(kElements + 255) / 256, 1, 1};
    const auto kernel = backend.compile(instance);
    for (const Comparison& comparison : comparisons()) {
      SCOPED_TRACE(fmt::format("{}, comparison kind {}, abs {}, rel {}, ulps {}", to_string(type.type),
                               static_cast<int>(comparison.kind), comparison.abs, comparison.rel, comparison.ulps));
      ASSERT_TRUE(backend.expect_outputs({ExpectedOutput{.argument = 0, .bytes = data.expected, .comparison = comparison}}));
      RunOptions compare{.warmup = 0, .repetitions = 1, .read_outputs = false, .compare_outputs = true};
      const RunResult on_device = backend.run(*kernel, instance, compare);
      ASSERT_EQ(on_device.status, Status::Ok) << on_device.message;
      EXPECT_TRUE(on_device.outputs.empty());  // nothing read back
      ASSERT_EQ(on_device.comparisons.size(), 1u) << fmt::format("{}", fmt::join(on_device.warnings, "\n"));
      EXPECT_GT(on_device.comparison_ms, 0);

      RunOptions read{.warmup = 0, .repetitions = 1, .read_outputs = true};
      const RunResult read_back = backend.run(*kernel, instance, read);
      ASSERT_EQ(read_back.outputs.size(), 1u);
      const ValidationResult host = validate_output(type.type, read_back.outputs[0], data.expected, comparison);

      const OutputComparison& device = on_device.comparisons[0];
      EXPECT_EQ(device.argument, 0u);
      EXPECT_EQ(device.elements, host.elements);
      EXPECT_EQ(device.mismatches, host.mismatches);
      EXPECT_EQ(device.max_abs_error, host.max_abs_error);
      ASSERT_GT(host.mismatches, 0u);  // the case has some
      EXPECT_EQ(device.first_mismatch, host.first_mismatch->index);
      const auto same = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); };
      EXPECT_TRUE(same(device.first_actual, host.first_mismatch->actual)) << device.first_actual;
      EXPECT_TRUE(same(device.first_expected, host.first_mismatch->expected)) << device.first_expected;
    }
  }
}

TEST(OutputComparison, SummariesAddUpToTheFirstMismatchAndTheLargestError) {
  const auto bits = [](double value) {
    std::uint64_t word = 0;
    std::memcpy(&word, &value, sizeof value);
    return word;
  };
  const std::uint64_t none = std::numeric_limits<std::uint64_t>::max();
  const std::vector<std::uint64_t> partials = {0, none, bits(0.5), 3, 700, bits(2.0), 2, 40, bits(1.0)};
  const OutputComparison total = worker::reduce_comparison(partials);
  EXPECT_EQ(total.mismatches, 5u);
  EXPECT_EQ(total.first_mismatch, 40u);
  EXPECT_EQ(total.max_abs_error, 2.0);

  const OutputComparison clean = worker::reduce_comparison(std::vector<std::uint64_t>{0, none, bits(0.0)});
  EXPECT_EQ(clean.mismatches, 0u);
  EXPECT_EQ(clean.first_mismatch, 0u);
}

TEST(OutputComparison, GroupsCoverSmallOutputsAndAreBoundedForLargeOnes) {
  EXPECT_EQ(worker::comparison_groups(0), 1u);
  EXPECT_EQ(worker::comparison_groups(256), 1u);
  EXPECT_EQ(worker::comparison_groups(257), 2u);
  EXPECT_EQ(worker::comparison_groups(std::uint64_t{1} << 40), worker::kComparisonMaxGroups);
}

TEST(OutputComparison, MessagesReadAsTheHostsOwn) {
  const Comparison tolerance{.kind = Comparison::Kind::Tolerance, .abs = 0, .rel = 0};
  const ValidationResult result = comparison_result(4, 1, 0.25, Mismatch{2, 1.5, 1.25}, tolerance);
  const std::vector<float> actual = {0, 0, 1.5f, 0}, expected = {0, 0, 1.25f, 0};
  const ValidationResult host = validate_output(ElementType::F32, std::as_bytes(std::span(actual)),
                                                std::as_bytes(std::span(expected)), tolerance);
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.message, host.message);
  EXPECT_TRUE(comparison_result(4, 0, 0.0, Mismatch{}, tolerance).ok);
}

class OpenclOutputComparison : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!opencl_backend_built()) GTEST_SKIP() << "the OpenCL backend was not built";
    try {
      backend_ = make_opencl_backend({});
    } catch (const BackendError& e) {
      GTEST_SKIP() << "no OpenCL device: " << e.what();
    }
  }
  std::unique_ptr<Backend> backend_;
};

TEST_F(OpenclOutputComparison, ComparesEveryTypeAsTheHostDoes) {
  expect_device_compares_as_the_host(*backend_, Language::OpenCL);
}

TEST(OutputComparison, CudaComparesEveryTypeAsTheHostDoes) {
  if (!cuda_backend_built()) GTEST_SKIP() << "the CUDA backend was not built";
  std::unique_ptr<Backend> backend;
  try {
    backend = make_cuda_backend({});
  } catch (const BackendError& e) {
    GTEST_SKIP() << "needs a CUDA GPU: " << e.what();
  }
  expect_device_compares_as_the_host(*backend, Language::Cuda);
}

#if __has_include("backend/cuda/nvrtc_compiler.hpp")
TEST(OutputComparison, TheCudaKernelCompilesForEveryType) {
  if (!cuda_backend_built()) GTEST_SKIP() << "the CUDA backend was not built";
  for (const TypeCase& type : type_cases()) {
    Program program;
    program.language = Language::Cuda;
    program.source = worker::comparison_kernel_source(Language::Cuda, type.type);
    program.source_name = "steer_compare_outputs.cu";
    program.kernel_name = worker::kComparisonKernel;
    program.compiler_options = {"--fmad=false"};
    std::string log;
    EXPECT_NO_THROW(cuda::nvrtc_compile_cubin(program, KernelInstance{}, 9, 0, &log)) << to_string(type.type);
    EXPECT_EQ(log, "") << to_string(type.type);
  }
}
#endif

TEST_F(OpenclOutputComparison, ExpectedOutputsMustFitAnOutputOfTheLoadedProgram) {
  Backend* backend = backend_.get();
  EXPECT_THROW(backend->expect_outputs({}), BackendError);  // no program yet
  const Case data = make_case(ElementType::F32, 1);
  backend->load(copy_program(Language::OpenCL, ElementType::F32, data));
  try {
    backend->expect_outputs({ExpectedOutput{.argument = 0, .bytes = std::span(data.expected).first(8)}});
    FAIL() << "a short expected output was taken";
  } catch (const BackendError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'destination'"));
  }
  EXPECT_THROW(backend->expect_outputs({ExpectedOutput{.argument = 1, .bytes = data.expected}}), BackendError);
}

TEST_F(OpenclOutputComparison, WithNothingToCompareAgainstTheOutputsAreReadBack) {
  Backend* backend = backend_.get();
  const Case data = make_case(ElementType::F32, 1);
  backend->load(copy_program(Language::OpenCL, ElementType::F32, data));
  KernelInstance instance;
  instance.defines = {{"ELEMENT", "float"}};
  instance.block = {256, 1, 1};
  instance.grid = {(kElements + 255) / 256, 1, 1};
  const auto kernel = backend->compile(instance);
  const RunResult run =
      backend->run(*kernel, instance, RunOptions{.warmup = 0, .repetitions = 1, .read_outputs = false, .compare_outputs = true});
  ASSERT_EQ(run.status, Status::Ok) << run.message;
  EXPECT_TRUE(run.comparisons.empty());
  ASSERT_EQ(run.outputs.size(), 1u);
  EXPECT_TRUE(std::equal(run.outputs[0].begin(), run.outputs[0].end(), data.source.begin()));
}

}  // namespace
}  // namespace steer
