#pragma once
// Expected outputs read from a file: raw little-endian elements, or a NumPy .npy array
// (numpy.save) whose element type and count are checked against the output argument.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "steer/backend.hpp"

namespace steer {

// The expected elements of `argument` (its type and byte count) from `file`: a .npy array
// when the file starts with NumPy's magic string, else raw bytes. Throws Error naming the
// file and what does not match: another dtype, another number of elements, Fortran order,
// big-endian elements, a damaged header.
std::vector<std::byte> read_expected_output(const std::filesystem::path& file, const HostArgument& argument);

// The file of expected outputs `path` names at problem size `size`: "{size}" in it stands
// for the size's name.
std::filesystem::path expected_output_file(const std::filesystem::path& path, const std::string& size);

// The NumPy dtype ("<f4", "|u1", ...) of an element type.
std::string_view numpy_dtype(ElementType type);

}  // namespace steer
