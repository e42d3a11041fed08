#include "space/expression.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <compare>
#include <deque>
#include <fmt/core.h>
#include <limits>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <unordered_map>

namespace steer::expr {

// ---------------------------------------------------------------------------------------
// Interned strings

namespace {

struct InternTable {
  std::shared_mutex mutex;
  std::deque<std::string> strings;                          // a deque never moves its elements
  std::unordered_map<std::string_view, std::int64_t> ids;   // views into `strings`

  // Id 0 is the empty string, so that truthiness of a string needs no lookup.
  InternTable() {
    strings.emplace_back();
    ids.emplace(strings.back(), 0);
  }
};

InternTable& intern_table() {
  static InternTable table;
  return table;
}

}  // namespace

std::int64_t intern(std::string_view text) {
  InternTable& table = intern_table();
  {
    std::shared_lock lock(table.mutex);
    if (auto it = table.ids.find(text); it != table.ids.end()) return it->second;
  }
  std::unique_lock lock(table.mutex);
  if (auto it = table.ids.find(text); it != table.ids.end()) return it->second;  // raced with another writer
  auto id = static_cast<std::int64_t>(table.strings.size());
  table.strings.emplace_back(text);
  table.ids.emplace(table.strings.back(), id);
  return id;
}

const std::string& interned(std::int64_t id) {
  InternTable& table = intern_table();
  std::shared_lock lock(table.mutex);
  if (id < 0 || static_cast<std::size_t>(id) >= table.strings.size())
    throw std::out_of_range(fmt::format("no interned string has id {}", id));
  return table.strings[static_cast<std::size_t>(id)];  // stable after the lock is released
}

// ---------------------------------------------------------------------------------------
// Scalars

bool Scalar::truthy() const noexcept {
  return kind == Kind::Float ? f != 0.0 : i != 0;  // NaN is truthy, as in Python
}

double Scalar::as_double() const noexcept {
  switch (kind) {
    case Kind::Float: return f;
    case Kind::String: return std::numeric_limits<double>::quiet_NaN();
    default: return static_cast<double>(i);
  }
}

Scalar to_scalar(const Value& value) {
  switch (value.type()) {
    case ValueType::Int: return Scalar::of_int(value.as_int());
    case ValueType::Float: return Scalar::of_float(value.as_double());
    case ValueType::Bool: return Scalar::of_bool(value.as_bool());
    case ValueType::String: return Scalar::of_string_id(intern(value.as_string()));
  }
  return {};
}

Value to_value(const Scalar& scalar) {
  switch (scalar.kind) {
    case Scalar::Kind::Int: return Value(scalar.i);
    case Scalar::Kind::Float: return Value(scalar.f);
    case Scalar::Kind::Bool: return Value(scalar.i != 0);
    case Scalar::Kind::String: return Value(interned(scalar.i));
  }
  return {};
}

namespace {

using Kind = Scalar::Kind;

// The instruction set of the postfix program.
enum Code : std::uint8_t {
  kConst,             // push constants_[operand]
  kSlot,              // push slots[operand]
  kJump,              // go to operand
  kJumpIfFalseOrPop,  // `and`: keep a falsy top and go to operand, else pop it
  kJumpIfTrueOrPop,   // `or`: keep a truthy top and go to operand, else pop it
  kPopJumpIfFalse,    // ternary: pop the condition, go to operand if falsy
  // Operations pop `arity` values and push one.
  kNeg, kPos, kNot,
  kAdd, kSub, kMul, kDiv, kFloorDiv, kMod, kPow,
  kEq, kNe, kLt, kLe, kGt, kGe,
  kMin, kMax, kAbs, kInt, kFloat, kCeil, kFloor, kSqrt, kLog2, kCdiv,
};

// How an operation is written, for error messages.
const char* spelling(Code code) {
  switch (code) {
    case kNeg: case kSub: return "-";
    case kPos: case kAdd: return "+";
    case kNot: return "not";
    case kMul: return "*";
    case kDiv: return "/";
    case kFloorDiv: return "//";
    case kMod: return "%";
    case kPow: return "**";
    case kEq: return "==";
    case kNe: return "!=";
    case kLt: return "<";
    case kLe: return "<=";
    case kGt: return ">";
    case kGe: return ">=";
    case kMin: return "min";
    case kMax: return "max";
    case kAbs: return "abs";
    case kInt: return "int";
    case kFloat: return "float";
    case kCeil: return "ceil";
    case kFloor: return "floor";
    case kSqrt: return "sqrt";
    case kLog2: return "log2";
    case kCdiv: return "cdiv";
    default: return "?";
  }
}

struct Function {
  std::string_view name;
  Code code;
  std::size_t min_args, max_args;
};

// pow(a, b) is a ** b; min and max are n-ary and compile to a chain of pairwise ops.
constexpr Function kFunctions[] = {
    {"min", kMin, 1, SIZE_MAX}, {"max", kMax, 1, SIZE_MAX}, {"abs", kAbs, 1, 1},
    {"int", kInt, 1, 1},        {"float", kFloat, 1, 1},    {"ceil", kCeil, 1, 1},
    {"floor", kFloor, 1, 1},    {"sqrt", kSqrt, 1, 1},      {"log2", kLog2, 1, 1},
    {"cdiv", kCdiv, 2, 2},      {"pow", kPow, 2, 2},
};

// Limits that keep evaluate() on a fixed stack, the parser's recursion shallow, and the
// program short (a chained comparison compiles its middle operand twice, so nested chains
// could otherwise grow it exponentially).
constexpr std::size_t kMaxStack = 64;
constexpr int kMaxNesting = 100;
constexpr std::size_t kMaxProgram = 4096;
// A value list longer than this is a mistake (range(10**9)), not a tuning parameter.
constexpr std::uint64_t kMaxListLength = 1'000'000;

const char* type_name(const Scalar& s) {
  switch (s.kind) {
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::Bool: return "bool";
    case Kind::String: return "string";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------
// Operations, with Python 3 semantics. Bools act as the ints 0 and 1. Int arithmetic wraps
// around on overflow (two's complement) instead of growing as Python ints do.

// Where an operation is, to report its failure.
struct Site {
  const std::string& text;
  std::uint32_t position;
  [[noreturn]] void fail(std::string message) const { throw ExpressionError(std::move(message), text, position); }
};

bool is_string(const Scalar& s) { return s.kind == Kind::String; }
bool is_float(const Scalar& s) { return s.kind == Kind::Float; }

std::int64_t wrap(std::uint64_t x) { return static_cast<std::int64_t>(x); }
std::uint64_t bits(std::int64_t x) { return static_cast<std::uint64_t>(x); }

bool is_function(Code code) { return code >= kMin; }

void require_numbers(Code code, const Scalar& a, const Scalar& b, const Site& site) {
  if (!is_string(a) && !is_string(b)) return;
  std::string what = is_function(code) ? fmt::format("{}()", spelling(code)) : fmt::format("operator '{}'", spelling(code));
  const char* hint = code >= kLt && code <= kGe ? " (strings support only == and !=)" : "";
  site.fail(fmt::format("{} needs numbers, got {} and {}{}", what, type_name(a), type_name(b), hint));
}

void require_number(Code code, const Scalar& a, const Site& site) {
  if (!is_string(a)) return;
  if (is_function(code)) site.fail(fmt::format("{}() needs a number, got string", spelling(code)));
  site.fail(fmt::format("operator '{}' needs a number, got string", spelling(code)));
}

// int(), ceil(), floor() of a float that has already been rounded to an integral value.
Scalar integral_to_int(double rounded, Code code, const Site& site) {
  constexpr double kLimit = 9223372036854775808.0;  // 2^63
  if (std::isnan(rounded) || rounded < -kLimit || rounded >= kLimit)
    site.fail(fmt::format("{}() of {} does not fit in a 64-bit integer", spelling(code), rounded));
  return Scalar::of_int(static_cast<std::int64_t>(rounded));
}

// Exact comparison of numbers of any kinds: long double holds every int64 and every double
// where it has a 64-bit mantissa (x86-64, AArch64 Linux). Unordered when a NaN is involved.
static_assert(std::numeric_limits<long double>::digits >= 64,
              "exact int/float comparison needs a long double with a 64-bit mantissa");
std::partial_ordering compare_numbers(const Scalar& a, const Scalar& b) {
  if (!is_float(a) && !is_float(b)) return a.i <=> b.i;
  auto widen = [](const Scalar& s) { return is_float(s) ? static_cast<long double>(s.f) : static_cast<long double>(s.i); };
  return widen(a) <=> widen(b);
}

bool equal(const Scalar& a, const Scalar& b) {
  if (is_string(a) || is_string(b)) return is_string(a) && is_string(b) && a.i == b.i;
  return compare_numbers(a, b) == 0;
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  if (b == -1) return wrap(0 - bits(a));  // INT64_MIN // -1 overflows
  std::int64_t q = a / b;
  if (a % b != 0 && (a < 0) != (b < 0)) --q;
  return q;
}

std::int64_t floor_mod(std::int64_t a, std::int64_t b) {
  if (b == -1) return 0;
  std::int64_t r = a % b;
  if (r != 0 && (r < 0) != (b < 0)) r += b;
  return r;
}

// Python's float divmod: the remainder takes the divisor's sign, the quotient is floored.
std::pair<double, double> float_divmod(double a, double b) {
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0.0) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, b);
  }
  double floordiv;
  if (div != 0.0) {
    floordiv = std::floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
  } else {
    floordiv = std::copysign(0.0, a / b);
  }
  return {floordiv, mod};
}

Scalar power(const Scalar& a, const Scalar& b, const Site& site) {
  if (!is_float(a) && !is_float(b)) {
    std::int64_t exponent = b.i;
    if (exponent < 0) {
      if (a.i == 0) site.fail("zero cannot be raised to a negative power");
      return Scalar::of_float(std::pow(static_cast<double>(a.i), static_cast<double>(exponent)));
    }
    std::uint64_t result = 1, base = bits(a.i);
    for (; exponent != 0; exponent >>= 1, base *= base)
      if (exponent & 1) result *= base;
    return Scalar::of_int(wrap(result));
  }
  double x = a.as_double(), y = b.as_double();
  if (x == 0.0 && y < 0.0) site.fail("zero cannot be raised to a negative power");
  if (x < 0.0 && std::isfinite(y) && std::trunc(y) != y)
    site.fail("a negative number cannot be raised to a fractional power");
  return Scalar::of_float(std::pow(x, y));
}

Scalar unary(Code code, const Scalar& a, const Site& site) {
  if (code == kNot) return Scalar::of_bool(!a.truthy());
  require_number(code, a, site);
  switch (code) {
    case kNeg: return is_float(a) ? Scalar::of_float(-a.f) : Scalar::of_int(wrap(0 - bits(a.i)));
    case kPos:
    case kAbs:
      if (is_float(a)) return Scalar::of_float(code == kAbs ? std::fabs(a.f) : a.f);
      return Scalar::of_int(code == kAbs && a.i < 0 ? wrap(0 - bits(a.i)) : a.i);
    case kInt: return is_float(a) ? integral_to_int(std::trunc(a.f), code, site) : Scalar::of_int(a.i);
    case kCeil: return is_float(a) ? integral_to_int(std::ceil(a.f), code, site) : Scalar::of_int(a.i);
    case kFloor: return is_float(a) ? integral_to_int(std::floor(a.f), code, site) : Scalar::of_int(a.i);
    case kFloat: return Scalar::of_float(a.as_double());
    case kSqrt:
      if (a.as_double() < 0.0) site.fail(fmt::format("sqrt() of a negative number ({})", a.as_double()));
      return Scalar::of_float(std::sqrt(a.as_double()));
    case kLog2:
      if (a.as_double() <= 0.0) site.fail(fmt::format("log2() of a number that is not positive ({})", a.as_double()));
      return Scalar::of_float(std::log2(a.as_double()));
    default: site.fail("internal error: unknown unary operation");
  }
}

Scalar binary(Code code, const Scalar& a, const Scalar& b, const Site& site) {
  if (code == kEq) return Scalar::of_bool(equal(a, b));
  if (code == kNe) return Scalar::of_bool(!equal(a, b));
  require_numbers(code, a, b, site);
  if (code == kMin || code == kMax) {
    // Python returns the first of equal extremes, and the operand itself (min(2, 3.0) is 2).
    return compare_numbers(b, a) == (code == kMin ? std::partial_ordering::less : std::partial_ordering::greater) ? b : a;
  }
  bool floats = is_float(a) || is_float(b);
  switch (code) {
    case kAdd: return floats ? Scalar::of_float(a.as_double() + b.as_double()) : Scalar::of_int(wrap(bits(a.i) + bits(b.i)));
    case kSub: return floats ? Scalar::of_float(a.as_double() - b.as_double()) : Scalar::of_int(wrap(bits(a.i) - bits(b.i)));
    case kMul: return floats ? Scalar::of_float(a.as_double() * b.as_double()) : Scalar::of_int(wrap(bits(a.i) * bits(b.i)));
    case kDiv:
      if (b.as_double() == 0.0) site.fail("division by zero");
      return Scalar::of_float(a.as_double() / b.as_double());
    case kFloorDiv:
    case kMod:
      if (b.as_double() == 0.0) site.fail("division by zero");
      if (floats) {
        auto [quotient, remainder] = float_divmod(a.as_double(), b.as_double());
        return Scalar::of_float(code == kMod ? remainder : quotient);
      }
      return Scalar::of_int(code == kMod ? floor_mod(a.i, b.i) : floor_div(a.i, b.i));
    case kCdiv: {
      if (floats) site.fail(fmt::format("cdiv() needs integers, got {} and {}", type_name(a), type_name(b)));
      if (b.i == 0) site.fail("division by zero");
      return Scalar::of_int(wrap(0 - bits(floor_div(wrap(0 - bits(a.i)), b.i))));  // -(-a // b)
    }
    case kPow: return power(a, b, site);
    case kLt: return Scalar::of_bool(compare_numbers(a, b) < 0);
    case kLe: return Scalar::of_bool(compare_numbers(a, b) <= 0);
    case kGt: return Scalar::of_bool(compare_numbers(a, b) > 0);
    case kGe: return Scalar::of_bool(compare_numbers(a, b) >= 0);
    default: site.fail("internal error: unknown binary operation");
  }
}

// ---------------------------------------------------------------------------------------
// Tokens

struct Token {
  enum class Kind : std::uint8_t { End, Int, Float, String, Name, Op } kind = Kind::End;
  std::string_view text;  // as written
  std::uint32_t position = 0;
  Scalar value;           // Int, Float and String (interned) literals
};

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

constexpr std::string_view kKeywords[] = {"and", "or", "not", "if", "else", "for", "in", "True", "False", "true", "false"};

bool is_keyword(std::string_view name) { return std::find(std::begin(kKeywords), std::end(kKeywords), name) != std::end(kKeywords); }

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

// ---------------------------------------------------------------------------------------
// Syntax tree

struct Node {
  enum class Kind : std::uint8_t {
    Constant,     // value
    Name,         // name, resolved to a slot when compiled
    Apply,        // code applied to children (1 or 2)
    And,          // children[0] and children[1]
    Or,           // children[0] or children[1]
    Conditional,  // children[0] if children[1] else children[2]
  } kind;
  Code code = kConst;
  std::uint32_t position = 0;  // of the operator, name or literal
  bool constant = false;       // no name below: the value is known after parsing
  Scalar value;
  std::string_view name;
  std::vector<std::uint32_t> children;
};

using Nodes = std::vector<Node>;

// Recursive descent with Python's precedence, lowest first:
//   a if c else b;  or ||;  and &&;  not;  comparisons (chained);  + -;  * / // %;
//   unary - + !;  ** (right-associative, and its right operand may be unary: 2**-1);
//   literals, names, calls, parentheses.
// `!` binds like unary minus, as in C (where it comes from): `!a == b` is `(!a) == b`.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text), tokens_(Tokenizer(text).run()) {}

