// Model fallback: stream from the first model of a chain that can serve. A model is passed over
// only when it fails with ModelUnavailableError (capacity, rate limit, unknown model, no first
// token in time) before producing anything; once tokens have flowed, its errors are final.
#pragma once

#include <functional>
#include <string>
#include <vector>
#include "net/awaitable.h"

#include "llm/chat.h"

namespace pf {

struct FallbackResult {
  std::string model_id;              // the model that answered
  std::vector<std::string> skipped;  // "model: reason" for each model passed over
};

// chain: "provider:model" ids, first choice first (duplicates are tried once). Throws the last
// model's error when none could serve, pf::ConfigError for a chain that names no usable model.
FallbackResult stream_with_fallback(const Config& config, const std::vector<std::string>& chain,
                                    const ChatRequest& request,
                                    const std::function<bool(const ChatEvent&)>& on_event,
                                    const ChatOptions& options = {});
boost::asio::awaitable<FallbackResult> async_stream_with_fallback(
    const Config& config, const std::vector<std::string>& chain, const ChatRequest& request,
    const std::function<bool(const ChatEvent&)>& on_event, const ChatOptions& options = {});

}  // namespace pf
