// A thin RAII layer over libpq, for the PostgreSQL store and the bridge's state store and lease
// (public: they share it rather than each wrapping libpq). A connection, a
// result, and parameters passed as text (or as bytes, for bytea); every failure is a pf::Error
// with the server's message. One connection is one thread's at a time, like a SQLite handle.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace pf::pg {

// Every advisory lock pilotfish takes, in one place so that no two uses collide: (class, key),
// the class spelling "pf". The bridge's bot leases use a class of their own, keyed by a hash of
// the bot (bot_lease.cpp).
constexpr int kPgLockClass = 0x7066;
constexpr int kPgWriterLockKey = 1;           // the one indexer (pg_store.cpp)
constexpr int kPgMigrationLockKey = 2;        // the store's migrations (pg_schema.cpp)
constexpr int kPgBridgeMigrationLockKey = 3;  // the bridge state's migrations
constexpr int kPgBotLeaseClass = 0x7067;

// One parameter of a query: text, bytes (bytea, sent in binary) or NULL.
struct Param {
  std::string value;
  bool binary = false;
  bool null = false;
  static Param text(std::string_view v) { return Param{std::string(v), false, false}; }
  static Param number(int64_t v) { return Param{std::to_string(v), false, false}; }
  static Param bytes(std::string v) { return Param{std::move(v), true, false}; }
  // NULL for an empty string, as the SQLite store keeps absent names.
  static Param text_or_null(std::string_view v) { return Param{std::string(v), false, v.empty()}; }
};

// A query's result; rows and columns read as text, or as raw bytes when asked for binary.
class Result {
 public:
  explicit Result(PGresult* r) : r_(r) {}
  ~Result() { PQclear(r_); }
  Result(Result&& o) noexcept : r_(o.r_) { o.r_ = nullptr; }
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  int rows() const { return PQntuples(r_); }
  bool is_null(int row, int col) const { return PQgetisnull(r_, row, col) != 0; }
  std::string text(int row, int col) const {
    return std::string(PQgetvalue(r_, row, col), static_cast<size_t>(PQgetlength(r_, row, col)));
  }
  std::string_view view(int row, int col) const {
    return std::string_view(PQgetvalue(r_, row, col), static_cast<size_t>(PQgetlength(r_, row, col)));
  }
  int64_t int64(int row, int col) const;  // a text column holding an integer (0 when NULL)
  // Whether the command succeeded; else its error (from the result, or the connection's).
  bool ok() const;
  std::string error(PGconn* c) const;
  std::string sqlstate() const;  // the failure's SQLSTATE; empty for one libpq made itself

 private:
  PGresult* r_;
};

class Connection {
 public:
  // Connects with conninfo (a postgres:// URL or key=value pairs, as libpq takes them). Throws
  // pf::Error naming the server (without its password) and libpq's reason.
  explicit Connection(const std::string& conninfo);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs sql with $1.. params (prepared on first use, kept for the connection's life); results
  // in text, or all columns binary when binary_result. A connection found broken outside a
  // transaction is made again once and the statement sent again. Throws pf::Error with the
  // server's message on failure.
  Result exec(const std::string& sql, const std::vector<Param>& params = {},
              bool binary_result = false);
  // Runs one or more statements without parameters.
  void run(const std::string& sql);
  // Called after the connection was made again (the server restarted, or the network broke):
  // to LISTEN again and forget what the old session knew. On the thread that runs exec.
  void on_reconnect(std::function<void()> hook) { on_reconnect_ = std::move(hook); }
  // Whether a broken connection may be made again: not while the session holds what a new one
  // would not (an advisory lock).
  void allow_reconnect(bool allow) { allow_reconnect_ = allow; }
  // Whether a notification (of a channel this connection LISTENs on) has arrived since the last
  // call, or the connection could not read (it may have missed one); reads what the server has
  // sent without waiting.
  bool notified();
  // Whether a transaction is open on the connection.
  bool in_transaction() const;
  PGconn* handle() const { return c_; }
  // Where the connection goes, for messages: the URL or conninfo with any password removed.
  const std::string& where() const { return where_; }

 private:
  PGconn* c_ = nullptr;
  std::string where_;
  std::unordered_map<std::string, std::string> prepared_;  // SQL -> statement name
  std::function<void()> on_reconnect_;
  bool allow_reconnect_ = true;

  // After a failure on a connection that broke outside a transaction: connects again (once) and
  // says whether the statement may be sent again.
  bool reconnected(const Result& failure);
};

// A transaction on c: begin (BEGIN, or a BEGIN with its modes) now, ROLLBACK when destroyed
// uncommitted (a throw on the way).
class Transaction {
 public:
  explicit Transaction(Connection& c, const char* begin = "BEGIN") : c_(c) { c_.run(begin); }
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Connection& c_;
  bool done_ = false;
};

// conninfo (a URL or key=value pairs) with more libpq options, each name=value: appended to
// the URL's query or to the pairs.
std::string with_options(const std::string& conninfo,
                         const std::vector<std::pair<std::string, std::string>>& options);

// conninfo with its password (URL user:password@ or password=...) replaced by ***.
std::string redact_conninfo(const std::string& conninfo);

// A PostgreSQL text[] literal of items, for array parameters ('{"a","b"}'); with
// empty_is_null, an empty item is NULL.
std::string text_array(const std::vector<std::string>& items, bool empty_is_null = false);

// An integer column of a binary result (int4 or int8, big-endian). Throws pf::Error on another
// size.
int64_t binary_int(std::string_view bytes);

}  // namespace pf::pg
