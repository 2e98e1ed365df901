// AI SDK 6 tool approval over HTTP: the ids of approval requests are signed (HMAC-SHA256 over
// the call's id, tool and arguments, with a key made at start-up), so a client can only answer a
// call this server asked about, with the arguments it was shown. An approval does not survive a
// restart: the key goes with the process, and the call is then refused.
#pragma once

#include <string>

#include "llm/chat.h"

namespace pf {

class ApprovalSigner {
 public:
  ApprovalSigner();  // a fresh random key
  // "pfa_" and 32 hex digits.
  std::string sign(const ToolCall& call) const;
  bool verify(const std::string& approval_id, const ToolCall& call) const;

 private:
  std::string key_;
};

}  // namespace pf
