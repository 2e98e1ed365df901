// Which process runs each bot when several share one state store (replicas behind a load
// balancer, or two `pilotfish bridge` started by mistake): a bot's event stream is held by
// exactly one of them, and when that one dies another takes the bot over. On PostgreSQL the
// lease is a session advisory lock on a connection of its own, so the server lets go of it the
// moment the holder's session ends (a crash, kill -9, a network break seen by TCP keepalives);
// on a SQLite file it is an flock(2) on a file beside it, let go when the process ends.
//
// Threads: one thread at a time (the bridge's network thread). Calls are short and blocking,
// as the state store's are. Errors never escape: a lease that cannot be checked is not held.
#pragma once

#include <memory>
#include <string>

namespace pf {

class BotLease {
 public:
  virtual ~BotLease() = default;
  // Takes the bot named by key ("platform:bot") if nobody holds it, without waiting; true when
  // this process holds it now (taking it again is a no-op).
  virtual bool try_acquire(const std::string& key) = 0;
  // Whether a bot taken before is still held. False once the lease was lost (its database
  // session ended): the caller must stop acting for the bot at once, since another process
  // may hold it now.
  virtual bool still_held(const std::string& key) = 0;
  // Lets go of the bot (idempotent).
  virtual void release(const std::string& key) = 0;
};

// The lease for a state store's location (a PostgreSQL URL or a SQLite file path, as
// open_state_store takes it). ":memory:" is one process's only: every bot is held. Throws
// pf::Error only when a lock file's folder cannot be made.
std::unique_ptr<BotLease> open_bot_lease(const std::string& location);

}  // namespace pf
