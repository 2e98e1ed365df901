// The OpenAI-compatible routes of `pilotfish serve` (see app.h): pilotfish as a model named
// "pilotfish" (or "pilotfish:<repository>"), whose answer is the whole pipeline: retrieval, the
// configured chat model with fallback, and the repository tools under the permission rules.
#include "api/app.h"

#include <algorithm>
#include <filesystem>

#include "agent/answer.h"
#include "api/api_error.h"
#include "api/openai_stream.h"
#include "core/log.h"
#include "core/text.h"
#include "llm/chat.h"

namespace pf {

std::vector<std::string> App::openai_model_ids() const {
  std::vector<std::string> ids = {"pilotfish"};
  if (repo_) ids.push_back("pilotfish:" + std::filesystem::path(repo_->root).filename().string());
  return ids;
}

asio::awaitable<int> App::openai_models(ServerResponse& res) {
  co_return co_await send_json(res, 200, openai_model_list(openai_model_ids()));
}

asio::awaitable<int> App::openai_chat(ServerRequest& req, ServerResponse& res, Principal who) {
  OpenAiChatInput input = parse_openai_chat_request(req.body, limits_);
  std::string().swap(req.body);
  HeaderFields().swap(req.headers);  // read (auth); a stream need not keep them
  std::vector<std::string> ids = openai_model_ids();
  if (std::find(ids.begin(), ids.end(), input.model) == ids.end()) {
    std::string offered;
    for (const std::string& id : ids) offered += (offered.empty() ? "" : ", ") + id;
    throw ApiError(404, "model_not_found", "the model \"" + input.model +
                                               "\" does not exist here; this server offers " +
                                               offered + " (GET /v1/models)");
  }
  AnswerOptions opt;
  opt.search = search_;
  opt.rewrite_query = retrieval_config(config_).rewrite;
  opt.tools = repo_ ? &tools_ : nullptr;
  opt.cancel = &res.client_gone();
  opt.chat_model = usable_chat_model("");
  std::unique_ptr<AuditTrail> audit = audit_trail(who);
  opt.before_tool = tool_gate(nullptr, audit.get());  // an OpenAI client cannot answer approvals
  opt.after_tool = [&audit](const ToolCall& call, const std::string& result) {
    audit->ran(call, result);
  };
  opt.trace = req.trace;
  opt.annotate_tool = [&audit](const ToolCall& call, Span& span) { audit->annotate(call, span); };
  OpenAiCompletion completion(input.model);
  if (input.stream) {
    // As for the AI SDK route: the stream opens before retrieval.
    res.begin_stream(200, openai_stream_headers(), ": ping\n\n");
    metrics_.stream_started();
    res.write(completion.start());
  }
  auto on_event = [&](const AnswerEvent& e) {
    std::string chunk = completion.on_event(e);
    return !input.stream || res.write(chunk);
  };
  AsyncGate::Permit setup = co_await setup_gate_.acquire();  // as on the AI SDK route
  opt.setup = &setup;
  std::string failure;
  try {
    co_await async_answer_question(runtime_.workspace(), config_, runtime_.embedder(),
                                   input.chat.question, input.chat.history, opt, on_event);
  } catch (const StreamCutError& e) {
    failure = input.stream ? e.what() : e.unshown();  // a whole reply shows no partial answer
  } catch (const Error& e) {
    failure = e.what();
  }
  if (!failure.empty()) log::error("agent", "answer failed: " + failure);
  // The log has the whole message; the client is not told where the providers live.
  std::string said = redact_urls(failure, "the provider");
  if (!input.stream) {
    if (!failure.empty()) throw ApiError(502, "answer_failed", said);
    if (!completion.finished()) co_return 499;  // the client went away
    co_return co_await send_json(res, 200, completion.whole());
  }
  std::string outcome = "completed";
  if (!failure.empty()) {
    res.write(completion.fail(said));
    outcome = "error";
  } else if (!completion.finished()) {
    outcome = "cancelled";
  }
  co_await res.end_stream();
  metrics_.stream_ended(outcome);
  co_return 200;
}

}  // namespace pf
