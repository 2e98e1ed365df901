// An InboundMessage as JSON, so the state store can keep a post until it is answered and a
// restart can pick it up as it came.
#pragma once

#include <optional>
#include <string>

#include "chat/channel_adapter.h"

namespace pf {

std::string inbound_to_json(const InboundMessage& message);
// nullopt for text that is not such a document (never throws).
std::optional<InboundMessage> inbound_from_json(const std::string& text);

}  // namespace pf
