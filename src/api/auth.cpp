// API keys (see auth.h).
#include "api/auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cctype>

#include "core/text.h"

namespace pf {

std::string sha256_hex(std::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(text.data(), text.size(), digest, &len, EVP_sha256(), nullptr);
  return hex_encode(std::string_view(reinterpret_cast<const char*>(digest), len));
}

std::optional<Principal> ApiKeys::authenticate(std::string_view authorization) const {
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size()) return std::nullopt;
  for (size_t i = 0; i < kScheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i])
      return std::nullopt;
  std::string_view key = authorization.substr(kScheme.size());
  while (!key.empty() && key.front() == ' ') key.remove_prefix(1);
  while (!key.empty() && key.back() == ' ') key.remove_suffix(1);
  if (key.empty()) return std::nullopt;
  std::string hash = sha256_hex(key);
  std::optional<Principal> found;
  // Every key is compared, so the time taken does not say which one nearly matched.
  for (const ApiKeyConfig& k : keys_)
    if (k.sha256_hex.size() == hash.size() &&
        CRYPTO_memcmp(k.sha256_hex.data(), hash.data(), hash.size()) == 0 && !found)
      found = Principal{k.name, k.role};
  return found;
}

}  // namespace pf
