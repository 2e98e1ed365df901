// Fallback over a chain of chat models (see fallback.h).
#include "llm/fallback.h"

#include <set>

#include "core/log.h"

namespace pf {

FallbackResult stream_with_fallback(const Config& config, const std::vector<std::string>& chain,
                                    const ChatRequest& request,
                                    const std::function<bool(const ChatEvent&)>& on_event,
                                    const ChatOptions& options) {
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
    try {
      model->stream(request, on_event);
      result.model_id = id;
      return result;
    } catch (const ModelUnavailableError& e) {
      log::warn("llm", std::string(e.what()) + "; trying the next model");
      result.skipped.push_back(id + ": " + e.what());
      last_error = e.what();
    }
  }
  throw Error(last_error);
}

}  // namespace pf
