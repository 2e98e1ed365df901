// The bridge's state in one SQLite file (WAL, so a reader never waits on the writer; versioned
// migrations, each applied once in its own transaction). See state_store.h for the contract.
#pragma once

#include <memory>
#include <string>

#include "bridge/state_store.h"

namespace pf {

// Opens (creating) the file and brings its schema up to date. Throws pf::Error when the file
// cannot be opened, is not a state store, or was written by a newer pilotfish.
std::unique_ptr<StateStore> open_sqlite_state_store(const std::string& path);

}  // namespace pf
