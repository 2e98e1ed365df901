// The bridge's state in PostgreSQL, for replicas that share it: the SQLite file's tables under a
// bridge_ prefix (so they can sit in the index store's database), versioned migrations run by
// one replica at a time under an advisory lock. See state_store.h for the contract.
#pragma once

#include <memory>
#include <string>

#include "bridge/state_store.h"

namespace pf {

// Connects to conninfo (a postgres:// URL or libpq key=value pairs) and brings the schema up to
// date. Throws pf::Error naming the server (never its password) when it cannot be reached, or
// when the schema was written by a newer pilotfish.
std::unique_ptr<StateStore> open_pg_state_store(const std::string& conninfo);

}  // namespace pf
