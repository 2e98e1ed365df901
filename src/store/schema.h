// Internal to the SQLite store: the versioned schema. Migrations run in order inside one
// transaction each; PRAGMA user_version records the last one applied.
#pragma once

#include <sqlite3.h>

namespace pf {

inline constexpr int kSchemaVersion = 8;
// 'PFSH': marks a SQLite file as a pilotfish store, so a foreign database is refused.
inline constexpr int kApplicationId = 0x50465348;

// Brings the schema up to kSchemaVersion. Throws pf::Error if the store is newer than this build.
// With create false, an empty file (no schema yet) is refused instead of initialised.
void migrate(sqlite3* db, bool create);

// Registers what the schema's SQL names on a connection: the "pilotfish" FTS5 tokenizer and
// pf_text (store/content_codec.h). Every connection that reads chunk content or deletes chunks
// needs it. Throws pf::Error if this SQLite has no FTS5.
void register_store_functions(sqlite3* db);

// The FTS5 column values (symbols, path, headings, body) of a chunk row named `row`, as SQL. The
// batch insert, the delete trigger and the rebuild must compute them identically: a contentless
// FTS5 table deletes by re-tokenizing the values it is given. The body is the content's text,
// decompressed where it is stored compressed.
#define PF_FTS_VALUES(row)                                                             \
  "trim(coalesce(" row ".functionName,'') || ' ' || coalesce(" row                     \
  ".className,'') || ' ' || coalesce(" row ".symbol,'')), " row ".path, coalesce(" row \
  ".heading_path,''), pf_text(" row ".content)"

}  // namespace pf
