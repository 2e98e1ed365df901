// Registers the "pilotfish" FTS5 tokenizer (see code_tokenizer.h) on a SQLite connection.
#pragma once

#include <sqlite3.h>

namespace pf {

// Bump whenever the tokens produced for a text change: a store indexed by another version must
// rebuild its full-text index (a contentless FTS5 table can only delete what it re-tokenizes
// identically).
inline constexpr const char* kTokenizerVersion = "3";  // 3: Snowball english stems

// Throws pf::Error if this SQLite has no FTS5.
void register_code_tokenizer(sqlite3* db);

}  // namespace pf
