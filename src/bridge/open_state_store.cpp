// Which state store a location names (see state_store.h): a PostgreSQL URL is never a path. And
// the encoding of a list of names both stores share.
#include "bridge/pg_state_store.h"
#include "bridge/sqlite_state_store.h"
#include "core/json.h"
#include "store/store.h"

namespace pf {

std::unique_ptr<StateStore> open_state_store(const std::string& location) {
  if (is_postgres_url(location)) return open_pg_state_store(location);
  return open_sqlite_state_store(location);
}

std::string name_list_json(const std::vector<std::string>& names) {
  return nlohmann::json(names).dump();
}

std::vector<std::string> name_list(const std::string& json_text) {
  nlohmann::json j = parse_json(json_text);
  std::vector<std::string> out;
  if (!j.is_array()) return out;
  for (const nlohmann::json& n : j)
    if (n.is_string()) out.push_back(n.get<std::string>());
  return out;
}

}  // namespace pf
