// Registers the "pilotfish" FTS5 tokenizer (see code_tokenizer.h) on a SQLite connection.
#pragma once

#include <sqlite3.h>

namespace pf {

// Throws pf::Error if this SQLite has no FTS5.
void register_code_tokenizer(sqlite3* db);

}  // namespace pf
