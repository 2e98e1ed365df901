// A real PostgreSQL 15 server for the tests of the PostgreSQL store: initdb in a temporary
// folder, listening only on a unix socket inside it (no port to collide with), as the
// `postgres` user when the tests run as root (PostgreSQL refuses root), stopped when the test
// process ends. Each test takes a database of its own.
#pragma once

#include <string>

namespace pf::test {

class PostgresServer {
 public:
  // The process's server, started on first use (about 1.5 s). Throws std::runtime_error, with
  // initdb's or the server's log, when it cannot start (PostgreSQL 15 is installed by
  // scripts/install-deps.sh).
  static PostgresServer& shared();
  ~PostgresServer();

  // A new empty database; returns its URL (postgresql://pilotfish@/NAME?host=SOCKET_DIR), and
  // its name in *name when given.
  std::string new_database(std::string* name = nullptr);
  // The URL of database name on this server.
  std::string url(const std::string& name) const;
  // Runs one SQL command through psql on database name; returns psql's stdout.
  std::string psql(const std::string& name, const std::string& sql) const;
  // Stops the server at once (as a crash would: pg_ctl -m immediate), or starts it again.
  void stop();
  void start();

 private:
  PostgresServer();
  std::string dir_, bin_;
  bool as_postgres_ = false;
  int next_db_ = 0;
};

}  // namespace pf::test
