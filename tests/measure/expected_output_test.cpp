// Expected outputs from files: NumPy .npy arrays checked against the argument, raw bytes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "measure/expected_output.hpp"
#include "steer/error.hpp"

namespace steer {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A .npy file as numpy.save writes it (version 1.0: the header padded to 64 bytes, ending in
// a line break).
std::string npy(const std::string& descr, const std::string& shape, const std::string& data,
                const std::string& fortran_order = "False") {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': " + fortran_order + ", 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string file = "\x93NUMPY";
  file += '\x01';
  file += '\x00';
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>(header.size() >> 8);
  return file + header + data;
}

template <typename T>
std::string raw(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

HostArgument output_of(ElementType type, std::size_t bytes) {
  return HostArgument{.name = "out", .type = type, .data = std::vector<std::byte>(bytes), .output = true};
}

class ExpectedOutput : public ::testing::Test {
 protected:
  fs::path write(const std::string& name, const std::string& content) {
    const fs::path file = fs::temp_directory_path() / ("steer_expected_" + std::to_string(getpid()) + "_" + name);
    std::ofstream(file, std::ios::binary) << content;
    files_.push_back(file);
    return file;
  }
  std::string error_of(const fs::path& file, const HostArgument& argument) {
    try {
      read_expected_output(file, argument);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  ~ExpectedOutput() override {
    for (const fs::path& file : files_) fs::remove(file);
  }
  std::vector<fs::path> files_;
};

TEST_F(ExpectedOutput, ReadsTheElementsOfANpyArrayOfTheArgumentsTypeAndCount) {
  const std::vector<float> values{1.5f, -2, 3, 4, 5, 6};
  const fs::path file = write("a.npy", npy("<f4", "(2, 3)", raw(values)));
  const std::vector<std::byte> read = read_expected_output(file, output_of(ElementType::F32, 24));
  ASSERT_EQ(read.size(), 24u);
  EXPECT_EQ(std::memcmp(read.data(), values.data(), 24), 0);
}

TEST_F(ExpectedOutput, OneByteTypesAndOneDimensionalFortranOrderAreAccepted) {
  const fs::path bytes = write("b.npy", npy("|u1", "(3,)", "abc", "True"));
  EXPECT_EQ(read_expected_output(bytes, output_of(ElementType::U8, 3)).size(), 3u);
}

TEST_F(ExpectedOutput, NamesWhatDoesNotMatchTheArgument) {
  const fs::path doubles = write("c.npy", npy("<f8", "(4,)", raw(std::vector<double>(4))));
  EXPECT_THAT(error_of(doubles, output_of(ElementType::F32, 16)),
              HasSubstr("the array holds dtype '<f8', the argument is float ('<f4'); convert it with array.astype('<f4')"));
  const fs::path short_array = write("d.npy", npy("<f4", "(3,)", raw(std::vector<float>(3))));
  EXPECT_THAT(error_of(short_array, output_of(ElementType::F32, 16)),
              HasSubstr("the array of shape (3,) holds 3 elements, the argument 4"));
  const fs::path fortran = write("e.npy", npy("<f4", "(2, 2)", raw(std::vector<float>(4)), "True"));
  EXPECT_THAT(error_of(fortran, output_of(ElementType::F32, 16)), HasSubstr("Fortran order"));
  const fs::path big_endian = write("f.npy", npy(">f4", "(4,)", raw(std::vector<float>(4))));
  EXPECT_THAT(error_of(big_endian, output_of(ElementType::F32, 16)), HasSubstr("dtype '>f4'"));
  const fs::path truncated = write("g.npy", npy("<f4", "(4,)", raw(std::vector<float>(3))));
  EXPECT_THAT(error_of(truncated, output_of(ElementType::F32, 16)),
              HasSubstr("the file holds 12 bytes of elements, its shape (4,) needs 16"));
}

TEST_F(ExpectedOutput, ARawFileHoldsExactlyTheArgumentsBytes) {
  const fs::path file = write("h.bin", raw(std::vector<std::int32_t>{7, 8}));
  EXPECT_EQ(read_expected_output(file, output_of(ElementType::I32, 8)).size(), 8u);
  EXPECT_THAT(error_of(file, output_of(ElementType::I32, 12)),
              HasSubstr("the raw file holds 8 bytes, the argument 12 (3 elements of int32)"));
  EXPECT_THAT(error_of(fs::temp_directory_path() / "steer_no_such_file.npy", output_of(ElementType::I32, 4)),
              HasSubstr("cannot read the expected outputs"));
}

}  // namespace
}  // namespace steer
