// English stemming: the Snowball "english" stemmer (Porter2) from libstemmer, Debian's
// maintained Snowball library, on lower-case ASCII words, behind a per-thread cache.
#include "store/stemmer.h"

#include <libstemmer.h>

#include <cstdint>
#include <cstring>
#include <memory>

namespace pf {
namespace {

// One Snowball stemmer per thread (they are not thread-safe), made on first use. Returns the stem
// (a view into the stemmer's buffer, valid until its next call) or word when there is no stemmer
// or the stem would not fit kMaxStemmedBytes.
std::string_view snowball(std::string_view word) {
  struct Free {
    void operator()(sb_stemmer* s) const { sb_stemmer_delete(s); }
  };
  thread_local std::unique_ptr<sb_stemmer, Free> stemmer(sb_stemmer_new("english", "UTF_8"));
  if (!stemmer) return word;
  const sb_symbol* out = sb_stemmer_stem(
      stemmer.get(), reinterpret_cast<const sb_symbol*>(word.data()), static_cast<int>(word.size()));
  int n = sb_stemmer_length(stemmer.get());
  if (!out || n <= 0 || static_cast<size_t>(n) > kMaxStemmedBytes) return word;
  return {reinterpret_cast<const char*>(out), static_cast<size_t>(n)};
}

// Words recur: a code base uses a few thousand distinct words millions of times, so each thread
// keeps the stems of recent words in a small direct-mapped cache. Stemming was half the FTS5
// tokenizer's time, and the tokenizer runs inside the single writer thread; Snowball takes about
// 110 ns a word, a cache hit about 15.
class StemCache {
 public:
  static constexpr size_t kMaxWord = 22;  // longer words (rare) are stemmed every time

  // The cached stem of word (lower-case ASCII, 4..kMaxWord letters, of hash h), computing it on
  // a miss.
  std::string_view stem(std::string_view word, uint32_t h) {
    Entry& e = entries_[h & (kEntries - 1)];
    if (e.word_len != word.size() || std::memcmp(e.word, word.data(), word.size()) != 0) {
      std::string_view stem = snowball(word);
      if (stem.size() > kMaxWord + 1) stem = word;
      e.word_len = static_cast<uint8_t>(word.size());
      std::memcpy(e.word, word.data(), word.size());
      e.stem_len = static_cast<uint8_t>(stem.size());
      std::memcpy(e.stem, stem.data(), stem.size());
    }
    return {e.stem, e.stem_len};
  }

 private:
  static constexpr size_t kEntries = 1 << 14;
  struct Entry {
    uint8_t word_len = 0, stem_len = 0;
    char word[kMaxWord];
    char stem[kMaxWord + 1];
  };
  std::array<Entry, kEntries> entries_;
};

}  // namespace

std::string_view stem_word(std::string_view word, StemBuffer& buffer) {
  if (word.size() < 4 || word.size() > kMaxStemmedBytes) return word;
  uint32_t hash = 2166136261u;  // FNV-1a, for the cache
  for (char c : word) {
    if (c < 'a' || c > 'z') return word;
    hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
  }
  auto copy_out = [&buffer](std::string_view stem) {
    std::memcpy(buffer.data(), stem.data(), stem.size());
    return std::string_view(buffer.data(), stem.size());
  };
  if (word.size() > StemCache::kMaxWord) return copy_out(snowball(word));
  static thread_local auto cache = std::make_unique<StemCache>();
  return copy_out(cache->stem(word, hash));
}

std::string stem_word(std::string_view word) {
  StemBuffer buffer;
  return std::string(stem_word(word, buffer));
}

}  // namespace pf
