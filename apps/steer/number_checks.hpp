#pragma once
// Checks of numeric options that CLI11's own let through: NaN (every comparison with NaN is
// false, so CLI::PositiveNumber and CLI::Range accept it) and whole numbers past 64 bits
// (read modulo 2^64 into an unsigned option).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace steer::cli {

// "" when `text` is a finite number in [low, high] (above low when !low_inclusive), else why
// not. Text that is not a number at all is left to the option's own conversion to report.
inline std::string check_number(const std::string& text, double low, bool low_inclusive, double high) {
  const std::string digits = !text.empty() && text[0] == '+' ? text.substr(1) : text;
  if (!digits.empty() && std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); })) {
    const std::string trimmed = digits.substr(std::min(digits.find_first_not_of('0'), digits.size() - 1));
    if (trimmed.size() > 20 || (trimmed.size() == 20 && trimmed > "18446744073709551615")) {
      return fmt::format("{} is larger than 18446744073709551615, the largest whole number accepted", text);
    }
  }
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0') return "";
  if (!std::isfinite(value)) return fmt::format("{} is not a finite number", text);
  if (value < low || (!low_inclusive && value == low) || value > high) {
    if (high == std::numeric_limits<double>::max() && low == 0) {
      return fmt::format("{} is not {}", text, low_inclusive ? "zero or more" : "a positive number");
    }
    return fmt::format("{} is not in {}{}, {}]", text, low_inclusive ? "[" : "(", low, high);
  }
  return "";
}

inline CLI::Validator number_in(double low, double high) {
  return CLI::Validator([=](std::string& text) { return check_number(text, low, true, high); },
                        fmt::format("NUMBER in [{}, {}]", low, high));
}

inline const CLI::Validator kPositive(
    [](std::string& text) { return check_number(text, 0, false, std::numeric_limits<double>::max()); }, "POSITIVE");
inline const CLI::Validator kNonNegative(
    [](std::string& text) { return check_number(text, 0, true, std::numeric_limits<double>::max()); }, "NONNEGATIVE");

}  // namespace steer::cli
