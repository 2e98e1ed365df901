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
// Each byte's class, looked up rather than compared: the tokenizer's loops are the workers'
// largest share of an index run after chunking (docs/BENCHMARKS.md).
enum : unsigned char { kWordByte = 1, kUpper = 2, kLower = 4, kDigit = 8, kJoiner = 16, kHigh = 32 };
struct ByteClasses {
  unsigned char of[256];
};
constexpr ByteClasses make_byte_classes() {
  ByteClasses t{};
  for (int c = 0; c < 256; ++c) {
    unsigned char k = 0;
    if (c >= 'A' && c <= 'Z') k = kWordByte | kUpper;
    if (c >= 'a' && c <= 'z') k = kWordByte | kLower;
    if (c >= '0' && c <= '9') k = kWordByte | kDigit;
    if (c == '_') k = kWordByte | kJoiner;
    if (c == '-') k = kJoiner;
    if (c >= 0x80) k = kWordByte | kHigh;
    t.of[c] = k;
  }
  return t;
}
inline constexpr ByteClasses kByteClasses = make_byte_classes();
inline unsigned char byte_class(unsigned char c) {
  return kByteClasses.of[c];
}
inline bool is_word_byte(unsigned char c) {
  return (byte_class(c) & kWordByte) != 0;
}
inline bool is_upper(unsigned char c) {
  return (byte_class(c) & kUpper) != 0;
}
inline bool is_lower(unsigned char c) {
  return (byte_class(c) & kLower) != 0;
}
inline bool is_digit(unsigned char c) {
  return (byte_class(c) & kDigit) != 0;
}
inline bool is_alpha(unsigned char c) {
  return (byte_class(c) & (kUpper | kLower)) != 0;
}

// Whether the word s[0, len) (len >= 1) has inner structure: a '_' or '-' after its first byte, a
// lower-to-upper or letter-digit change, or an upper run followed by a lower letter ("HTTPServer").
inline bool has_structure(const unsigned char* s, size_t len) {
  for (size_t k = 1; k < len; ++k) {
    unsigned char c = s[k], p = s[k - 1];
    if (c == '_' || c == '-' || (is_upper(c) && !is_upper(p)) ||
        (is_digit(c) != is_digit(p) && (is_alpha(c) || is_alpha(p))) ||
        (is_upper(p) && is_lower(c) && k >= 2 && is_upper(s[k - 2])))
      return true;
  }
  return false;
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
    unsigned char all = 0, after_first = 0;  // the classes of its bytes; of those past the first
    for (size_t k = 0; k < len; ++k) {
      unsigned char c = s[start + k], cls = byte_class(c);
      buf[k] = static_cast<char>(c | ((cls & kUpper) << 4));  // folded: 'A' | 32 == 'a'
      all |= cls;
      if (k > 0) after_first |= cls;
    }
    // A lone '_' or '__' is not a useful token. (A '-' is only ever followed by a letter.)
    if ((all & (kUpper | kLower | kDigit | kHigh)) == 0) continue;
    emit(std::string_view(buf, len), false, start, i);
    if (!split_parts) continue;
    // Only a word with a joiner or an upper-case letter past its first byte, or with both
    // letters and digits, can have structure; most words have neither.
    if ((after_first & (kJoiner | kUpper)) == 0 &&
        !((all & kDigit) && (all & (kUpper | kLower))))
      continue;
    if (!has_structure(s + start, len)) continue;
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
