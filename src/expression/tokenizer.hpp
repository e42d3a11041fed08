#pragma once
// The first stage of the expression language: text to tokens.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <string_view>
#include <vector>

#include "expression/operations.hpp"

namespace steer::expr::detail {

// ---------------------------------------------------------------------------------------
// Tokens

struct Token {
  enum class Kind : std::uint8_t { End, Int, Float, String, Name, Op } kind = Kind::End;
  std::string_view text;  // as written
  std::uint32_t position = 0;
  Scalar value;           // Int, Float and String (interned) literals
};

inline bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
inline bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

inline constexpr std::string_view kKeywords[] = {"and", "or", "not", "if", "else", "for", "in", "True", "False", "true", "false"};

inline bool is_keyword(std::string_view name) { return std::find(std::begin(kKeywords), std::end(kKeywords), name) != std::end(kKeywords); }

class Tokenizer {
 public:
  explicit Tokenizer(std::string_view text) : text_(text) {}

  std::vector<Token> run() {
    std::vector<Token> tokens;
    while (true) {
      while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      if (pos_ == text_.size()) break;
      tokens.push_back(next());
    }
    tokens.push_back(Token{Token::Kind::End, {}, static_cast<std::uint32_t>(text_.size()), {}});
    return tokens;
  }

 private:
  [[noreturn]] void fail(std::string message, std::size_t position) const {
    throw ExpressionError(std::move(message), std::string(text_), position);
  }

  Token make(Token::Kind kind, std::size_t begin) const {
    return Token{kind, text_.substr(begin, pos_ - begin), static_cast<std::uint32_t>(begin), {}};
  }

  Token next() {
    std::size_t begin = pos_;
    char c = text_[pos_];
    if (is_digit(c) || (c == '.' && pos_ + 1 < text_.size() && is_digit(text_[pos_ + 1]))) return number();
    if (is_name_start(c)) {
      while (pos_ < text_.size() && is_name_char(text_[pos_])) ++pos_;
      return make(Token::Kind::Name, begin);
    }
    if (c == '\'' || c == '"') return string();
    static constexpr std::string_view kTwoChar[] = {"**", "//", "==", "!=", "<=", ">=", "&&", "||"};
    for (std::string_view op : kTwoChar) {
      if (text_.substr(pos_, 2) == op) {
        pos_ += 2;
        return make(Token::Kind::Op, begin);
      }
    }
    if (std::string_view("+-*/%<>!()[],").find(c) != std::string_view::npos) {
      ++pos_;
      return make(Token::Kind::Op, begin);
    }
    if (c == '=') fail("'=' is not a comparison; write '==' to test equality", begin);
    fail(fmt::format("unexpected character '{}'", c), begin);
  }

  Token number() {
    std::size_t begin = pos_;
    auto digits = [&] { while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_; };
    digits();
    bool is_float = false;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      is_float = true;
      ++pos_;
      digits();
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      std::size_t sign = pos_ + 1 < text_.size() && (text_[pos_ + 1] == '+' || text_[pos_ + 1] == '-') ? 1 : 0;
      if (pos_ + 1 + sign < text_.size() && is_digit(text_[pos_ + 1 + sign])) {
        is_float = true;
        pos_ += 1 + sign;
        digits();
      }
    }
    if (pos_ < text_.size() && (is_name_char(text_[pos_]) || text_[pos_] == '.')) {
      while (pos_ < text_.size() && (is_name_char(text_[pos_]) || text_[pos_] == '.')) ++pos_;
      fail(fmt::format("invalid number '{}'", text_.substr(begin, pos_ - begin)), begin);
    }
    Token token = make(is_float ? Token::Kind::Float : Token::Kind::Int, begin);
    const char* first = token.text.data();
    const char* last = first + token.text.size();
    if (is_float) {
      double value = 0;
      if (std::from_chars(first, last, value).ec != std::errc())
        fail(fmt::format("the number {} is out of the range of a double", token.text), begin);
      token.value = Scalar::of_float(value);
      return token;
    }
    if (token.text.size() > 1 && token.text[0] == '0' && token.text.find_first_not_of('0') != std::string_view::npos)
      fail(fmt::format("leading zeros are not allowed in the integer '{}'", token.text), begin);
    std::int64_t value = 0;
    if (std::from_chars(first, last, value).ec != std::errc())
      fail(fmt::format("the integer {} does not fit in 64 bits", token.text), begin);
    token.value = Scalar::of_int(value);
    return token;
  }

  Token string() {
    std::size_t begin = pos_;
    char quote = text_[pos_++];
    std::string value;
    while (true) {
      if (pos_ >= text_.size() || text_[pos_] == '\n') fail("unterminated string", begin);
      char c = text_[pos_++];
      if (c == quote) break;
      if (c == '\\' && pos_ < text_.size()) {
        char escaped = text_[pos_++];
        switch (escaped) {
          case 'n': value += '\n'; break;
          case 't': value += '\t'; break;
          case '\\': case '\'': case '"': value += escaped; break;
          default: value += '\\'; value += escaped;  // Python keeps unknown escapes as written
        }
        continue;
      }
      value += c;
    }
    Token token = make(Token::Kind::String, begin);
    token.value = Scalar::of_string_id(intern(value));
    return token;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace steer::expr::detail
