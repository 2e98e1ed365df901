// Internal to the SQLite store: what `pilotfish stats` counts in a store file, by SQL over its
// tables (chunks by type, language and embedding model, refusals, fallbacks, compressed rows).
// Scans every chunk row: for stats, never on a search's path.
#pragma once

#include <sqlite3.h>

#include "store/store.h"

namespace pf {

// Fills s's counts from db (borrowed; used from this thread only): everything but
// repositories and db_bytes, which the store adds. Throws pf::Error from SQLite.
void count_sqlite_store(sqlite3* db, StoreStats* s);

}  // namespace pf
