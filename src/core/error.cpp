#include "steer/error.hpp"

#include <algorithm>

namespace steer {

ExpressionError::ExpressionError(std::string message, std::string expression, std::size_t position)
    : Error(std::move(message)), expression_(std::move(expression)), position_(position) {}

// message
//   TILE % VEC == 0 and FOO > 1
//                       ^
// Only the line holding the position is shown when the expression spans several lines.
std::string ExpressionError::detailed() const {
  std::string out = what();
  if (expression_.empty()) return out;
  if (position_ == std::string::npos) return out + "\n  " + expression_;
  std::size_t position = std::min(position_, expression_.size());
  std::size_t line_begin = position == 0 ? std::string::npos : expression_.rfind('\n', position - 1);
  line_begin = line_begin == std::string::npos ? 0 : line_begin + 1;
  std::size_t line_end = std::min(expression_.find('\n', line_begin), expression_.size());
  out += "\n  ";
  out.append(expression_, line_begin, line_end - line_begin);
  out += "\n  ";
  for (std::size_t k = line_begin; k < position; ++k) {
    char c = expression_[k];
    if ((static_cast<unsigned char>(c) & 0xC0) == 0x80) continue;  // UTF-8 continuation byte: same column
    out += c == '\t' ? '\t' : ' ';
  }
  out += '^';
  return out;
}

}  // namespace steer
