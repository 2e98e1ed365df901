// Internal to llm/: what every streaming chat client shares (the OpenAI chat completions and
// Responses clients, Anthropic's): a StreamSession that forwards events, notices a cancel, and
// turns how the exchange ended into the ChatModel error contract; and the Responses API client's
// factory (responses_chat.cpp).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/log.h"
#include "llm/chat.h"
#include "llm/provider.h"
#include "net/http_client.h"
#include "net/sse.h"

namespace pf {

// What both providers' streams share: forwarding events (and noticing a cancel), then turning
// how the exchange ended into the ChatModel error contract: nothing streamed yet and the model
// cannot serve -> ModelUnavailableError (fallback may try another); anything else -> Error.
class StreamSession {
 public:
  StreamSession(const std::string& model_id, const std::function<bool(const ChatEvent&)>& on_event)
      : id_(model_id), on_event_(on_event) {}

  bool emit(const ChatEvent& e) {
    started_ = true;
    for (unsigned char c : e.text) chars_ += (c & 0xC0) != 0x80;  // code points, not bytes
    if (!on_event_(e)) cancelled_ = true;
    return !cancelled_;
  }
  void finished() { finished_ = true; }
  void fail(std::string message, bool unavailable = false) {
    failure_ = std::move(message);
    unavailable_ = unavailable;
  }

  // Sends req (moved out) and feeds the answer to sse; throws as the class comment says.
  boost::asio::awaitable<void> run(HttpRequest& req, SseParser& sse) {
    HttpResponse res;
    std::string broke;
    CancelSignal* cancel = req.cancel;
    try {
      res = co_await async_http_stream(std::move(req),
                                       [&](std::string_view bytes) { return sse.feed(bytes); });
    } catch (const NetError& e) {
      broke = e.what();
    }
    if (cancel && cancel->cancelled()) co_return;
    conclude(res, broke, sse);
  }

 private:
  // How the exchange ended, as the error contract says. Not part of the coroutine: its strings
  // would otherwise sit in the frame of every open stream.
  void conclude(const HttpResponse& res, const std::string& broke, const SseParser& sse) const {
    if (sse.overflowed())
      throw Error("model " + id_ + ": the stream sent an event of over " +
                  std::to_string(SseParser::kMaxEventBytes >> 20) + " MiB; stopped reading it");
    if (!broke.empty()) {
      if (!started_) throw ModelUnavailableError("model " + id_ + ": " + broke);
      log::warn("llm", "model " + id_ + ": the stream broke off after " + std::to_string(chars_) +
                           " characters: " + broke);
      throw StreamCutError(id_, chars_);
    }
    if (res.status / 100 != 2) {
      const std::string detail = provider_error_message(res.body);
      std::string msg = "model " + id_ + ": HTTP " + std::to_string(res.status) + ": " + detail;
      if (is_model_unavailable(res.status, detail)) {
        throw ModelUnavailableError(msg, static_cast<int>(requested_wait_ms(res.headers)));
      }
      throw Error(msg);
    }
    if (cancelled_) return;
    if (!failure_.empty()) {
      if (unavailable_ && !started_) throw ModelUnavailableError("model " + id_ + ": " + failure_);
      throw Error("model " + id_ + ": " + failure_);
    }
    if (!finished_) {
      // The server closed the stream without finishing: whatever arrived is all there is.
      if (!started_)
        throw ModelUnavailableError("model " + id_ + ": the stream ended before any answer");
      log::warn("llm", "model " + id_ + ": the stream closed without a finish after " +
                           std::to_string(chars_) + " characters");
      throw StreamCutError(id_, chars_);
    }
  }

  const std::string& id_;
  const std::function<bool(const ChatEvent&)>& on_event_;
  bool started_ = false, cancelled_ = false, finished_ = false, unavailable_ = false;
  size_t chars_ = 0;  // of text streamed so far
  std::string failure_;
};

// A streamed POST of body (JSON) to url with auth and the options' idle timeout, carrying the
// request's cancel and written hooks; request.sent is called once the body is built.
inline HttpRequest sse_request(const std::string& url, const ProviderAuth& auth,
                               const ChatOptions& options, const nlohmann::json& body,
                               const ChatRequest& request) {
  HttpRequest req;
  req.url = url;
  req.timeout = std::chrono::milliseconds(options.idle_timeout_ms);
  req.headers = {{"Content-Type", "application/json"}, {"Accept", "text/event-stream"}};
  if (!auth.header.empty()) req.headers.emplace_back(auth.header, auth.value);
  req.body = body.dump();
  if (request.sent) request.sent();
  req.cancel = request.cancel;
  req.written = request.written;
  return req;
}

// What an OpenAI-style client keeps of its model: the "provider:model" id, the name the wire
// gives it (an Azure deployment, or the provider's id), where its requests go and with what
// credential, its settings, and whether it takes a reasoning effort.
struct WireModel {
  std::string id, model, url;
  ProviderAuth auth;
  ChatOptions options;
  Sampling sampling;
  bool reasons = false;
};

// The OpenAI Responses API client (POST .../responses, stream: true; responses_chat.cpp).
std::unique_ptr<ChatModel> make_responses_chat(WireModel model);

}  // namespace pf
