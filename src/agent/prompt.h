// Prompt assembly: the system prompt and the retrieved context blocks the model answers from.
#pragma once

#include <string>
#include <vector>

#include "search/lexical.h"

namespace pf {

// The longest run of backticks in text, plus one (at least three): a fence no chunk content can
// close early, however many fences the chunk holds itself.
std::string fence_for(const std::string& text);

// "[i] File: path (Lstart-Lend)" then the content in a fence that the content cannot break.
std::string context_block(int index, const SearchResult& result);

// The system prompt: who pilotfish is, how to cite, the transport's instructions (the chat
// bridge's channel context, AGENTS.md, memory; may be empty), and the retrieved context.
std::string system_prompt(const std::vector<SearchResult>& context,
                          const std::string& instructions = {});

}  // namespace pf
