// Who may call the API: bearer keys from the config, of which only SHA-256 hashes are stored,
// each with a role — `user` (chat, search) or `admin` (also re-indexing). Keys are compared by
// hash in constant time, so neither the file nor the timing gives a key away.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"

namespace pf {

struct Principal {
  std::string name;
  std::string role;
  bool admin() const { return role == "admin"; }
};

// Lower-case hex of the SHA-256 of text.
std::string sha256_hex(std::string_view text);

class ApiKeys {
 public:
  explicit ApiKeys(std::vector<ApiKeyConfig> keys) : keys_(std::move(keys)) {}

  // The key's holder for an "Authorization: Bearer <key>" header value; nullopt when the header
  // is missing, malformed or names no configured key.
  std::optional<Principal> authenticate(std::string_view authorization) const;
  bool empty() const { return keys_.empty(); }

 private:
  std::vector<ApiKeyConfig> keys_;
};

}  // namespace pf
