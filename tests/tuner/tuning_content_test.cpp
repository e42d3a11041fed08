// What a tuning is keyed by: the spec's content as parsed, and the files the kernel reads.
#include "tuner/tuning_content.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <span>
#include <tuple>
#include <vector>

#include "steer/space.hpp"
#include "steer/spec.hpp"
#include "tuner/kernel_problem.hpp"

namespace steer::tuner_detail {
namespace {

namespace fs = std::filesystem;

class TuningContentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("steer_tuning_content_test_" + std::to_string(getpid()));
    fs::create_directories(dir_ / "detail");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }

  // A spec whose kernel is kernel.cl, with `reference` (JSON), beside the files written.
  Spec spec_with_reference(const std::string& reference) const {
    return parse_spec(R"json({"name": "k", "parameters": [{"name": "A", "values": [1, 2]}],
      "kernel": {"name": "k", "sources": {"opencl": "kernel.cl"}, "launch": {"grid": ["N"], "block": [1]},
        "arguments": [{"name": "in", "type": "float", "size": "N", "init": "iota"},
                      {"name": "out", "type": "float", "size": "N", "output": true}]},
      "sizes": {"small": {"N": 4}}, "reference": )json" + reference + "}",
                      dir_ / "spec.json");
  }

  fs::path dir_;
};

TEST_F(TuningContentTest, FindsNestedIncludesAsTheCompilerWouldAndNamesTheMissingOnes) {
  write("kernel.cl", "#include \"common.h\"\n  #  include <detail/math.h>\n#include \"missing.h\"\n// #include \"x.h\"\n");
  write("common.h", "#pragma once\n#include \"common.h\"\n#define A 1\n");  // including itself: read once
  write("detail/math.h", "#include \"inner.h\"\n");                        // beside the including file
  write("detail/inner.h", "#define B 2\n");
  const std::string source = "#include \"common.h\"\n  #  include <detail/math.h>\n#include \"missing.h\"\n";
  auto files = included_files(source, dir_ / "kernel.cl", {dir_.string()});
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files.at("common.h"), "#pragma once\n#include \"common.h\"\n#define A 1\n");
  EXPECT_EQ(files.at("detail/math.h"), "#include \"inner.h\"\n");
  EXPECT_EQ(files.at("detail/inner.h"), "#define B 2\n");
  EXPECT_EQ(files.at("missing.h"), std::nullopt);
}

TEST_F(TuningContentTest, TheSpecsPartsIgnoreDescriptionsLayoutAndSpacing) {
  const std::string first = R"json({"name": "k", "description": "one",
    "parameters": [{"name": "A", "values": [1, 2, 4]}, {"name": "B", "values": "range(1, 3)"}],
    "constraints": ["A*B <= 4"], "sizes": {"small": {"N": 64}, "large": {"N": 1024}}})json";
  const std::string same = R"json({"name":"k","description":"another text",
    "parameters":[{"name":"A","values":[1,2,4]},{"name":"B","values":[1,2]}],
    "constraints":["A * B<=4"],"sizes":{"huge":{"N":4096},"small":{"N":64}}})json";
  const Spec a = parse_spec(first), b = parse_spec(same);
  EXPECT_NE(a.hash, b.hash) << "the file's text differs";
  EXPECT_EQ(spec_content(a, a.size("small")), spec_content(b, b.size("small")));
  EXPECT_NE(spec_content(a, a.size("small")), spec_content(a, a.size("large")));
  const Spec other_values = parse_spec(R"json({"name": "k",
    "parameters": [{"name": "A", "values": [1, 2, 8]}, {"name": "B", "values": [1, 2]}],
    "constraints": ["A*B <= 4"], "sizes": {"small": {"N": 64}}})json");
  const TuningContent changed = spec_content(other_values, other_values.size("small"));
  const TuningContent original = spec_content(a, a.size("small"));
  EXPECT_NE(changed.at("parameters"), original.at("parameters"));
  EXPECT_EQ(changed.at("constraints"), original.at("constraints"));
  const Spec floats = parse_spec(R"json({"name": "k",
    "parameters": [{"name": "A", "values": [1.0, 2.0, 4.0]}, {"name": "B", "values": [1, 2]}],
    "constraints": ["A*B <= 4"], "sizes": {"small": {"N": 64}}})json");
  EXPECT_NE(spec_content(floats, floats.size("small")).at("parameters"), original.at("parameters"))
      << "4.0 is not 4: the kernel sees another definition";
}

// The hang timeout changes no measurement of a launch that finishes: raising it continues the
// same tuning.
TEST_F(TuningContentTest, TheHangTimeoutIsNotPartOfTheKey) {
  const auto with_timeout = [&](const std::string& timeout) {
    return parse_spec(R"json({"name": "k", "parameters": [{"name": "A", "values": [1, 2]}],
      "kernel": {"name": "k", "sources": {"opencl": "kernel.cl"}, "launch": {"grid": ["N"], "block": [1]},
        "arguments": [{"name": "out", "type": "float", "size": "N", "output": true}])json" + timeout + R"json(},
      "sizes": {"small": {"N": 4}}})json",
                      dir_ / "spec.json");
  };
  const Spec plain = with_timeout(""), longer = with_timeout(R"json(, "timeout_ms": 60000)json");
  ASSERT_EQ(longer.kernel->timeout_ms, 60000);
  EXPECT_EQ(spec_content(plain, plain.size("small")), spec_content(longer, longer.size("small")));
}

// Every part of a run of `spec` at size "small" on an OpenCL device (what DeviceExecutor keys by).
TuningContent content_of(const Spec& spec, const DeviceCallbacks& callbacks = {}) {
  const Space space = Space::build(spec.space);
  const KernelProblem problem(spec, space, spec.size(spec.sizes.front().name), Language::OpenCL, callbacks.launch);
  DeviceInfo device;
  device.name = "Some Device";
  device.backend = "opencl";
  return tuning_content(spec, problem.size(), problem.program(), device, callbacks);
}

