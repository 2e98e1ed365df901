// The libpq layer of the PostgreSQL store (see pg_util.h).
#include "store/pg_util.h"

#include <regex>

#include "core/error.h"

namespace pf::pg {

int64_t Result::int64(int row, int col) const {
  if (is_null(row, col)) return 0;
  return std::stoll(text(row, col));
}

bool Result::ok() const {
  ExecStatusType status = r_ ? PQresultStatus(r_) : PGRES_FATAL_ERROR;
  return status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
}

std::string Result::sqlstate() const {
  const char* s = r_ ? PQresultErrorField(r_, PG_DIAG_SQLSTATE) : nullptr;
  return s ? s : "";
}

std::string Result::error(PGconn* c) const {
  std::string why = r_ ? PQresultErrorMessage(r_) : PQerrorMessage(c);
  while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
  // One line: libpq continues a message on indented lines ("\n\tThis probably means...").
  std::string out;
  for (char ch : why) {
    if (ch == '\n' || ch == '\t') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += ch;
    }
  }
  return out;
}

std::string redact_conninfo(const std::string& conninfo) {
  // postgres://user:secret@host/db and password=secret (quoted or not).
  static const std::regex url(R"(^(postgres(?:ql)?://[^:/@?]*):[^@/?]*@)");
  static const std::regex pair(R"((password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+))");
  std::string out = std::regex_replace(conninfo, url, "$1:***@");
  out = std::regex_replace(out, pair, "$1***");
  return out;
}

Connection::Connection(const std::string& conninfo) : where_(redact_conninfo(conninfo)) {
  c_ = PQconnectdb(conninfo.c_str());
  if (!c_) throw Error("cannot connect to PostgreSQL at " + where_ + ": out of memory");
  if (PQstatus(c_) != CONNECTION_OK) {
    std::string why = PQerrorMessage(c_);
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    for (char& ch : why)
      if (ch == '\n') ch = ' ';
    PQfinish(c_);
    c_ = nullptr;
    throw Error("cannot connect to PostgreSQL at " + where_ + ": " + why);
  }
  // Notices (an IF NOT EXISTS that found the table) are not errors; keep them off stderr.
  PQsetNoticeProcessor(c_, [](void*, const char*) {}, nullptr);
}

Connection::~Connection() {
  if (c_) PQfinish(c_);
}

Result Connection::exec(const std::string& sql, const std::vector<Param>& params,
                        bool binary_result) {
  std::vector<const char*> values;
  std::vector<int> lengths, formats;
  for (const Param& p : params) {
    values.push_back(p.null ? nullptr : p.value.c_str());
    lengths.push_back(static_cast<int>(p.value.size()));
    formats.push_back(p.binary ? 1 : 0);
  }
  for (int attempt = 0;; ++attempt) {
    bool idle = !in_transaction();
    // Each statement is prepared once per connection: parsing and planning cost more than
    // running most of them (a search's dozen statements took 4.9 ms unprepared on a
    // 1,800-chunk store).
    auto it = prepared_.find(sql);
    if (it == prepared_.end()) {
      std::string name = "pf" + std::to_string(prepared_.size());
      Result prep(PQprepare(c_, name.c_str(), sql.c_str(), static_cast<int>(params.size()), nullptr));
      if (!prep.ok()) {
        if (attempt == 0 && idle && reconnected(prep)) continue;
        throw Error("PostgreSQL at " + where_ + ": " + prep.error(c_));
      }
      it = prepared_.emplace(sql, name).first;
    }
    Result result(PQexecPrepared(c_, it->second.c_str(), static_cast<int>(params.size()),
                                 values.data(), lengths.data(), formats.data(),
                                 binary_result ? 1 : 0));
    if (result.ok()) return result;
    if (attempt == 0 && idle && reconnected(result)) continue;
    throw Error("PostgreSQL at " + where_ + ": " + result.error(c_));
  }
}

bool Connection::reconnected(const Result& failure) {
  // Broken: libpq says so, or the failure came from libpq itself (no SQLSTATE), a connection
  // exception (class 08) or the server shutting the session down (57P01-57P03). libpq may
  // still call a connection OK right after the server went away.
  std::string state = failure.sqlstate();
  bool broken = PQstatus(c_) == CONNECTION_BAD || state.empty() || state.rfind("08", 0) == 0 ||
                state.rfind("57P0", 0) == 0;
  if (!allow_reconnect_ || !broken) return false;
  PQreset(c_);
  if (PQstatus(c_) != CONNECTION_OK) return false;
  prepared_.clear();  // the new session has none of them
  if (on_reconnect_) on_reconnect_();
  return true;
}

void Connection::run(const std::string& sql) {
  // With several statements, PQexec stops at the first that fails and returns its error.
  bool idle = !in_transaction();
  Result result(PQexec(c_, sql.c_str()));
  if (result.ok()) return;
  if (idle && reconnected(result)) {
    Result again(PQexec(c_, sql.c_str()));
    if (again.ok()) return;
    throw Error("PostgreSQL at " + where_ + ": " + again.error(c_));
  }
  throw Error("PostgreSQL at " + where_ + ": " + result.error(c_));
}

bool Connection::notified() {
  // A connection that cannot read has missed whatever was sent: as good as told.
  if (!PQconsumeInput(c_)) return true;
  bool any = false;
  while (PGnotify* n = PQnotifies(c_)) {
    any = true;
    PQfreemem(n);
  }
  return any;
}

bool Connection::in_transaction() const {
  // UNKNOWN is a broken connection: no transaction of ours is open on it any more.
  PGTransactionStatusType t = PQtransactionStatus(c_);
  return t == PQTRANS_ACTIVE || t == PQTRANS_INTRANS || t == PQTRANS_INERROR;
}

Transaction::~Transaction() {
  if (done_) return;
  try {
    c_.run("ROLLBACK");
  } catch (const Error&) {
    // A broken connection has rolled back by itself.
  }
}

void Transaction::commit() {
  c_.run("COMMIT");
  done_ = true;
}

std::string with_options(const std::string& conninfo,
                         const std::vector<std::pair<std::string, std::string>>& options) {
  std::string out = conninfo;
  bool url = out.rfind("postgres://", 0) == 0 || out.rfind("postgresql://", 0) == 0;
  for (const auto& [name, value] : options) {
    if (url) {
      out += out.find('?') == std::string::npos ? '?' : '&';
    } else if (!out.empty()) {
      out += ' ';
    }
    out += name;
    out += '=';
    out += value;
  }
  return out;
}

std::string text_array(const std::vector<std::string>& items, bool empty_is_null) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    if (empty_is_null && items[i].empty()) {
      out += "NULL";
      continue;
    }
    out += '"';
    for (char ch : items[i]) {
      if (ch == '"' || ch == '\\') out += '\\';
      out += ch;
    }
    out += '"';
  }
  out += '}';
  return out;
}

int64_t binary_int(std::string_view bytes) {
  if (bytes.size() != 4 && bytes.size() != 8)
    throw Error("unexpected integer of " + std::to_string(bytes.size()) + " bytes from the store");
  uint64_t v = 0;
  for (unsigned char ch : bytes) v = (v << 8) | ch;
  return bytes.size() == 4 ? static_cast<int32_t>(v) : static_cast<int64_t>(v);
}

}  // namespace pf::pg
