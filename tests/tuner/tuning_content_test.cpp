// What a tuning is keyed by: the spec's content as parsed, and the files the kernel reads.
#include "tuner/tuning_content.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "steer/spec.hpp"

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

}  // namespace
}  // namespace steer::tuner_detail
