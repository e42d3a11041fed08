#pragma once
// Errors are exceptions that carry their context: what failed, where, and why.
#include <stdexcept>
#include <string>

namespace steer {

// Base of every error Steer throws on purpose.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A constraint, value list or launch expression that does not parse or evaluate.
// `position` is the 0-based character offset in `expression` (npos when not known).
class ExpressionError : public Error {
 public:
  ExpressionError(std::string message, std::string expression, std::size_t position = std::string::npos);
  const std::string& expression() const noexcept { return expression_; }
  std::size_t position() const noexcept { return position_; }
  // The message plus the expression with a caret under the position.
  std::string detailed() const;

 private:
  std::string expression_;
  std::size_t position_;
};

// A tuning space that cannot be built (no parameters, empty value list, no valid configuration, ...).
class SpaceError : public Error {
 public:
  using Error::Error;
};

// A spec file that is malformed; the message names the file and the JSON path.
class SpecError : public Error {
 public:
  using Error::Error;
};

// A backend failure that is not about one configuration (no device, no driver, ...).
class BackendError : public Error {
 public:
  using Error::Error;
};

// Counters or energy asked for on a machine that cannot measure them (no CUPTI, counters
// restricted to administrators, no NVML): the run cannot give what was asked.
class MeasurementUnavailable : public BackendError {
 public:
  using BackendError::BackendError;
};

// A test stopped in the middle because the run was interrupted (RunOptions::interrupt, set
// by Ctrl-C): it did not finish, so it has no result.
class Interrupted : public Error {
 public:
  using Error::Error;
};

// The results store cannot be opened, read or written.
class StoreError : public Error {
 public:
  using Error::Error;
};

}  // namespace steer
