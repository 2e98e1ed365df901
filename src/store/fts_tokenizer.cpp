// Adapter from for_each_code_token to FTS5's fts5_tokenizer C interface. Documents are split
// into parts (colocated with their word, so they do not change document length) and every token
// is indexed as its Porter stem; queries are prepared (and stemmed) by search/query.cpp and
// tokenized without splitting. A document value that starts with kReplay is tokens made before
// (encode_text_tokens), replayed as they are: each a varint of (length << 1 | colocated), then
// its bytes.
#include "store/fts_tokenizer.h"

#include <sqlite3.h>

#include <cstring>
#include <string>

#include "core/error.h"
#include "store/code_tokenizer.h"
#include "store/sqlite_util.h"
#include "store/stemmer.h"

namespace pf {
namespace {

struct Tokenizer {};

// Text that starts so (a NUL past the 8 KiB the file filter looks at) is replayed too, when
// inserted and deleted alike; encode_text_tokens leaves such a chunk to the store's tokenizing.
constexpr std::string_view kReplay("\0pf\x01", 4);

// The tokens of one document value, as the tokenizer gives them, to f(token, colocated).
template <class F>
void document_tokens(std::string_view text, F&& f) {
  StemBuffer stem;
  for_each_code_token(text, true, [&](std::string_view tok, bool is_part, size_t, size_t) {
    f(stem_word(tok, stem), is_part);
  });
}

void put_varint(std::string* out, uint64_t v) {
  while (v >= 0x80) out->push_back(static_cast<char>((v & 0x7f) | 0x80)), v >>= 7;
  out->push_back(static_cast<char>(v));
}

bool get_varint(std::string_view s, size_t* at, uint64_t* v) {
  *v = 0;
  for (int shift = 0; *at < s.size() && shift < 64; shift += 7) {
    auto b = static_cast<unsigned char>(s[(*at)++]);
    *v |= uint64_t{b & 0x7fu} << shift;
    if (b < 0x80) return true;
  }
  return false;
}

// Replays an encoded value (past kReplay) to FTS5; stops at the first malformed token: one
// that runs past the value, or holds a NUL, which the tokenizer never makes and FTS5's pending
// index cuts short (it measures terms with strlen), so that deleting it would leave entries.
int replay(std::string_view tokens, void* ctx,
           int (*x_token)(void*, int, const char*, int, int, int)) {
  // A value without a NUL anywhere has none in a token: one scan, not one a token.
  const bool has_nul =
      !tokens.empty() && std::memchr(tokens.data(), 0, tokens.size()) != nullptr;
  size_t at = 0;
  uint64_t head = 0;
  while (at < tokens.size() && get_varint(tokens, &at, &head)) {
    uint64_t size = head >> 1;
    if (size > tokens.size() - at ||
        (has_nul && tokens.substr(at, size).find('\0') != std::string_view::npos))
      break;
    int rc = x_token(ctx, (head & 1) ? FTS5_TOKEN_COLOCATED : 0, tokens.data() + at,
                     static_cast<int>(size), 0, 0);
    if (rc != SQLITE_OK) return rc;
    at += size;
  }
  return SQLITE_OK;
}

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
  std::string_view value(text, n > 0 ? static_cast<size_t>(n) : 0);
  if (split && value.substr(0, kReplay.size()) == kReplay)
    return replay(value.substr(kReplay.size()), ctx, x_token);
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

std::string encode_text_tokens(const Chunk& c, std::string_view plain_content) {
  std::string out;
  out.reserve(plain_content.size() + plain_content.size() / 2 + 64);
  std::string symbols = c.function_name + ' ' + c.class_name;
  symbols += ' ';
  symbols += c.symbol;
  // The store gives the delete trigger this value trimmed of spaces (PF_FTS_VALUES), which
  // tokenizes the same unless it then opens as an encoding.
  std::string_view trimmed = symbols;
  while (!trimmed.empty() && trimmed.front() == ' ') trimmed.remove_prefix(1);
  if (trimmed.substr(0, kReplay.size()) == kReplay) return {};
  for (std::string_view value : {std::string_view(symbols), std::string_view(c.path),
                                 std::string_view(c.heading_path), plain_content}) {
    if (value.substr(0, kReplay.size()) == kReplay) return {};
    size_t length_at = out.size();
    out.append(4, '\0');  // the column's encoded length, filled in below
    out += kReplay;
    document_tokens(value, [&](std::string_view tok, bool colocated) {
      put_varint(&out, uint64_t{tok.size()} << 1 | (colocated ? 1 : 0));
      out += tok;
    });
    auto length = static_cast<uint32_t>(out.size() - length_at - 4);
    std::memcpy(&out[length_at], &length, 4);
  }
  return out;
}

bool text_token_columns(std::string_view tokens, std::string_view out[4]) {
  for (int i = 0; i < 4; ++i) {
    uint32_t length = 0;
    if (tokens.size() < 4) return false;
    std::memcpy(&length, tokens.data(), 4);
    tokens.remove_prefix(4);
    if (length > tokens.size() || length < kReplay.size()) return false;
    out[i] = tokens.substr(0, length);
    if (out[i].substr(0, kReplay.size()) != kReplay) return false;
    tokens.remove_prefix(length);
  }
  return tokens.empty();
}

void register_code_tokenizer(sqlite3* db) {
  fts5_api* api = sqlite::fts5(db);
  static fts5_tokenizer tokenizer = {tok_create, tok_delete, tok_tokenize};
  if (api->xCreateTokenizer(api, "pilotfish", nullptr, &tokenizer, nullptr) != SQLITE_OK)
    throw Error("cannot register the pilotfish FTS5 tokenizer");
}

}  // namespace pf
