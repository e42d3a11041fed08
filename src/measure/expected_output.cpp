// Expected outputs from files: raw elements, or NumPy's .npy format (version 1, 2 or 3: the
// magic "\x93NUMPY", a version, the header's length, a Python dict literal with 'descr',
// 'fortran_order' and 'shape', then the elements).
#include "measure/expected_output.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <regex>
#include <string>

#include "steer/error.hpp"

namespace steer {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

std::string read_all(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot read the expected outputs '{}'", file.string()));
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The value of `key` in the header's dict: a quoted string, True/False or a tuple.
std::optional<std::string> header_field(const std::string& header, const std::string& key) {
  const std::regex pattern("['\"]" + key + "['\"]\\s*:\\s*('[^']*'|\"[^\"]*\"|True|False|\\([^)]*\\))");
  std::smatch match;
  if (!std::regex_search(header, match, pattern)) return std::nullopt;
  std::string value = match[1];
  if (value.front() == '\'' || value.front() == '"') value = value.substr(1, value.size() - 2);
  return value;
}

std::vector<std::byte> read_npy(const std::filesystem::path& file, const std::string& bytes,
                                const HostArgument& argument) {
  const auto fail = [&](const std::string& why) -> std::vector<std::byte> {
    throw Error(fmt::format("expected outputs '{}' for argument '{}': {}", file.string(), argument.name, why));
  };
  if (bytes.size() < 10) return fail("a .npy file too short for its header");
  const auto major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_length = 0, header_start = 0;
  if (major == 1) {
    header_length = static_cast<unsigned char>(bytes[8]) | static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8;
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return fail("a .npy file too short for its header");
    for (int i = 3; i >= 0; --i) header_length = header_length << 8 | static_cast<unsigned char>(bytes[8 + i]);
    header_start = 12;
  } else {
    return fail(fmt::format(".npy format version {} is not known (1, 2 and 3 are)", major));
  }
  if (header_start + header_length > bytes.size()) return fail("the .npy header runs past the end of the file");
  const std::string header = bytes.substr(header_start, header_length);

  const std::optional<std::string> descr = header_field(header, "descr");
  const std::optional<std::string> fortran_order = header_field(header, "fortran_order");
  const std::optional<std::string> shape = header_field(header, "shape");
  if (!descr || !fortran_order || !shape) return fail(fmt::format("a .npy header without descr, fortran_order and shape: {}", header));

  const std::string expected_dtype(numpy_dtype(argument.type));
  // One-byte types carry no byte order ('|'); others must be little-endian ('<', or '=' on
  // this little-endian host).
  std::string dtype = *descr;
  if (!dtype.empty() && dtype.front() == '=') dtype.front() = '<';
  if (size_of(argument.type) == 1 && !dtype.empty() && dtype.front() == '<') dtype.front() = '|';
  if (dtype != expected_dtype) {
    return fail(fmt::format("the array holds dtype '{}', the argument is {} ('{}'); convert it with "
                            "array.astype('{}')", *descr, to_string(argument.type), expected_dtype, expected_dtype));
  }

  std::uint64_t elements = 1;
  int dimensions = 0;
  const std::regex number("\\d+");
  for (auto it = std::sregex_iterator(shape->begin(), shape->end(), number); it != std::sregex_iterator(); ++it) {
    elements *= std::stoull(it->str());
    ++dimensions;
  }
  if (*fortran_order == "True" && dimensions > 1) {
    return fail("the array is in Fortran order; save it in C order (numpy.ascontiguousarray)");
  }
  const std::uint64_t argument_elements = argument.data.size() / size_of(argument.type);
  if (elements != argument_elements) {
    return fail(fmt::format("the array of shape {} holds {} elements, the argument {}", *shape, elements,
                            argument_elements));
  }
  const std::size_t data_start = header_start + header_length;
  if (bytes.size() - data_start != argument.data.size()) {
    return fail(fmt::format("the file holds {} bytes of elements, its shape {} needs {}", bytes.size() - data_start,
                            *shape, argument.data.size()));
  }
  std::vector<std::byte> out(argument.data.size());
  std::memcpy(out.data(), bytes.data() + data_start, out.size());
  return out;
}

}  // namespace

std::string_view numpy_dtype(ElementType type) {
  switch (type) {
    case ElementType::F32: return "<f4";
    case ElementType::F64: return "<f8";
    case ElementType::I32: return "<i4";
    case ElementType::U32: return "<u4";
    case ElementType::I64: return "<i8";
    case ElementType::U64: return "<u8";
    case ElementType::I8: return "|i1";
    case ElementType::U8: return "|u1";
  }
  return "?";
}

std::filesystem::path expected_output_file(const std::filesystem::path& path, const std::string& size) {
  std::string text = path.string();
  for (std::size_t at = text.find("{size}"); at != std::string::npos; at = text.find("{size}", at + size.size())) {
    text.replace(at, 6, size);
  }
  return text;
}

std::vector<std::byte> read_expected_output(const std::filesystem::path& file, const HostArgument& argument) {
  const std::string bytes = read_all(file);
  if (bytes.compare(0, kMagic.size(), kMagic) == 0) return read_npy(file, bytes, argument);
  if (bytes.size() != argument.data.size()) {
    throw Error(fmt::format("expected outputs '{}' for argument '{}': the raw file holds {} bytes, the argument {} "
                            "({} elements of {})",
                            file.string(), argument.name, bytes.size(), argument.data.size(),
                            argument.data.size() / size_of(argument.type), to_string(argument.type)));
  }
  std::vector<std::byte> out(bytes.size());
  std::memcpy(out.data(), bytes.data(), out.size());
  return out;
}

}  // namespace steer
