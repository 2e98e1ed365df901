// The code-aware tokenizer shared by indexing (the FTS5 tokenizer "pilotfish") and query
// analysis, so both sides split text the same way.
//
// A word is a run of ASCII letters, digits, '_' and non-ASCII bytes; a '-' joins two words
// when a letter follows it ("keep-alive", "client-h1"). Each word is emitted case-folded as a
// whole, then, when it has inner structure, each part: camelCase and PascalCase humps
// ("HTTPServer" -> http, server), snake_case and kebab-case pieces, letter/digit runs
// ("http2" -> http, 2). Parts are "colocated" with the whole word: they add matches, not length.
#pragma once

#include <string>
#include <string_view>

namespace pf {

inline constexpr int kMaxTokenBytes = 64;

// Calls emit(token, is_part, word_begin, word_end) for each token in text; the offsets are the
// byte range of the whole word in text. Tokens longer than kMaxTokenBytes (base64,
// hashes) are dropped. When split_parts is false only whole words are emitted.
template <typename Emit>
void for_each_code_token(std::string_view text, bool split_parts, Emit&& emit);

namespace detail {
inline bool is_word_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c >= 0x80;
}
inline bool is_upper(unsigned char c) {
  return c >= 'A' && c <= 'Z';
}
inline bool is_lower(unsigned char c) {
  return c >= 'a' && c <= 'z';
}
inline bool is_digit(unsigned char c) {
  return c >= '0' && c <= '9';
}
inline bool is_alpha(unsigned char c) {
  return is_upper(c) || is_lower(c);
}
inline char fold(unsigned char c) {
  return is_upper(c) ? static_cast<char>(c + 32) : static_cast<char>(c);
}
}  // namespace detail

template <typename Emit>
void for_each_code_token(std::string_view text, bool split_parts, Emit&& emit) {
  using namespace detail;
  const size_t n = text.size();
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  char buf[kMaxTokenBytes];
  size_t i = 0;
  while (i < n) {
    while (i < n && !is_word_byte(s[i])) ++i;
    if (i >= n) break;
    size_t start = i;
    // Extend over word bytes and letter-led '-' joins.
    for (;;) {
      while (i < n && is_word_byte(s[i])) ++i;
      if (i + 1 < n && s[i] == '-' && is_alpha(s[i + 1])) {
        ++i;
        continue;
      }
      break;
    }
    size_t len = i - start;
    if (len > static_cast<size_t>(kMaxTokenBytes)) continue;
    bool structured = false;
    for (size_t k = 0; k < len; ++k) {
      unsigned char c = s[start + k];
      buf[k] = fold(c);
      if (k > 0) {
        unsigned char p = s[start + k - 1];
        if (c == '_' || c == '-' || (is_upper(c) && !is_upper(p)) ||
            (is_digit(c) != is_digit(p) && (is_alpha(c) || is_alpha(p))) ||
            (is_upper(p) && is_lower(c) && k >= 2 && is_upper(s[start + k - 2])))
          structured = true;
      }
    }
    // A lone '_' or '__' is not a useful token.
    bool all_underscore = true;
    for (size_t k = 0; k < len; ++k) all_underscore &= (buf[k] == '_');
    if (all_underscore) continue;
    emit(std::string_view(buf, len), false, start, i);
    if (!split_parts || !structured) continue;
    // Split into parts at '_' / '-', lower->Upper, UPPER->Upper+lower, letter<->digit.
    size_t ps = 0;
    auto flush = [&](size_t pe) {
      if (pe > ps) {
        size_t plen = pe - ps;
        bool digits = is_digit(s[start + ps]);
        if (plen >= 2 || digits) emit(std::string_view(buf + ps, plen), true, start, i);
      }
    };
    for (size_t k = 0; k < len; ++k) {
      unsigned char c = s[start + k];
      if (c == '_' || c == '-') {
        flush(k);
        ps = k + 1;
        continue;
      }
      if (k == ps) continue;
      unsigned char p = s[start + k - 1];
      bool cut = (is_upper(c) && is_lower(p)) || (is_digit(c) != is_digit(p)) ||
                 (is_upper(p) && is_lower(c) && k - ps >= 2 && is_upper(s[start + k - 2]));
      if (cut) {
        size_t at = (is_upper(p) && is_lower(c) && !is_digit(p)) ? k - 1 : k;
        if (at > ps) {
          flush(at);
          ps = at;
        }
      }
    }
    flush(len);
  }
}

}  // namespace pf
