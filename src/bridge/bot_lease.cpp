// The bot leases (see bot_lease.h): PostgreSQL advisory locks, or flock(2) on files.
#include "bridge/bot_lease.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>

#include "core/error.h"
#include "core/hash.h"
#include "core/log.h"
#include "store/pg_util.h"
#include "store/store.h"

namespace pf {
namespace {

// The advisory lock key of a bot: its name hashed to 32 bits. Two bots that collide are held
// together by whichever process takes the first: never by two processes at once.
int32_t lock_key(const std::string& key) { return static_cast<int32_t>(hash64(key)); }

class PgLease : public BotLease {
 public:
  // The lease's session must notice a dead peer: keepalives on both sides (the server's
  // settings are the session's to change) and a bound on unacknowledged writes, so a check on
  // a broken network fails in seconds rather than blocking for minutes.
  explicit PgLease(const std::string& conninfo)
      : conninfo_(pg::with_options(conninfo, {{"keepalives", "1"},
                                              {"keepalives_idle", "5"},
                                              {"keepalives_interval", "2"},
                                              {"keepalives_count", "3"},
                                              {"tcp_user_timeout", "10000"},
                                              {"connect_timeout", "5"}})) {}

  bool try_acquire(const std::string& key) override {
    if (held_.count(key)) return true;
    try {
      pg::Connection& c = connection();
      auto r = c.exec("SELECT pg_try_advisory_lock($1::int, $2::int)",
                      {pg::Param::number(pg::kPgBotLeaseClass), pg::Param::number(lock_key(key))});
      if (r.view(0, 0) != "t") return false;
      held_.insert(key);
      // The locks live in this session: a new one would not hold them.
      c.allow_reconnect(false);
      return true;
    } catch (const Error& e) {
      log::warn("bridge", std::string("cannot take the lease of ") + key + ": " + e.what());
      lost();
      return false;
    }
  }

  bool still_held(const std::string& key) override {
    if (!held_.count(key)) return false;
    try {
      connection().exec("SELECT 1");
      return true;
    } catch (const Error& e) {
      log::warn("bridge", std::string("the bot leases' database session was lost: ") + e.what());
      lost();
      return false;
    }
  }

  void release(const std::string& key) override {
    if (!held_.erase(key)) return;
    try {
      connection().exec("SELECT pg_advisory_unlock($1::int, $2::int)",
                        {pg::Param::number(pg::kPgBotLeaseClass), pg::Param::number(lock_key(key))});
    } catch (const Error&) {
      lost();  // the session, and every lock in it, is gone anyway
      return;
    }
    if (held_.empty()) c_->allow_reconnect(true);
  }

 private:
  pg::Connection& connection() {
    if (!c_) {
      c_ = std::make_unique<pg::Connection>(conninfo_);
      c_->run("SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 2; "
              "SET tcp_keepalives_count = 3; SET application_name = 'pilotfish bridge lease'");
    }
    return *c_;
  }
  // Every lock went with the session: start afresh on the next call.
  void lost() {
    held_.clear();
    c_.reset();
  }

  std::string conninfo_;
  std::unique_ptr<pg::Connection> c_;
  std::set<std::string> held_;
};

class FileLease : public BotLease {
 public:
  explicit FileLease(std::string state_path) : base_(std::move(state_path)) {}
  ~FileLease() override {
    for (auto& [key, fd] : fds_) ::close(fd);
  }

  bool try_acquire(const std::string& key) override {
    if (fds_.count(key)) return true;
    std::string path = base_ + ".lease-" + hash_hex(key).substr(0, 16);
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
      log::warn("bridge", "cannot open the lease file " + path);
      return false;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd);
      return false;
    }
    fds_[key] = fd;
    return true;
  }
  // An flock lasts as long as the descriptor: nothing can take it from a live process.
  bool still_held(const std::string& key) override { return fds_.count(key) > 0; }
  void release(const std::string& key) override {
    auto it = fds_.find(key);
    if (it == fds_.end()) return;
    ::close(it->second);
    fds_.erase(it);
  }

 private:
  std::string base_;
  std::map<std::string, int> fds_;
};

class SoleLease : public BotLease {
 public:
  bool try_acquire(const std::string& key) override { return held_.insert(key), true; }
  bool still_held(const std::string& key) override { return held_.count(key) > 0; }
  void release(const std::string& key) override { held_.erase(key); }

 private:
  std::set<std::string> held_;
};

}  // namespace

std::unique_ptr<BotLease> open_bot_lease(const std::string& location) {
  if (is_postgres_url(location)) return std::make_unique<PgLease>(location);
  if (location == ":memory:" || location.empty()) return std::make_unique<SoleLease>();
  std::filesystem::path parent = std::filesystem::path(location).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) throw Error("cannot make the folder of " + location + ": " + ec.message());
  return std::make_unique<FileLease>(location);
}

}  // namespace pf