  std::uint32_t expression() {
    Nesting nesting(*this);
    std::uint32_t value = disjunction();
    if (!accept_keyword("if")) return value;
    std::uint32_t position = previous().position;
    std::uint32_t condition = disjunction();
    expect_keyword("else", "'else' after the condition of 'if'");
    std::uint32_t other = expression();
    return add(Node::Kind::Conditional, kConst, position, {value, condition, other});
  }

  const Nodes& nodes() const noexcept { return nodes_; }
  const Node& node(std::uint32_t index) const { return nodes_[index]; }
  std::string_view text() const noexcept { return text_; }

  const Token& peek(std::size_t ahead = 0) const { return tokens_[std::min(cursor_ + ahead, tokens_.size() - 1)]; }
  const Token& previous() const { return tokens_[cursor_ - 1]; }
  std::size_t cursor() const noexcept { return cursor_; }
  const std::vector<Token>& tokens() const noexcept { return tokens_; }
  void advance() {
    if (cursor_ + 1 < tokens_.size()) ++cursor_;
  }

  bool at_end() const { return peek().kind == Token::Kind::End; }
  bool at_op(std::string_view op, std::size_t ahead = 0) const { return peek(ahead).kind == Token::Kind::Op && peek(ahead).text == op; }
  bool at_keyword(std::string_view word) const { return peek().kind == Token::Kind::Name && peek().text == word; }
  // A call of `function`: its name followed by '('.
  bool at_call(std::string_view function) const { return at_keyword(function) && at_op("(", 1); }

