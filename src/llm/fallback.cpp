// Fallback over a chain of chat models (see fallback.h).
#include "llm/fallback.h"

#include <set>

#include "core/log.h"
#include "net/run_sync.h"

namespace pf {

boost::asio::awaitable<FallbackResult> async_stream_with_fallback(
    const Config& config, const std::vector<std::string>& chain, const ChatRequest& request,
    const std::function<bool(const ChatEvent&)>& on_event, const ChatOptions& options) {
  FallbackResult result;
  std::set<std::string> tried;
  std::string last_error = "no chat model is configured";
  for (const std::string& id : chain) {
    if (id.empty() || !tried.insert(id).second) continue;
    std::unique_ptr<ChatModel> model;
    try {
      model = make_chat_model(config, id, options);
    } catch (const ConfigError& e) {
      result.skipped.push_back(id + ": " + e.what());
      last_error = e.what();
      continue;
    }
    std::string unavailable;
    try {
      co_await model->async_stream(request, on_event);
    } catch (const ModelUnavailableError& e) {
      unavailable = e.what();
    }
    if (unavailable.empty()) {
      result.model_id = id;
      co_return result;
    }
    log::warn("llm", unavailable + "; trying the next model");
    result.skipped.push_back(id + ": " + unavailable);
    last_error = unavailable;
  }
  throw Error(last_error);
}

FallbackResult stream_with_fallback(const Config& config, const std::vector<std::string>& chain,
                                    const ChatRequest& request,
                                    const std::function<bool(const ChatEvent&)>& on_event,
                                    const ChatOptions& options) {
  return run_sync(async_stream_with_fallback(config, chain, request, on_event, options));
}

}  // namespace pf
