// The `ask_user` tool: the model asks the person it works for a question (optionally with
// choices) and goes on with the answer. The front end answers it, not the registry: the chat
// bridge posts the question and takes the next message as the answer, `pilotfish ask` asks on
// the terminal, and the HTTP chat route hands it to an AI SDK client as a client-side tool (for
// clients that opt in). This unit holds what they share: the schema, the arguments' rules, the
// question as posted, and the results the model reads.
//
// Threads: plain values and functions.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agent/tool_registry.h"

namespace pf {

inline constexpr const char* kAskUserTool = "ask_user";

struct UserQuestion {
  std::string question;              // 1-2,000 characters
  std::vector<std::string> choices;  // at most 10, each 1-200 characters; empty: free text
};

// The registry entry: the schema the model is offered. Its run() only refuses (the front end
// answers the call before it would run).
ToolEntry ask_user_tool();

// The call's arguments read: nullopt with *error for JSON that is not an object, a missing or
// empty question, or choices that are not a list of short non-empty strings (limits above).
std::optional<UserQuestion> parse_user_question(const std::string& arguments, std::string* error);

// The question as a chat post or terminal text: "❓ question", then the choices numbered, then
// how to answer.
std::string question_text(const UserQuestion& q);

// What a reply says: a choice's number ("2", "2.", "#2") or its exact text (case-insensitive)
// gives that choice; anything else is the reply itself, trimmed.
std::string chosen_answer(const UserQuestion& q, const std::string& reply);

// The results the model reads: the answer (and who gave it, when known), or that nobody replied
// and why.
nlohmann::json user_answer(const std::string& answer, const std::string& by);
nlohmann::json no_user_answer(const std::string& why);

}  // namespace pf
