// libFuzzer entry point: the Mattermost WebSocket frame parser and the stored-message decoder
// on arbitrary bytes (the event stream is untrusted input).
#include <cstddef>
#include <cstdint>
#include <string>

#include "chat/inbound_json.h"
#include "chat/mattermost/mattermost_events.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  (void)pf::parse_mattermost_frame(text);
  std::string error;
  (void)pf::parse_mattermost_post(text, &error);
  (void)pf::inbound_from_json(text);
  return 0;
}
