// Signed approval ids (see tool_approval.h).
#include "api/tool_approval.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "core/error.h"
#include "core/json.h"

namespace pf {

ApprovalSigner::ApprovalSigner() : key_(32, '\0') {
  if (RAND_bytes(reinterpret_cast<unsigned char*>(key_.data()), static_cast<int>(key_.size())) != 1)
    throw Error("cannot make a key for tool approvals: the system's random source failed");
}

std::string ApprovalSigner::sign(const ToolCall& call) const {
  // The arguments as JSON, re-serialised: the client echoes them back parsed.
  nlohmann::json args = parse_json(call.arguments);
  std::string message = call.id + '\0' + call.name + '\0' + (args.is_discarded() ? call.arguments : args.dump());
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &len);
  static const char* hex = "0123456789abcdef";
  std::string out = "pfa_";
  for (unsigned int i = 0; i < 16 && i < len; ++i) {
    out += hex[mac[i] >> 4];
    out += hex[mac[i] & 15];
  }
  return out;
}

bool ApprovalSigner::verify(const std::string& approval_id, const ToolCall& call) const {
  std::string expected = sign(call);
  return approval_id.size() == expected.size() &&
         CRYPTO_memcmp(approval_id.data(), expected.data(), expected.size()) == 0;
}

}  // namespace pf
