// Which store a --db names (see store.h): a URL is never a path.
#include <regex>

#include "core/error.h"
#include "store/pg_store.h"
#include "store/store.h"

namespace pf {

bool is_postgres_url(const std::string& db) {
  return db.rfind("postgres://", 0) == 0 || db.rfind("postgresql://", 0) == 0;
}

std::unique_ptr<Store> open_store(const std::string& db, OpenMode mode) {
  if (is_postgres_url(db)) return open_pg_store(db, mode);
  static const std::regex url(R"(^[A-Za-z][A-Za-z0-9+.-]*://)");
  if (std::regex_search(db, url))
    throw UsageError("--db " + db.substr(0, db.find("://") + 3) +
                     "...: pilotfish stores live in PostgreSQL (postgres:// or postgresql://) or "
                     "in a SQLite file (a path); this URL is neither");
  return open_sqlite_store(db, mode);
}

}  // namespace pf
