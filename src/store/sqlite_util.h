// Internal to the store: thin RAII over the SQLite C API, turning every failure into pf::Error.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"

namespace pf::sqlite {

[[noreturn]] void fail(sqlite3* db, std::string_view what);

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, int64_t v);
  Statement& bind(int i, double v);
  Statement& bind(int i, std::string_view v);  // empty string binds as text ''
  Statement& bind_text_or_null(int i, std::string_view v);
  // Returns true while there is a row.
  bool step();
  void run() {
    step();
    reset();
  }
  void reset();

  sqlite3_stmt* handle() const { return stmt_; }
  int64_t int64(int col) const { return sqlite3_column_int64(stmt_, col); }
  double real(int col) const { return sqlite3_column_double(stmt_, col); }
  std::string text(int col) const {
    auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col)))
             : std::string();
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

void exec(sqlite3* db, const char* sql);

// The connection's FTS5 API, for registering tokenizers and ranking functions. Throws pf::Error
// if this SQLite has no FTS5.
fts5_api* fts5(sqlite3* db);

}  // namespace pf::sqlite
