// Internal to the store: opening the PostgreSQL store (pg_store.cpp); callers use open_store.
#pragma once

#include <memory>
#include <string>

#include "store/store.h"

namespace pf {

namespace pg {
class Connection;
}

// Creates or migrates the schema on c (pg_schema.cpp), one replica at a time: the others wait on
// the migration lock, then find nothing to do. create false: an empty database is a UsageError.
// Throws pf::Error for a database that holds another application's copilot_code_chunks or a
// newer schema.
void migrate_pg(pg::Connection& c, bool create);

// The store in the PostgreSQL database conninfo names (a postgres:// URL or libpq key=value
// pairs), its schema created or migrated (kReadWrite) under an advisory lock. Throws pf::Error
// naming the server (never its password) when it cannot be reached, UsageError when the store is
// empty and mode is kReadOnly.
std::unique_ptr<Store> open_pg_store(const std::string& conninfo, OpenMode mode);

}  // namespace pf
