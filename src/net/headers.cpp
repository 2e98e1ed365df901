// Header lookup (see headers.h).
#include "net/headers.h"

#include <cctype>

namespace pf {

std::string header_value(const HeaderFields& fields, std::string_view name) {
  for (const auto& [k, v] : fields) {
    if (k.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < k.size() && same; ++i)
      same = std::tolower(static_cast<unsigned char>(k[i])) ==
             std::tolower(static_cast<unsigned char>(name[i]));
    if (same) return v;
  }
  return {};
}

}  // namespace pf
