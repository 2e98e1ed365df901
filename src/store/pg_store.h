// Internal to the store: opening the PostgreSQL store (pg_store.cpp); callers use open_store.
#pragma once

#include <memory>
#include <string>

#include "store/store.h"

namespace pf {

// The store in the PostgreSQL database conninfo names (a postgres:// URL or libpq key=value
// pairs), its schema created or migrated (kReadWrite) under an advisory lock. Throws pf::Error
// naming the server (never its password) when it cannot be reached, UsageError when the store is
// empty and mode is kReadOnly.
std::unique_ptr<Store> open_pg_store(const std::string& conninfo, OpenMode mode);

}  // namespace pf
