// Adapter from for_each_code_token to FTS5's fts5_tokenizer C interface. Documents are split
// into parts (colocated with their word, so they do not change document length) and every token
// is indexed as its Porter stem; queries are prepared (and stemmed) by search/query.cpp and
// tokenized without splitting.
#include "store/fts_tokenizer.h"

#include <sqlite3.h>

#include <string>

#include "core/error.h"
#include "store/code_tokenizer.h"
#include "store/sqlite_util.h"
#include "store/stemmer.h"

namespace pf {
namespace {

struct Tokenizer {};

int tok_create(void*, const char**, int, Fts5Tokenizer** out) {
  *out = reinterpret_cast<Fts5Tokenizer*>(new Tokenizer);
  return SQLITE_OK;
}

void tok_delete(Fts5Tokenizer* t) {
  delete reinterpret_cast<Tokenizer*>(t);
}

int tok_tokenize(Fts5Tokenizer*, void* ctx, int flags, const char* text, int n,
                 int (*x_token)(void*, int, const char*, int, int, int)) {
  const bool split = (flags & FTS5_TOKENIZE_DOCUMENT) != 0;
  int rc = SQLITE_OK;
  // Queries search stems only (search/query.cpp), so documents index each word and part as its
  // stem and nothing else: the unstemmed form would never be looked up.
  StemBuffer stem;
  for_each_code_token(std::string_view(text, static_cast<size_t>(n)), split,
                      [&](std::string_view tok, bool is_part, size_t begin, size_t end) {
                        if (rc != SQLITE_OK) return;
                        if (split) tok = stem_word(tok, stem);
                        rc = x_token(ctx, is_part ? FTS5_TOKEN_COLOCATED : 0, tok.data(),
                                     static_cast<int>(tok.size()), static_cast<int>(begin),
                                     static_cast<int>(end));
                      });
  return rc;
}

}  // namespace

void register_code_tokenizer(sqlite3* db) {
  fts5_api* api = sqlite::fts5(db);
  static fts5_tokenizer tokenizer = {tok_create, tok_delete, tok_tokenize};
  if (api->xCreateTokenizer(api, "pilotfish", nullptr, &tokenizer, nullptr) != SQLITE_OK)
    throw Error("cannot register the pilotfish FTS5 tokenizer");
}

}  // namespace pf
