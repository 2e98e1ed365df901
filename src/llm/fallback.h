// Model fallback: stream from the first model of a chain that can serve. A model is passed over
// only when it fails with ModelUnavailableError (capacity, rate limit, unknown model, no first
// token in time) before producing anything; once tokens have flowed, its errors are final.
//
// The chain: the chosen model, the configured defaults.fallbackModels, then a built-in chain of
// the same provider's configured models — first the known successors and siblings of the model
// (claude-sonnet-4.6 -> sonnet-4.5 -> haiku-4.5, gpt-5.4 -> 5.2 -> 5.1, o3 -> o4-mini, ...), then
// the rest of its family, newest first. Only models configured under the provider are ever
// tried: an operator decides what may be billed.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "llm/chat.h"
#include "net/awaitable.h"

namespace pf {

// The chain for a first choice ("provider:model"), duplicates removed.
std::vector<std::string> fallback_chain(const Config& config, const std::string& first);

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
