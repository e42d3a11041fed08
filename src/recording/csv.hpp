#pragma once
// CSV (RFC 4180), the one way Steer writes it: fields quoted when they hold a comma,
// quote or line break (inner quotes doubled), numbers in the shortest form that reads
// back exactly, NaN as an empty cell.
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <string>
#include <string_view>

#include "steer/error.hpp"

namespace steer::csv {

inline std::string field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + '"';
}

inline std::string number(double value) { return std::isnan(value) ? std::string() : fmt::format("{}", value); }

// A CSV file written row by row; close() reports a failed write (a full disk) naming it.
class File {
 public:
  File(const std::filesystem::path& file, std::string_view header) : file_(file), out_(file) {
    if (!out_) throw Error(fmt::format("cannot write '{}'", file.string()));
    out_ << header << '\n';
  }
  // Cells as they are: quote text with field(), format numbers with number().
  template <typename... Cells>
  void row(const Cells&... cells) {
    std::size_t i = 0;
    ((out_ << (i++ ? "," : "") << cells), ...);
    out_ << '\n';
  }
  void close() {
    if (!out_.flush()) throw Error(fmt::format("cannot write '{}' (disk full?)", file_.string()));
  }

 private:
  std::filesystem::path file_;
  std::ofstream out_;
};

}  // namespace steer::csv
