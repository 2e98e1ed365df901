// Which state store a location names (see state_store.h): a PostgreSQL URL is never a path.
#include "bridge/pg_state_store.h"
#include "bridge/sqlite_state_store.h"
#include "store/store.h"

namespace pf {

std::unique_ptr<StateStore> open_state_store(const std::string& location) {
  if (is_postgres_url(location)) return open_pg_state_store(location);
  return open_sqlite_state_store(location);
}

}  // namespace pf
