// Thin RAII over the SQLite C API, turning every failure into pf::Error: for the SQLite store and
// the bridge's SQLite state store (public: they share it rather than each wrapping SQLite).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

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
  Statement& bind_blob(int i, std::string_view v);
  // As bind and bind_blob, but SQLite reads v's bytes where they are instead of copying them:
  // they must stay valid and unchanged until the statement is reset (run() resets it) or i is
  // bound again. For large values bound once per row (a chunk's content, its FTS5 tokens).
  Statement& bind_static(int i, std::string_view v);
  Statement& bind_static_blob(int i, std::string_view v);
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
  // v as text or a blob, copied by SQLite (SQLITE_TRANSIENT) or read in place (SQLITE_STATIC).
  Statement& bind_bytes(int i, std::string_view v, bool blob, void (*lifetime)(void*));

  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// The statements of one connection, prepared on first use and kept: for the small queries of a
// state store, preparing (parsing and planning the SQL) costs more than running them. use()
// lends a statement until the Lease ends, which resets it and clears its bindings; a statement
// already lent is prepared afresh for the second borrower. One thread at a time, as the
// connection. clear() (or the destructor) must run before the connection is closed.
class StatementCache {
 public:
  // *db is read at each use(): the connection may be opened after the cache is made.
  explicit StatementCache(sqlite3* const* db) : db_(db) {}
  ~StatementCache() { clear(); }
  StatementCache(const StatementCache&) = delete;
  StatementCache& operator=(const StatementCache&) = delete;

  class Lease {
   public:
    Lease(Lease&& o) noexcept
        : cached_(o.cached_), owned_(std::move(o.owned_)), in_use_(o.in_use_) {
      o.cached_ = nullptr;
      o.in_use_ = nullptr;
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    Statement* operator->() { return cached_ ? cached_ : owned_.get(); }
    Statement& operator*() { return *operator->(); }

   private:
    friend class StatementCache;
    Lease(Statement* cached, bool* in_use) : cached_(cached), in_use_(in_use) {}
    explicit Lease(std::unique_ptr<Statement> owned) : owned_(std::move(owned)) {}
    Statement* cached_ = nullptr;
    std::unique_ptr<Statement> owned_;
    bool* in_use_ = nullptr;
  };

  // Throws pf::Error if the SQL does not prepare.
  Lease use(std::string_view sql);
  void clear() { cache_.clear(); }
  size_t size() const { return cache_.size(); }

 private:
  struct Entry {
    std::unique_ptr<Statement> statement;
    bool in_use = false;
  };
  sqlite3* const* db_;
  std::unordered_map<std::string, Entry> cache_;
};

void exec(sqlite3* db, const char* sql);

// The connection's FTS5 API, for registering tokenizers and ranking functions. Throws pf::Error
// if this SQLite has no FTS5.
fts5_api* fts5(sqlite3* db);

}  // namespace pf::sqlite
