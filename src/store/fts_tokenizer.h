// Registers the "pilotfish" FTS5 tokenizer (see code_tokenizer.h) on a SQLite connection.
#pragma once

#include <sqlite3.h>

#include <string>
#include <string_view>

#include "store/chunk.h"

namespace pf {

// Bump whenever the tokens produced for a text change: a store indexed by another version must
// rebuild its full-text index (a contentless FTS5 table can only delete what it re-tokenizes
// identically).
inline constexpr const char* kTokenizerVersion = "3";  // 3: Snowball english stems

// Throws pf::Error if this SQLite has no FTS5.
void register_code_tokenizer(sqlite3* db);

// A chunk's tokens as the tokenizer gives them for its four text index columns (symbols, path,
// headings, body: the values of PF_FTS_VALUES in schema.h, body the plain content), encoded for
// Chunk::text_tokens, so that the indexer's workers tokenize and the store's one writer only
// replays (issue 25). "" where a value itself starts as an encoding does (the store then
// tokenizes the text). Thread-safe.
std::string encode_text_tokens(const Chunk& c, std::string_view plain_content);

// The four column values to give the text index for tokens from encode_text_tokens: the
// tokenizer replays them as the tokens of the texts they were made from. False, leaving out
// unspecified, where tokens is not such an encoding.
bool text_token_columns(std::string_view tokens, std::string_view out[4]);

}  // namespace pf