  bool accept_op(std::string_view op) {
    if (!at_op(op)) return false;
    advance();
    return true;
  }
  bool accept_keyword(std::string_view word) {
    if (!at_keyword(word)) return false;
    advance();
    return true;
  }
  void expect_op(std::string_view op, std::string_view what) {
    if (!accept_op(op)) fail_expected(what);
  }
  void expect_keyword(std::string_view word, std::string_view what) {
    if (!accept_keyword(word)) fail_expected(what);
  }
  void expect_end() {
    if (!at_end()) fail_expected("an operator or the end of the expression");
  }

  [[noreturn]] void fail(std::string message, std::size_t position) const {
    throw ExpressionError(std::move(message), std::string(text_), position);
  }
  [[noreturn]] void fail_expected(std::string_view what) const {
    const Token& found = peek();
    if (found.kind == Token::Kind::End) fail(fmt::format("expected {}, found the end of the expression", what), found.position);
    fail(fmt::format("expected {}, found '{}'", what, found.text), found.position);
  }

 private:
  // Bounds the recursion (parentheses, arguments, prefix operators), so that "((((...))))"
  // cannot overflow the C++ stack.
  struct Nesting {
    explicit Nesting(Parser& parser) : parser(parser) {
      if (++parser.depth_ > kMaxNesting) parser.fail(fmt::format("expression nested more than {} deep", kMaxNesting), parser.peek().position);
    }
    ~Nesting() { --parser.depth_; }
    Parser& parser;
  };

