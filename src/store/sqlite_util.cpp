// RAII statement wrapper and error translation for the SQLite store.
#include "store/sqlite_util.h"

namespace pf::sqlite {

void fail(sqlite3* db, std::string_view what) {
  int code = sqlite3_extended_errcode(db);
  std::string msg = std::string(what) + ": " + sqlite3_errmsg(db);
  if ((code & 0xff) == SQLITE_BUSY || (code & 0xff) == SQLITE_LOCKED) throw BusyError(msg);
  if ((code & 0xff) == SQLITE_CORRUPT || (code & 0xff) == SQLITE_NOTADB)
    throw Error(msg + " (the store is damaged: delete it and run `pilotfish index` again)");
  throw Error(msg);
}

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                         &stmt_, nullptr) != SQLITE_OK)
    fail(db, "preparing statement");
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

Statement& Statement::bind(int i, int64_t v) {
  sqlite3_bind_int64(stmt_, i, v);
  return *this;
}
Statement& Statement::bind(int i, double v) {
  sqlite3_bind_double(stmt_, i, v);
  return *this;
}
Statement& Statement::bind_bytes(int i, std::string_view v, bool blob,
                                 void (*lifetime)(void*)) {
  const char* p = v.data() ? v.data() : "";
  if (blob)
    sqlite3_bind_blob(stmt_, i, p, static_cast<int>(v.size()), lifetime);
  else
    sqlite3_bind_text(stmt_, i, p, static_cast<int>(v.size()), lifetime);
  return *this;
}
Statement& Statement::bind(int i, std::string_view v) {
  return bind_bytes(i, v, false, SQLITE_TRANSIENT);
}
Statement& Statement::bind_blob(int i, std::string_view v) {
  return bind_bytes(i, v, true, SQLITE_TRANSIENT);
}
Statement& Statement::bind_static(int i, std::string_view v) {
  return bind_bytes(i, v, false, SQLITE_STATIC);
}
Statement& Statement::bind_static_blob(int i, std::string_view v) {
  return bind_bytes(i, v, true, SQLITE_STATIC);
}
Statement& Statement::bind_text_or_null(int i, std::string_view v) {
  if (v.empty()) {
    sqlite3_bind_null(stmt_, i);
    return *this;
  }
  return bind(i, v);
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3_reset(stmt_);
  fail(db_, "executing statement");
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

StatementCache::Lease::~Lease() {
  if (!cached_) return;
  cached_->reset();
  *in_use_ = false;
}

StatementCache::Lease StatementCache::use(std::string_view sql) {
  auto it = cache_.find(std::string(sql));
  if (it == cache_.end()) {
    auto statement = std::make_unique<Statement>(*db_, sql);
    it = cache_.emplace(std::string(sql), Entry{std::move(statement), false}).first;
  }
  if (it->second.in_use) return Lease(std::make_unique<Statement>(*db_, sql));
  it->second.in_use = true;
  return Lease(it->second.statement.get(), &it->second.in_use);
}

void exec(sqlite3* db, const char* sql) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) fail(db, "executing SQL");
}

fts5_api* fts5(sqlite3* db) {
  fts5_api* api = nullptr;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &stmt, nullptr) == SQLITE_OK) {
    sqlite3_bind_pointer(stmt, 1, reinterpret_cast<void*>(&api), "fts5_api_ptr", nullptr);
    sqlite3_step(stmt);
  }
  sqlite3_finalize(stmt);
  if (!api) throw Error("this SQLite has no FTS5; install Debian's libsqlite3-0 (3.40 or newer)");
  return api;
}

}  // namespace pf::sqlite