TEST_F(TuningContentTest, FilesOfExpectedOutputsCountByTheirBytesAtTheTunedSize) {
  write("kernel.cl", "__kernel void k(__global const float* in, __global float* out) {}\n");
  write("out_small.npy", "first");
  const Spec spec = spec_with_reference(R"({"outputs": {"out": "out_{size}.npy"}})");
  const TuningContent first = content_of(spec);
  ASSERT_TRUE(first.contains("reference file out"));
  write("out_small.npy", "other");
  const TuningContent changed = content_of(spec);
  EXPECT_NE(changed.at("reference file out"), first.at("reference file out"));
  EXPECT_EQ(changed.at("reference"), first.at("reference"));
  EXPECT_EQ(changed.at("kernel source"), first.at("kernel source"));
  fs::remove(dir_ / "out_small.npy");
  EXPECT_EQ(content_of(spec).at("reference file out"), "absent");
  // How the output is compared is part of the reference.
  const Spec ulps = spec_with_reference(R"({"outputs": {"out": "out_{size}.npy"}, "compare": {"out": {"ulps": 4}}})");
  EXPECT_NE(content_of(ulps).at("reference"), first.at("reference"));
}

TEST_F(TuningContentTest, AReferenceKernelCountsByItsSourceItsIncludesAndItsLaunch) {
  write("kernel.cl", "__kernel void k(__global const float* in, __global float* out) {}\n");
  write("naive.cl", "#include \"naive.h\"\n__kernel void naive(__global const float* in, __global float* out) {}\n");
  write("naive.h", "#define ONE 1\n");
  const std::string reference =
      R"({"kernel": {"name": "naive", "sources": {"opencl": "naive.cl"}, "launch": {"grid": ["N"], "block": [1]}}})";
  const Spec spec = spec_with_reference(reference);
  const TuningContent first = content_of(spec);
  ASSERT_TRUE(first.contains("reference kernel source"));
  ASSERT_TRUE(first.contains("reference include naive.h"));
  EXPECT_FALSE(first.contains("include naive.h")) << "the tuned kernel does not include it";
  write("naive.h", "#define ONE 1.0f\n");
  const TuningContent changed = content_of(spec);
  EXPECT_NE(changed.at("reference include naive.h"), first.at("reference include naive.h"));
  EXPECT_EQ(changed.at("reference kernel source"), first.at("reference kernel source"));
  EXPECT_EQ(changed.at("kernel source"), first.at("kernel source"));
  const Spec wider = spec_with_reference(
      R"({"kernel": {"name": "naive", "sources": {"opencl": "naive.cl"}, "launch": {"grid": ["N / 2"], "block": [2]}}})");
  EXPECT_NE(content_of(wider).at("reference"), first.at("reference"));
}

// A spec as the façade (steer/embed.hpp) builds it: the source as text, arguments bound to
// the application's memory, functions in code.
TEST_F(TuningContentTest, WhatAnApplicationGivesInCode) {
  std::vector<float> in(4, 1.0f), out(4);
  std::int32_t n = 4;
  const auto make = [&](const std::string& source) {
    Spec spec;
    spec.name = "k";
    spec.space.add_parameter("A", {1, 2});
    KernelSpec kernel;
    kernel.name = "k";
    kernel.source_texts[Language::OpenCL] = source;
    kernel.launch.grid = {"4", "1", "1"};
    for (const auto& [name, memory, output] : {std::tuple{"in", std::span<const float>(in), false},
                                               std::tuple{"out", std::span<const float>(out), true}}) {
      Argument argument{.name = name, .size = "4", .output = output};
      argument.init.kind = Initialiser::Kind::Memory;
      argument.init.memory = std::as_bytes(memory);
      kernel.arguments.push_back(argument);
    }
    Argument scalar{.name = "n", .is_buffer = false, .type = ElementType::I32};
    scalar.init.kind = Initialiser::Kind::Memory;
    scalar.init.memory = std::as_bytes(std::span<const std::int32_t>(&n, 1));
    kernel.arguments.push_back(scalar);
    spec.kernel = kernel;
    spec.sizes.push_back(ProblemSize{.name = "N=4", .variables = {{"N", Value(4)}}});
    spec.default_size = "N=4";
    return spec;
  };
  const Spec spec = make("__kernel void k(__global const float* in, __global float* out, int n) {}");
  const TuningContent first = content_of(spec);
  EXPECT_NE(content_of(make("__kernel void k(__global const float* in, __global float* out, int n) { }"))
                .at("kernel source"),
            first.at("kernel source"));

  in.assign(4, 2.0f);
  EXPECT_EQ(content_of(spec), first) << "the application's data of the moment does not key the tuning";
  n = 3;
  EXPECT_NE(content_of(spec).at("input data"), first.at("input data")) << "a scalar counts by its value";
  n = 4;

  DeviceCallbacks callbacks;
  callbacks.launch = [](const Configuration&, KernelInstance&) {};
  EXPECT_NE(content_of(spec, callbacks).at("kernel"), first.at("kernel"));
  callbacks.reference = [](const ReferenceInput&, ReferenceOutputs&) {};
  const TuningContent by_function = content_of(spec, callbacks);
  EXPECT_NE(by_function.at("reference"), first.at("reference"));
  callbacks.comparators["out"] = [](ElementType, std::span<const std::byte>, std::span<const std::byte>,
                                    std::string&) { return true; };
  EXPECT_NE(content_of(spec, callbacks).at("reference"), by_function.at("reference"));
}

}  // namespace
}  // namespace steer::tuner_detail