  std::uint32_t add(Node::Kind kind, Code code, std::uint32_t position, std::vector<std::uint32_t> children) {
    Node node{kind, code, position};
    node.constant = std::all_of(children.begin(), children.end(), [&](std::uint32_t c) { return nodes_[c].constant; });
    node.children = std::move(children);
    nodes_.push_back(std::move(node));
    return static_cast<std::uint32_t>(nodes_.size() - 1);
  }

  std::uint32_t constant(Scalar value, std::uint32_t position) {
    Node node{Node::Kind::Constant, kConst, position, true, value};
    nodes_.push_back(std::move(node));
    return static_cast<std::uint32_t>(nodes_.size() - 1);
  }

  std::uint32_t disjunction() {
    std::uint32_t left = conjunction();
    while (accept_keyword("or") || accept_op("||")) {
      std::uint32_t position = previous().position;
      left = add(Node::Kind::Or, kConst, position, {left, conjunction()});
    }
    return left;
  }

  std::uint32_t conjunction() {
    std::uint32_t left = negation();
    while (accept_keyword("and") || accept_op("&&")) {
      std::uint32_t position = previous().position;
      left = add(Node::Kind::And, kConst, position, {left, negation()});
    }
    return left;
  }

  std::uint32_t negation() {
    if (!accept_keyword("not")) return comparison();
    Nesting nesting(*this);
    std::uint32_t position = previous().position;
    return add(Node::Kind::Apply, kNot, position, {negation()});
  }

