// Scalars of the expression language and the table of interned strings.
#include <fmt/core.h>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <deque>

#include "expression/expression.hpp"

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

}  // namespace steer::expr
