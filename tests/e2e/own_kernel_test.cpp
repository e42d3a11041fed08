// End-to-end: a user's own kernel, validated without recompiling Steer. Its spec gives the
// reference as a NumPy array written by numpy.save, or as a reference kernel; the steer
// binary tunes it on the OpenCL CPU device (PoCL). A CPU reference that is not compiled in
// is refused with a message that says how to give one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "e2e/tune_support.hpp"

namespace {

using namespace e2e;
using ::testing::HasSubstr;

// A 5-point stencil of the user's own, ITEMS outputs per work-item, in work-groups of BLOCK.
constexpr const char* kStencil = R"(
__kernel void stencil5(__global const float* in, __global float* out, const int n) {
  for (int i = 0; i < ITEMS; ++i) {
    const int j = get_global_id(0) * ITEMS + i;
    if (j >= n) return;
    float sum = 0;
    for (int k = -2; k <= 2; ++k) sum += (3 - abs(k)) * in[clamp(j + k, 0, n - 1)];
    out[j] = sum;
  }
}
)";

// The same computation, one output per work-item: the reference kernel.
constexpr const char* kNaiveStencil = R"(
__kernel void stencil5_naive(__global const float* in, __global float* out, const int n) {
  const int j = get_global_id(0);
  if (j >= n) return;
  float sum = 0;
  for (int k = -2; k <= 2; ++k) sum += (3 - abs(k)) * in[clamp(j + k, 0, n - 1)];
  out[j] = sum;
}
)";

// The input and the expected output, written by NumPy: integer-valued floats, so that the
// sums are exact whatever order the kernel adds in.
constexpr const char* kWriteWithNumpy = R"(
import sys, numpy
n = int(sys.argv[2])
values = numpy.random.default_rng(7).integers(0, 100, n).astype(numpy.float32)
values.tofile(sys.argv[1] + '/in.bin')
padded = numpy.pad(values, 2, mode='edge')
expected = sum((3 - abs(k)) * padded[2 + k : 2 + k + n] for k in range(-2, 3)).astype(numpy.float32)
numpy.save(sys.argv[1] + '/expected_small.npy', expected)
)";

std::string spec_json(const std::string& reference) {
  return R"json({
  "name": "stencil5",
  "parameters": [{"name": "BLOCK", "values": [16, 32, 64]}, {"name": "ITEMS", "values": [1, 2, 4]}],
  "kernel": {
    "name": "stencil5",
    "sources": {"opencl": "stencil5.cl"},
    "launch": {"grid": ["cdiv(N, BLOCK * ITEMS)"], "block": ["BLOCK"]},
    "arguments": [
      {"name": "in", "type": "float", "size": "N", "init": {"file": "in.bin"}},
      {"name": "out", "type": "float", "size": "N", "output": true},
      {"name": "n", "type": "int32", "value": "N"}
    ]
  },
  "sizes": {"small": {"N": 10000}},
  "reference": )json" + reference + "\n}\n";
}

// A python3 that imports numpy (scripts/setup installs python3-numpy): the one on PATH, else
// the system's.
std::string python_with_numpy() {
  for (const char* python : {"python3", "/usr/bin/python3"}) {
    const std::string command = std::string(python) + " -c 'import numpy' >/dev/null 2>&1";
    if (std::system(command.c_str()) == 0) return python;
  }
  return {};
}

class OwnKernel : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_opencl()) GTEST_SKIP() << "no OpenCL device";
    directory_ = fs::temp_directory_path() / ("steer_own_kernel_" + std::to_string(getpid()));
    fs::remove_all(directory_);
    fs::create_directories(directory_);
    std::ofstream(directory_ / "stencil5.cl") << kStencil;
    std::ofstream(directory_ / "stencil5_naive.cl") << kNaiveStencil;
    std::ofstream(directory_ / "write.py") << kWriteWithNumpy;
    const std::string python = python_with_numpy();
    ASSERT_FALSE(python.empty()) << "no python3 with numpy (scripts/setup installs python3-numpy)";
    const std::string command = python + " " + (directory_ / "write.py").string() + " " + directory_.string() + " 10000";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  void TearDown() override {
    if (!directory_.empty()) fs::remove_all(directory_);
  }
  fs::path write_spec(const std::string& reference) {
    const fs::path spec = directory_ / "spec.json";
    std::ofstream(spec) << spec_json(reference);
    return spec;
  }
  fs::path directory_;
};