  std::optional<Code> comparison_code() const {
    static constexpr std::pair<std::string_view, Code> kComparisons[] = {
        {"==", kEq}, {"!=", kNe}, {"<", kLt}, {"<=", kLe}, {">", kGt}, {">=", kGe}};
    for (auto [op, code] : kComparisons)
      if (at_op(op)) return code;
    return std::nullopt;
  }

  // `a < b <= c` is `a < b and b <= c`, as in Python. The shared operand is compiled twice
  // rather than kept on the stack: evaluating it has no side effects.
  std::uint32_t comparison() {
    std::uint32_t left = sum();
    std::optional<std::uint32_t> chain;
    while (std::optional<Code> code = comparison_code()) {
      std::uint32_t position = peek().position;
      advance();
      std::uint32_t right = sum();
      std::uint32_t test = add(Node::Kind::Apply, *code, position, {left, right});
      chain = chain ? add(Node::Kind::And, kConst, position, {*chain, test}) : test;
      left = right;
    }
    return chain.value_or(left);
  }

  std::uint32_t sum() {
    std::uint32_t left = term();
    while (at_op("+") || at_op("-")) {
      Code code = at_op("+") ? kAdd : kSub;
      std::uint32_t position = peek().position;
      advance();
      left = add(Node::Kind::Apply, code, position, {left, term()});
    }
    return left;
  }

  std::uint32_t term() {
    std::uint32_t left = unary();
    while (true) {
      Code code;
      if (at_op("*")) code = kMul;
      else if (at_op("/")) code = kDiv;
      else if (at_op("//")) code = kFloorDiv;
      else if (at_op("%")) code = kMod;
      else return left;
      std::uint32_t position = peek().position;
      advance();
      left = add(Node::Kind::Apply, code, position, {left, unary()});
    }
  }

  std::uint32_t unary() {
    Code code;
    if (at_op("-")) code = kNeg;
    else if (at_op("+")) code = kPos;
    else if (at_op("!")) code = kNot;
    else return power();
    Nesting nesting(*this);
    std::uint32_t position = peek().position;
    advance();
    return add(Node::Kind::Apply, code, position, {unary()});
  }

  std::uint32_t power() {
    std::uint32_t base = primary();
    if (!at_op("**")) return base;
    std::uint32_t position = peek().position;
    advance();
    return add(Node::Kind::Apply, kPow, position, {base, unary()});
  }

  std::uint32_t primary() {
    const Token& token = peek();
    switch (token.kind) {
      case Token::Kind::Int:
      case Token::Kind::Float:
      case Token::Kind::String:
        advance();
        return constant(token.value, token.position);
      case Token::Kind::Name:
        if (token.text == "True" || token.text == "true" || token.text == "False" || token.text == "false") {
          advance();
          return constant(Scalar::of_bool(token.text[0] == 'T' || token.text[0] == 't'), token.position);
        }
        if (is_keyword(token.text)) break;
        if (at_op("(", 1)) return call();
        advance();
        nodes_.push_back(Node{Node::Kind::Name, kConst, token.position, false, {}, token.text});
        return static_cast<std::uint32_t>(nodes_.size() - 1);
      case Token::Kind::Op:
        if (token.text != "(") break;
        advance();
        {
          std::uint32_t inner = expression();
          expect_op(")", "')'");
          return inner;
        }
      case Token::Kind::End:
        if (cursor_ == 0) fail("empty expression", 0);
        break;
    }
    fail_expected("a value, a name or '('");
  }

