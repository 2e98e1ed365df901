// The tests' PostgreSQL server (see pg_server.h).
#include "pg_server.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "test_util.h"

namespace pf::test {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

PostgresServer& PostgresServer::shared() {
  static PostgresServer server;
  return server;
}

PostgresServer::PostgresServer() {
  bin_ = "/usr/lib/postgresql/15/bin";
  if (::access((bin_ + "/initdb").c_str(), X_OK) != 0)
    throw std::runtime_error("no PostgreSQL 15 at " + bin_ + " (scripts/install-deps.sh installs it)");
  char tmpl[] = "/tmp/pf-pg-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  as_postgres_ = ::geteuid() == 0;
  if (as_postgres_ && shell("chown postgres " + dir_) != 0)
    throw std::runtime_error("cannot give " + dir_ + " to the postgres user");
  std::string init = (as_postgres_ ? "runuser -u postgres -- " : "") + bin_ + "/initdb -D " + dir_ +
                     "/data -A trust -U pilotfish --no-sync -E UTF8 > " + dir_ + "/initdb.log 2>&1";
  if (shell(init) != 0) throw std::runtime_error("initdb failed:\n" + slurp(dir_ + "/initdb.log"));
  start();
}

void PostgresServer::start() {
  std::string cmd = (as_postgres_ ? "runuser -u postgres -- " : "") + bin_ + "/pg_ctl -D " + dir_ +
                    "/data -o \"-k " + dir_ + " -c listen_addresses='' -p 5432 -c fsync=off\" -l " +
                    dir_ + "/server.log -w start > /dev/null 2>&1";
  if (shell(cmd) != 0) throw std::runtime_error("PostgreSQL did not start:\n" + slurp(dir_ + "/server.log"));
}

void PostgresServer::stop() {
  shell((as_postgres_ ? "runuser -u postgres -- " : "") + bin_ + "/pg_ctl -D " + dir_ +
        "/data -m immediate stop > /dev/null 2>&1");
}

PostgresServer::~PostgresServer() {
  stop();
  shell("rm -rf " + dir_);
}

std::string PostgresServer::url(const std::string& name) const {
  return "postgresql://pilotfish@/" + name + "?host=" + dir_;
}

std::string PostgresServer::psql(const std::string& name, const std::string& sql) const {
  CommandResult r = run({"psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", url(name), "-c", sql});
  if (r.exit_code != 0) throw std::runtime_error("psql: " + r.err);
  return r.out;
}

std::string PostgresServer::new_database(std::string* out_name) {
  std::string name = "t";
  name += std::to_string(::getpid());
  name += "_";
  name += std::to_string(next_db_++);
  psql("postgres", std::string("CREATE DATABASE ") + name);
  if (out_name) *out_name = name;
  return url(name);
}

}  // namespace pf::test