TEST_F(OwnKernel, TunesAgainstANumpyArrayOfExpectedOutputs) {
  const fs::path spec = write_spec(R"({"outputs": {"out": "expected_{size}.npy"}, "compare": {"out": {"ulps": 0}}})");
  const Output out = run_steer("tune " + spec.string() + " --backend opencl --searcher exhaustive --final-check 0 --json");
  ASSERT_EQ(out.exit_code, 0) << out.output;
  const auto summary = nlohmann::json::parse(out.output);
  EXPECT_EQ(summary["tests"], 9);
  EXPECT_EQ(summary["valid"], 9) << "every configuration computes the stencil";
}

TEST_F(OwnKernel, AWrongKernelFailsValidationAgainstTheArray) {
  std::ofstream(directory_ / "stencil5.cl") << std::string(kStencil).replace(std::string(kStencil).find("(3 - abs(k))"), 12, "(2 - abs(k))");
  const fs::path spec = write_spec(R"({"outputs": {"out": "expected_{size}.npy"}})");
  const Output out = run_steer("tune " + spec.string() + " --backend opencl --budget 2 --final-check 0", true);
  EXPECT_EQ(out.exit_code, 3) << out.output;  // no valid configuration
  EXPECT_THAT(out.output, HasSubstr("no configuration was valid"));
}

TEST_F(OwnKernel, TunesAgainstAReferenceKernel) {
  const fs::path spec = write_spec(R"json({"kernel": {"name": "stencil5_naive", "sources": {"opencl": "stencil5_naive.cl"},
                                     "launch": {"grid": ["cdiv(N, 64)"], "block": [64]}}})json");
  const Output out = run_steer("tune " + spec.string() + " --backend opencl --budget 4 --final-check 0 --json");
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(nlohmann::json::parse(out.output)["valid"], 4);
}

TEST_F(OwnKernel, AStoreKeysTheTuningByTheReferenceKernelsSource) {
  const fs::path spec = write_spec(R"json({"kernel": {"name": "stencil5_naive", "sources": {"opencl": "stencil5_naive.cl"},
                                     "launch": {"grid": ["cdiv(N, 64)"], "block": [64]}}})json");
  const std::string tune = "tune " + spec.string() + " --backend opencl --searcher exhaustive --budget 2 --final-check 0 " +
                           "--json --db " + (directory_ / "results.db").string();
  const Output first = run_steer(tune);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const Output again = run_steer(tune);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(nlohmann::json::parse(again.output)["resumed"], 2) << "the same reference: the same tuning";

  std::ofstream(directory_ / "stencil5_naive.cl") << "// the same computation, another text\n" << kNaiveStencil;
  const Output changed = run_steer(tune);
  ASSERT_EQ(changed.exit_code, 0) << changed.output;
  const auto summary = nlohmann::json::parse(changed.output);
  EXPECT_EQ(summary["resumed"], 0);
  EXPECT_TRUE(summary["new_tuning"].get<bool>());
  EXPECT_THAT(summary["warnings"].dump(), HasSubstr("reference kernel source changed"));
}

TEST_F(OwnKernel, ACpuReferenceNotCompiledInSaysHowToGiveOne) {
  const fs::path spec = write_spec(R"({"cpu": "stencil5"})");
  const Output out = run_steer("tune " + spec.string() + " --backend opencl --budget 1", true);
  EXPECT_EQ(out.exit_code, 1) << out.output;
  EXPECT_THAT(out.output, HasSubstr("no CPU reference 'stencil5'"));
  EXPECT_THAT(out.output, HasSubstr("\"reference\": {\"outputs\": {\"out\": \"out.npy\"}}"));
}

}  // namespace