  std::uint32_t call() {
    const Token& name = peek();
    const Function* function = nullptr;
    for (const Function& f : kFunctions)
      if (f.name == name.text) function = &f;
    if (function == nullptr) fail(fmt::format("unknown function '{}'", name.text), name.position);
    advance();
    advance();  // '('
    std::vector<std::uint32_t> args;
    if (!accept_op(")")) {
      do args.push_back(expression());
      while (accept_op(","));
      expect_op(")", fmt::format("',' or ')' in the arguments of {}()", name.text));
    }
    if (args.size() < function->min_args || args.size() > function->max_args) {
      std::string count = function->max_args == SIZE_MAX   ? fmt::format("at least {} argument", function->min_args)
                          : function->min_args == 1        ? std::string("1 argument")
                                                           : fmt::format("{} arguments", function->min_args);
      fail(fmt::format("{}() takes {}, got {}", name.text, count, args.size()), name.position);
    }
    // min(a, b, c) is min(min(a, b), c): the stack stays two deep however many arguments.
    std::uint32_t result = args[0];
    if (args.size() == 1 && function->max_args == 1)
      return add(Node::Kind::Apply, function->code, name.position, {result});
    for (std::size_t k = 1; k < args.size(); ++k)
      result = add(Node::Kind::Apply, function->code, name.position, {result, args[k]});
    return result;
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  std::size_t cursor_ = 0;
  Nodes nodes_;
  int depth_ = 0;
};

}  // namespace

// ---------------------------------------------------------------------------------------
// Compilation to postfix

class Compiler {
 public:
  // Compiles the tree under `root`; names resolve to slots by their index in `names`.
  // With `fold`, sub-trees without names become constants when they evaluate without error
  // (one that fails, like 1/0, stays code: it fails only if evaluation reaches it).
  static Expression compile(const Nodes& nodes, std::uint32_t root, std::string_view text,
                            std::span<const std::string> names, bool fold = true) {
    Compiler compiler(nodes, text, names, fold);
    compiler.emit_node(root);
    Expression& out = compiler.out_;
    if (out.max_stack_ > kMaxStack)
      throw ExpressionError(fmt::format("expression too large: it needs {} stack entries, the limit is {}", out.max_stack_, kMaxStack),
                            out.text_);
    std::sort(out.used_.begin(), out.used_.end());
    out.used_.erase(std::unique(out.used_.begin(), out.used_.end()), out.used_.end());
    return std::move(out);
  }

 private:
  Compiler(const Nodes& nodes, std::string_view text, std::span<const std::string> names, bool fold)
      : nodes_(nodes), names_(names), fold_(fold) {
    out_.text_ = std::string(text);
  }

  std::size_t emit(Code code, std::uint32_t operand = 0, std::uint8_t arity = 0, std::uint32_t position = 0) {
    if (out_.program_.size() == kMaxProgram)
      throw ExpressionError(fmt::format("expression too large: more than {} instructions", kMaxProgram), out_.text_);
    out_.program_.push_back(Expression::Op{code, arity, operand, position});
    return out_.program_.size() - 1;
  }
  void patch_to_here(std::size_t jump) { out_.program_[jump].operand = static_cast<std::uint32_t>(out_.program_.size()); }
  void push() { out_.max_stack_ = std::max(out_.max_stack_, ++depth_); }

  void emit_constant(const Scalar& value) {
    out_.constants_.push_back(value);
    emit(kConst, static_cast<std::uint32_t>(out_.constants_.size() - 1));
    push();
  }

