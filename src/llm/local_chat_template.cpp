// A local model's chat template through llama.cpp's common/chat (see local_chat_template.h).
// llama.cpp's headers carry their own JSON (common_json, behind a pimpl), so they sit beside
// ours in this file without meeting.
#ifdef PILOTFISH_HAVE_LLAMA
#include "llm/local_chat_template.h"

#include <chat.h>
#include <common.h>
#include <log.h>

#include <algorithm>
#include <exception>
#include <mutex>

#include "core/error.h"

namespace pf {

struct ReplyParser::Impl {
  common_chat_parser_params params;
  std::string raw;   // the reply so far
  size_t given = 0;  // characters of its text content handed out

  // The text content parsed from raw (a partial reply when partial); empty when it does not
  // parse yet.
  common_chat_msg parse(bool partial) const {
    try {
      return common_chat_parse(raw, partial, params);
    } catch (const std::exception&) {
      common_chat_msg none;
      if (!partial) none.content = raw;  // a finished reply that does not parse is text
      return none;
    }
  }

  // What of content is new since the last call (nothing when the parser took text back).
  std::string new_text(const std::string& content) {
    if (content.size() <= given) return {};
    std::string out = content.substr(given);
    given = content.size();
    return out;
  }
};

ReplyParser::ReplyParser() = default;
ReplyParser::ReplyParser(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ReplyParser::~ReplyParser() = default;
ReplyParser::ReplyParser(ReplyParser&&) noexcept = default;
ReplyParser& ReplyParser::operator=(ReplyParser&&) noexcept = default;

std::string ReplyParser::feed(const std::string& piece) {
  if (!impl_) return piece;
  impl_->raw += piece;
  return impl_->new_text(impl_->parse(true).content);
}

std::string ReplyParser::finish(std::vector<ToolCall>& calls) {
  if (!impl_) return {};
  common_chat_msg msg = impl_->parse(false);
  for (const common_chat_tool_call& c : msg.tool_calls) {
    std::string id = c.id.empty() ? "call_" + std::to_string(calls.size() + 1) : c.id;
    calls.push_back(ToolCall{id, c.name, c.arguments.empty() ? "{}" : c.arguments});
  }
  return impl_->new_text(msg.content);
}

std::string StopText::feed(const std::string& text) {
  if (stopped_) return {};
  held_ += text;
  size_t cut = std::string::npos;
  for (const std::string& s : stops_)
    if (!s.empty()) cut = std::min(cut, held_.find(s));
  if (cut != std::string::npos) {
    stopped_ = true;
    std::string out = held_.substr(0, cut);
    held_.clear();
    return out;
  }
  // Hold back the longest tail that a stop starts with.
  size_t keep = 0;
  for (const std::string& s : stops_)
    for (size_t n = std::min(s.size() - (s.empty() ? 0 : 1), held_.size()); n > keep; --n)
      if (held_.compare(held_.size() - n, n, s, 0, n) == 0) {
        keep = n;
        break;
      }
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string StopText::rest() {
  std::string out;
  out.swap(held_);
  return out;
}

std::vector<llama_token> generation_prompt_tokens(const llama_vocab* vocab,
                                                  const std::vector<llama_token>& prompt,
                                                  const std::string& generation_prompt) {
  // The prompt's last tokens, as the whole prompt was tokenized: tokenized alone, the generation
  // prompt may come out otherwise (SentencePiece puts a space before its first token).
  std::string tail;
  for (size_t n = 1; n <= prompt.size() && tail.size() < generation_prompt.size(); ++n) {
    tail.insert(0, common_token_to_piece(vocab, prompt[prompt.size() - n], true));
    if (tail == generation_prompt)
      return std::vector<llama_token>(prompt.end() - static_cast<std::ptrdiff_t>(n), prompt.end());
  }
  return {};
}

struct LocalChatTemplate::Templates {
  common_chat_templates_ptr ptr;
};

LocalChatTemplate::LocalChatTemplate(const llama_model* model, const std::string& which)
    : model_(model), templates_(std::make_unique<Templates>()) {
  // common/chat's own log writes to stderr; what it would say comes to us as exceptions.
  static std::once_flag quiet;
  std::call_once(quiet, [] { common_log_set_verbosity_thold(LOG_LEVEL_OUTPUT); });
  try {
    templates_->ptr = common_chat_templates_init(model, which);
  } catch (const std::exception& e) {
    throw Error(std::string("the model's chat template cannot be read: ") + e.what());
  }
  if (!templates_->ptr) throw Error("the model's chat template cannot be read");
  auto caps = common_chat_templates_get_caps(templates_->ptr.get());
  supports_tools_ = caps["supports_tools"] && caps["supports_tool_calls"];
}

LocalChatTemplate::~LocalChatTemplate() = default;

namespace {

std::vector<common_chat_msg> template_messages(const std::vector<ChatMessage>& messages) {
  std::vector<common_chat_msg> out;
  out.reserve(messages.size());
  for (const ChatMessage& m : messages) {
    common_chat_msg msg;
    msg.role = m.role;
    msg.content = m.content;
    msg.tool_call_id = m.tool_call_id;
    for (const ToolCall& c : m.tool_calls)
      msg.tool_calls.push_back({c.name, c.arguments.empty() ? "{}" : c.arguments, c.id});
    out.push_back(std::move(msg));
  }
  return out;
}

common_chat_tool_choice template_choice(ToolChoice choice) {
  switch (choice) {
    case ToolChoice::kRequired: return COMMON_CHAT_TOOL_CHOICE_REQUIRED;
    case ToolChoice::kNone: return COMMON_CHAT_TOOL_CHOICE_NONE;
    case ToolChoice::kAuto: break;
  }
  return COMMON_CHAT_TOOL_CHOICE_AUTO;
}

// The triggers of a lazy grammar as llama-server reads them: a trigger word that is one
// preserved token becomes that token, any other word a pattern matching it literally.
void add_triggers(const llama_vocab* vocab, const common_chat_params& params,
                  TemplatedPrompt& out) {
  for (const common_grammar_trigger& t : params.grammar_triggers) {
    switch (t.type) {
      case COMMON_GRAMMAR_TRIGGER_TYPE_WORD: {
        auto ids = common_tokenize(vocab, t.value, false, true);
        if (ids.size() == 1 && out.preserved_tokens.count(ids[0]))
          out.trigger_tokens.push_back(ids[0]);
        else
          out.trigger_patterns.push_back(regex_escape(t.value));
        break;
      }
      case COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN: out.trigger_patterns.push_back(t.value); break;
      case COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN_FULL: {
        std::string p = t.value.empty() ? "^$" : t.value;
        if (p.front() != '^') p = "^" + p;
        if (p.back() != '$') p += "$";
        out.trigger_patterns.push_back(p);
        break;
      }
      case COMMON_GRAMMAR_TRIGGER_TYPE_TOKEN: out.trigger_tokens.push_back(t.token); break;
    }
  }
}

}  // namespace

TemplatedPrompt LocalChatTemplate::render(const ChatRequest& request, bool with_tools) const {
  common_chat_templates_inputs inputs;
  inputs.messages = template_messages(request.messages);
  inputs.add_generation_prompt = true;
  if (with_tools && request.tools) {
    for (const ToolSpec& t : *request.tools)
      inputs.tools.push_back({t.name, t.description, t.parameters.dump()});
    inputs.tool_choice = template_choice(request.tool_choice);
    inputs.parallel_tool_calls = true;
  }
  common_chat_params params;
  auto parser = std::make_unique<ReplyParser::Impl>();
  try {
    params = common_chat_templates_apply(templates_->ptr.get(), inputs);
    parser->params = common_chat_parser_params(params);
    if (!params.parser.empty()) parser->params.parser.load(params.parser);
  } catch (const std::exception& e) {
    throw Error(std::string("the chat template cannot be applied: ") + e.what());
  }
  TemplatedPrompt out;
  out.text = std::move(params.prompt);
  out.stops = params.additional_stops;
  if (inputs.tools.empty()) return out;  // plain text: no grammar, nothing to parse
  const llama_vocab* vocab = llama_model_get_vocab(model_);
  for (const std::string& t : params.preserved_tokens) {
    auto ids = common_tokenize(vocab, t, false, true);
    if (ids.size() == 1) out.preserved_tokens.insert(ids[0]);
  }
  out.grammar = params.grammar;
  out.grammar_lazy = params.grammar_lazy;
  add_triggers(vocab, params, out);
  if (!out.grammar.empty() && !out.grammar_lazy) out.generation_prompt = params.generation_prompt;
  out.parser = ReplyParser(std::move(parser));
  return out;
}

}  // namespace pf

#endif  // PILOTFISH_HAVE_LLAMA
