#pragma once
// A thin RAII layer over the SQLite C API: a connection, prepared statements, a
// transaction guard. Failures throw sqlite::Failure with SQLite's message; the Store
// turns it into a StoreError that names the file and what it was doing.
#include <sqlite3.h>

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace steer::sqlite {

class Failure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws Failure "<what>: <SQLite's message>" unless `code` is SQLITE_OK.
void check(sqlite3* db, int code, std::string_view what);

class Connection {
 public:
  Connection(const std::string& file, int flags);
  Connection(Connection&&) = delete;
  ~Connection();
  sqlite3* get() const noexcept { return db_; }
  // Runs one or more statements that return no rows the caller needs.
  void execute(std::string_view sql);
  // The first column of the first row of a one-row query (a PRAGMA, a count).
  std::int64_t query_int(std::string_view sql);
  std::string query_text(std::string_view sql);

 private:
  sqlite3* db_ = nullptr;
};

// A prepared statement, compiled once and reused: binding and stepping allocate nothing.
// Bind indices are 1-based, column indices 0-based, as in SQLite.
class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  ~Statement();

  void bind(int index, std::int64_t value);
  void bind(int index, double value);  // NaN is stored as NULL (SQLite has no NaN)
  void bind(int index, std::string_view text);
  void bind_blob(int index, std::span<const std::byte> bytes);
  void bind_null(int index);

  // Advances to the next row: true if there is one, false when done.
  bool step();
  // Ends the current use: the statement releases its read snapshot and bindings.
  void reset() noexcept;

  bool is_null(int column) const;
  std::int64_t column_int(int column) const;
  double column_double(int column) const;  // NULL reads as NaN
  std::string_view column_text(int column) const;
  std::span<const std::byte> column_blob(int column) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// Resets a statement when the scope that used it ends, also on an exception, so that
// no statement keeps a WAL read snapshot (or a half-bound insert) open.
class Use {
 public:
  explicit Use(Statement& statement) : statement_(statement) {}
  Use(const Use&) = delete;
  ~Use() { statement_.reset(); }
  Statement* operator->() const noexcept { return &statement_; }
  Statement& operator*() const noexcept { return statement_; }

 private:
  Statement& statement_;
};

// BEGIN on construction, ROLLBACK on destruction unless commit() was called.
class Transaction {
 public:
  Transaction(Statement& begin, Statement& commit, Statement& rollback);
  Transaction(const Transaction&) = delete;
  ~Transaction();
  void commit();

 private:
  Statement& commit_;
  Statement& rollback_;
  bool open_ = true;
};

}  // namespace steer::sqlite