  void emit_node(std::uint32_t index) {
    const Node& node = nodes_[index];
    if (fold_ && node.constant && node.kind != Node::Kind::Constant) {
      try {
        Expression folded = compile(nodes_, index, out_.text_, {}, /*fold=*/false);
        emit_constant(folded.evaluate({}));
        return;
      } catch (const ExpressionError&) {
        // Not foldable (1/0): keep it as code, which fails only if evaluation reaches it.
      }
    }
    switch (node.kind) {
      case Node::Kind::Constant: emit_constant(node.value); return;
      case Node::Kind::Name: {
        auto found = std::find(names_.begin(), names_.end(), node.name);
        if (found == names_.end()) throw ExpressionError(fmt::format("unknown parameter '{}'", node.name), out_.text_, node.position);
        auto slot = static_cast<std::size_t>(found - names_.begin());
        out_.used_.push_back(slot);
        emit(kSlot, static_cast<std::uint32_t>(slot));
        push();
        return;
      }
      case Node::Kind::Apply:
        for (std::uint32_t child : node.children) emit_node(child);
        emit(node.code, 0, static_cast<std::uint8_t>(node.children.size()), node.position);
        depth_ -= node.children.size() - 1;
        return;
      case Node::Kind::And:
      case Node::Kind::Or: {
        emit_node(node.children[0]);
        std::size_t jump = emit(node.kind == Node::Kind::And ? kJumpIfFalseOrPop : kJumpIfTrueOrPop);
        --depth_;  // the fall-through pops the left operand
        emit_node(node.children[1]);
        patch_to_here(jump);
        return;
      }
      case Node::Kind::Conditional: {
        emit_node(node.children[1]);
        std::size_t to_else = emit(kPopJumpIfFalse);
        --depth_;
        emit_node(node.children[0]);
        std::size_t to_end = emit(kJump);
        patch_to_here(to_else);
        --depth_;  // one branch's value, not both
        emit_node(node.children[2]);
        patch_to_here(to_end);
        return;
      }
    }
  }

  const Nodes& nodes_;
  std::span<const std::string> names_;
  bool fold_;
  std::size_t depth_ = 0;
  Expression out_;
};

// ---------------------------------------------------------------------------------------
// Evaluation

Expression Expression::parse(std::string_view text, std::span<const std::string> names) {
  Parser parser(text);
  std::uint32_t root = parser.expression();
  parser.expect_end();
  return Compiler::compile(parser.nodes(), root, text, names);
}

Scalar Expression::evaluate(std::span<const Scalar> slots) const {
  if (program_.empty()) return Scalar();
  if (!used_.empty() && used_.back() >= slots.size())
    throw ExpressionError(fmt::format("expression reads value {} but {} were given", used_.back() + 1, slots.size()), text_);
  // Left uninitialised: evaluate() runs for every candidate configuration. Assigning
  // `value` starts its lifetime (Scalar is trivially copyable).
  union Cell {
    Cell() {}
    Scalar value;
  };
  std::array<Cell, kMaxStack> stack;
  std::size_t top = 0;
  std::size_t pc = 0;
  while (pc < program_.size()) {
    const Op& op = program_[pc++];
    switch (op.code) {
      case kConst: stack[top++].value = constants_[op.operand]; break;
      case kSlot: stack[top++].value = slots[op.operand]; break;
      case kJump: pc = op.operand; break;
      case kJumpIfFalseOrPop:
        if (stack[top - 1].value.truthy()) --top;
        else pc = op.operand;
        break;
      case kJumpIfTrueOrPop:
        if (stack[top - 1].value.truthy()) pc = op.operand;
        else --top;
        break;
      case kPopJumpIfFalse:
        if (!stack[--top].value.truthy()) pc = op.operand;
        break;
      default: {
        Site site{text_, op.position};
        auto code = static_cast<Code>(op.code);
        if (op.arity == 1) {
          stack[top - 1].value = unary(code, stack[top - 1].value, site);
        } else {
          stack[top - 2].value = binary(code, stack[top - 2].value, stack[top - 1].value, site);
          --top;
        }
      }
    }
  }
  return stack[0].value;
}

// ---------------------------------------------------------------------------------------
// Value lists

namespace {

// Value lists are evaluated once, so this reads and evaluates in one pass. Elements are
// expressions of the main language; a comprehension's variable is slot 0.
class ListReader {
 public:
  explicit ListReader(std::string_view text) : parser_(text) {}

  std::vector<Value> read() {
    if (parser_.at_end()) parser_.fail("empty value list", 0);
    std::vector<Value> values;
    if (parser_.at_op("[") || parser_.at_call("range") || parser_.at_call("list") || parenthesised_to_end()) {
      values = iterable();
    } else {  // "32" or "1, 2, 4"
      do values.push_back(constant(parser_.expression()));
      while (parser_.accept_op(",") && !parser_.at_end());
    }
    parser_.expect_end();
    return values;
  }

 private:
  // "(...)" spanning the whole text is a tuple; "(1 + 2) * 3" is a scalar.
  bool parenthesised_to_end() const {
    if (!parser_.at_op("(")) return false;
    const std::vector<Token>& tokens = parser_.tokens();
    int depth = 0;
    for (std::size_t k = parser_.cursor(); k < tokens.size(); ++k) {
      if (tokens[k].kind != Token::Kind::Op) continue;
      if (tokens[k].text == "(" || tokens[k].text == "[") ++depth;
      if ((tokens[k].text == ")" || tokens[k].text == "]") && --depth == 0) return tokens[k + 1].kind == Token::Kind::End;
    }
    return false;
  }

