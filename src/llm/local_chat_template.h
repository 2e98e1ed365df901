// Internal to llm: a local model's chat template, tools included, through llama.cpp's common/chat
// (the code llama-server runs): the prompt with the tools described the way the model's own
// template describes them, the grammar that keeps a tool call well formed while it is sampled,
// and the parser that takes the calls back out of what the model wrote, while it writes.
#pragma once

#include <llama.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "llm/chat.h"

namespace pf {

// The model's reply as it is written, split into text for the user and tool calls (the calls'
// markup never reaches the text). One generation's; one thread at a time.
class ReplyParser {
 public:
  // Without tools: every piece is text.
  ReplyParser();
  ~ReplyParser();
  ReplyParser(ReplyParser&&) noexcept;
  ReplyParser& operator=(ReplyParser&&) noexcept;
  // piece (whole UTF-8 characters) appended to the reply; returns the text the user may see now
  // (what might still turn out to be a call is held back).
  std::string feed(const std::string& piece);
  // The reply is complete: appends its tool calls (ids made up where the model wrote none) to
  // calls and returns the text not given out yet. A reply that does not parse is all text.
  std::string finish(std::vector<ToolCall>& calls);

  struct Impl;
  explicit ReplyParser(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;  // null: no tools
};

// Cuts a reply at the first of a template's stop strings: text goes through as it comes, except a
// tail that may be the start of a stop. One generation's; one thread at a time.
class StopText {
 public:
  explicit StopText(std::vector<std::string> stops) : stops_(std::move(stops)) {}
  // text appended; returns what may go on. Once a stop is seen, stopped() is true and the stop
  // and everything after it are dropped.
  std::string feed(const std::string& text);
  // The end of the reply: the tail held back (empty after a stop).
  std::string rest();
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  bool stopped_ = false;
};

// What one generation needs from the template.
struct TemplatedPrompt {
  std::string text;                           // the whole prompt, special tokens written as text
  std::string grammar;                        // GBNF that keeps tool calls well formed; or empty
  bool grammar_lazy = false;                  // constrain only once a trigger is written
  std::vector<std::string> trigger_patterns;  // regular expressions that start a lazy grammar
  std::vector<llama_token> trigger_tokens;    // tokens that start it
  std::set<llama_token> preserved_tokens;     // special tokens of the calls' markup, kept as text
  std::vector<std::string> stops;             // text that ends the reply (not part of it)
  // What the template put after the last message, when a strict grammar expects it first (see
  // generation_prompt_tokens).
  std::string generation_prompt;
  ReplyParser parser;
};

// The last tokens of prompt (tokenized whole) that spell generation_prompt, to feed a strict
// grammar that begins with it; empty when no tail of the prompt spells exactly that.
std::vector<llama_token> generation_prompt_tokens(const llama_vocab* vocab,
                                                  const std::vector<llama_token>& prompt,
                                                  const std::string& generation_prompt);

// One model's template. Any thread; render does not change it.
class LocalChatTemplate {
 public:
  // The template of model ("": the file's, ChatML when it has none; or "chatml"). model must
  // outlive this. Throws Error when llama.cpp cannot read the template.
  LocalChatTemplate(const llama_model* model, const std::string& which);
  ~LocalChatTemplate();
  // Whether the template describes tools to the model and writes their calls.
  bool supports_tools() const { return supports_tools_; }
  // The request's conversation (and its tools and tool_choice when with_tools) through the
  // template. Throws Error when the template cannot be applied to it.
  TemplatedPrompt render(const ChatRequest& request, bool with_tools) const;

 private:
  struct Templates;
  const llama_model* model_;
  std::unique_ptr<Templates> templates_;
  bool supports_tools_ = false;
};

}  // namespace pf
