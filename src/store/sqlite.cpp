#include "store/sqlite.hpp"

#include <fmt/core.h>
#include <limits>

namespace steer::sqlite {

void check(sqlite3* db, int code, std::string_view what) {
  if (code == SQLITE_OK) return;
  const char* message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(code);
  throw Failure(fmt::format("{}: {}", what, message));
}

Connection::Connection(const std::string& file, int flags) {
  int code = sqlite3_open_v2(file.c_str(), &db_, flags, nullptr);
  if (code != SQLITE_OK) {
    std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(code);
    sqlite3_close(db_);
    throw Failure(message);
  }
  sqlite3_extended_result_codes(db_, 1);
}

Connection::~Connection() { sqlite3_close_v2(db_); }

void Connection::execute(std::string_view sql) {
  std::string text(sql);
  char* error = nullptr;
  int code = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
  if (code != SQLITE_OK) {
    std::string message = error != nullptr ? error : sqlite3_errstr(code);
    sqlite3_free(error);
    throw Failure(message);
  }
}

std::int64_t Connection::query_int(std::string_view sql) {
  Statement statement(db_, sql);
  if (!statement.step()) throw Failure(fmt::format("'{}' returned no row", sql));
  return statement.column_int(0);
}

std::string Connection::query_text(std::string_view sql) {
  Statement statement(db_, sql);
  if (!statement.step()) throw Failure(fmt::format("'{}' returned no row", sql));
  return std::string(statement.column_text(0));
}

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db) {
  // PERSISTENT: these statements live as long as the connection.
  check(db, sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                               &stmt_, nullptr),
        fmt::format("cannot prepare '{}'", sql));
}

Statement::Statement(Statement&& other) noexcept : db_(other.db_), stmt_(other.stmt_) {
  other.stmt_ = nullptr;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::bind(int index, std::int64_t value) {
  check(db_, sqlite3_bind_int64(stmt_, index, value), "bind");
}

void Statement::bind(int index, double value) {
  check(db_, sqlite3_bind_double(stmt_, index, value), "bind");
}

void Statement::bind(int index, std::string_view text) {
  check(db_, sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
        "bind");
}

void Statement::bind_blob(int index, std::span<const std::byte> bytes) {
  // A zero-length blob, not NULL, for an empty span (whose data() may be null).
  check(db_, bytes.empty() ? sqlite3_bind_zeroblob(stmt_, index, 0)
                           : sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT),
        "bind");
}

void Statement::bind_null(int index) { check(db_, sqlite3_bind_null(stmt_, index), "bind"); }

bool Statement::step() {
  int code = sqlite3_step(stmt_);
  if (code == SQLITE_ROW) return true;
  if (code == SQLITE_DONE) return false;
  throw Failure(sqlite3_errmsg(db_));
}

void Statement::reset() noexcept {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

std::int64_t Statement::column_int(int column) const { return sqlite3_column_int64(stmt_, column); }

double Statement::column_double(int column) const {
  return is_null(column) ? std::numeric_limits<double>::quiet_NaN() : sqlite3_column_double(stmt_, column);
}

std::string_view Statement::column_text(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  return text == nullptr ? std::string_view{}
                         : std::string_view(text, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::span<const std::byte> Statement::column_blob(int column) const {
  const auto* data = static_cast<const std::byte*>(sqlite3_column_blob(stmt_, column));
  return {data, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column))};
}

Transaction::Transaction(Statement& begin, Statement& commit, Statement& rollback)
    : commit_(commit), rollback_(rollback) {
  Use use(begin);
  use->step();
}

Transaction::~Transaction() {
  if (!open_) return;
  // ROLLBACK cannot fail while no statement is mid-step (Use guarantees that), and a
  // destructor has no one to tell if it did.
  try {
    Use use(rollback_);
    use->step();
  } catch (const Failure&) {
  }
}

void Transaction::commit() {
  Use use(commit_);
  use->step();
  open_ = false;
}

}  // namespace steer::sqlite