  std::vector<Value> iterable() {
    if (parser_.accept_op("[")) return sequence("]");
    if (parser_.accept_op("(")) return sequence(")");
    if (parser_.at_call("range")) return range();
    if (parser_.at_call("list")) {
      parser_.advance();
      parser_.advance();
      std::vector<Value> values = iterable();
      parser_.expect_op(")", "')' after the argument of list()");
      return values;
    }
    parser_.fail_expected("a list, a tuple, range(...) or list(...)");
  }

  // After '[' or '(': elements or a comprehension, then `close`.
  std::vector<Value> sequence(std::string_view close) {
    std::vector<Value> values;
    if (parser_.accept_op(close)) return values;
    std::uint32_t first = parser_.expression();
    if (parser_.at_keyword("for")) return comprehension(first, close);
    values.push_back(constant(first));
    while (parser_.accept_op(",") && !parser_.at_op(close)) values.push_back(constant(parser_.expression()));
    parser_.expect_op(close, fmt::format("',' or '{}'", close));
    return values;
  }

  // [element for name in iterable if condition]
  std::vector<Value> comprehension(std::uint32_t element, std::string_view close) {
    parser_.advance();  // 'for'
    const Token& variable = parser_.peek();
    if (variable.kind != Token::Kind::Name || is_keyword(variable.text)) parser_.fail_expected("a variable name after 'for'");
    std::array<std::string, 1> names{std::string(variable.text)};
    parser_.advance();
    parser_.expect_keyword("in", "'in'");
    std::vector<Value> source = iterable();
    std::optional<Expression> condition;
    if (parser_.accept_keyword("if")) condition = compile(parser_.expression(), names);
    parser_.expect_op(close, fmt::format("'if' or '{}'", close));

    Expression value = compile(element, names);
    std::vector<Value> values;
    for (const Value& item : source) {
      Scalar slot = to_scalar(item);
      if (condition && !condition->test({&slot, 1})) continue;
      values.push_back(to_value(value.evaluate({&slot, 1})));
    }
    return values;
  }

  // range(stop), range(start, stop), range(start, stop, step)
  std::vector<Value> range() {
    std::uint32_t position = parser_.peek().position;
    parser_.advance();
    parser_.advance();  // '('
    std::vector<std::int64_t> args;
    if (!parser_.at_op(")")) {
      do {
        std::uint32_t arg = parser_.expression();
        Scalar value = compile(arg, {}).evaluate({});
        if (value.kind != Kind::Int && value.kind != Kind::Bool)
          parser_.fail(fmt::format("range() needs integers, got {}", type_name(value)), parser_.node(arg).position);
        args.push_back(value.i);
      } while (parser_.accept_op(","));
    }
    parser_.expect_op(")", "',' or ')' in the arguments of range()");
    if (args.empty() || args.size() > 3) parser_.fail(fmt::format("range() takes 1 to 3 arguments, got {}", args.size()), position);
    std::int64_t start = args.size() == 1 ? 0 : args[0];
    std::int64_t stop = args.size() == 1 ? args[0] : args[1];
    std::int64_t step = args.size() == 3 ? args[2] : 1;
    if (step == 0) parser_.fail("range() step must not be zero", position);

    // Count in unsigned arithmetic: stop - start may not fit in an int64.
    std::uint64_t count = 0;
    if (step > 0 && start < stop) count = (bits(stop) - bits(start) - 1) / bits(step) + 1;
    if (step < 0 && start > stop) count = (bits(start) - bits(stop) - 1) / (0 - bits(step)) + 1;
    if (count > kMaxListLength)
      parser_.fail(fmt::format("range() gives {} values; a value list may have at most {}", count, kMaxListLength), position);
    std::vector<Value> values;
    values.reserve(count);
    for (std::uint64_t k = 0; k < count; ++k) values.emplace_back(wrap(bits(start) + k * bits(step)));
    return values;
  }

  Expression compile(std::uint32_t node, std::span<const std::string> names) {
    return Compiler::compile(parser_.nodes(), node, parser_.text(), names);
  }

  Value constant(std::uint32_t node) { return to_value(compile(node, {}).evaluate({})); }

  Parser parser_;
};

}  // namespace

std::vector<Value> evaluate_list(std::string_view text) { return ListReader(text).read(); }

Value evaluate_once(std::string_view text, std::span<const std::pair<std::string, Value>> variables) {
  std::vector<std::string> names;
  std::vector<Scalar> slots;
  for (const auto& [name, value] : variables) {
    names.push_back(name);
    slots.push_back(to_scalar(value));
  }
  return to_value(Expression::parse(text, names).evaluate(slots));
}

}  // namespace steer::expr
