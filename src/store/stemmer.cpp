// The Porter stemmer (M.F. Porter, "An algorithm for suffix stripping", 1980), on lower-case
// ASCII words.
#include "store/stemmer.h"

#include <cstdint>
#include <cstring>
#include <memory>

namespace pf {
namespace {

class PorterStemmer {
 public:
  // w: lower-case ASCII letters, at most kMaxStemmedBytes of them. Replacements never grow the
  // word past its length plus one ("hopped" -> "hop", "conflated" -> "conflate").
  explicit PorterStemmer(std::string_view w) : k_(static_cast<int>(w.size()) - 1) {
    std::memcpy(b_, w.data(), w.size());
  }

  std::string_view run() {
    if (k_ <= 1) return {b_, static_cast<size_t>(k_ + 1)};
    step1ab();
    if (k_ > 0) {
      step1c();
      step2();
      step3();
      step4();
      step5();
    }
    return {b_, static_cast<size_t>(k_ + 1)};
  }

 private:
  bool cons(int i) const {
    switch (b_[i]) {
      case 'a':
      case 'e':
      case 'i':
      case 'o':
      case 'u':
        return false;
      case 'y':
        return i == 0 ? true : !cons(i - 1);
      default:
        return true;
    }
  }
  // Number of consonant-vowel sequences in b[0..j_].
  int m() const {
    int n = 0, i = 0;
    for (;;) {
      if (i > j_) return n;
      if (!cons(i)) break;
      ++i;
    }
    ++i;
    for (;;) {
      for (;;) {
        if (i > j_) return n;
        if (cons(i)) break;
        ++i;
      }
      ++i;
      ++n;
      for (;;) {
        if (i > j_) return n;
        if (!cons(i)) break;
        ++i;
      }
      ++i;
    }
  }
  bool vowel_in_stem() const {
    for (int i = 0; i <= j_; ++i)
      if (!cons(i)) return true;
    return false;
  }
  bool doublec(int j) const {
    if (j < 1 || b_[j] != b_[j - 1]) return false;
    return cons(j);
  }
  bool cvc(int i) const {
    if (i < 2 || !cons(i) || cons(i - 1) || !cons(i - 2)) return false;
    char ch = b_[i];
    return !(ch == 'w' || ch == 'x' || ch == 'y');
  }
  bool ends(std::string_view s) {
    int len = static_cast<int>(s.size());
    if (len > k_ + 1) return false;
    if (std::memcmp(b_ + (k_ - len + 1), s.data(), s.size()) != 0) return false;
    j_ = k_ - len;
    return true;
  }
  void setto(std::string_view s) {
    std::memcpy(b_ + (j_ + 1), s.data(), s.size());
    k_ = j_ + static_cast<int>(s.size());
  }
  void r(std::string_view s) {
    if (m() > 0) setto(s);
  }
  char at(int i) const { return b_[i]; }

  void step1ab() {
    if (at(k_) == 's') {
      if (ends("sses"))
        k_ -= 2;
      else if (ends("ies"))
        setto("i");
      else if (at(k_ - 1) != 's')
        --k_;
    }
    if (ends("eed")) {
      if (m() > 0) --k_;
    } else if ((ends("ed") || ends("ing")) && vowel_in_stem()) {
      k_ = j_;
      if (ends("at"))
        setto("ate");
      else if (ends("bl"))
        setto("ble");
      else if (ends("iz"))
        setto("ize");
      else if (doublec(k_)) {
        --k_;
        char ch = at(k_);
        if (ch == 'l' || ch == 's' || ch == 'z') ++k_;
      } else if (j_ = k_, m() == 1 && cvc(k_)) {
        setto("e");
      }
    }
  }
  void step1c() {
    if (ends("y") && vowel_in_stem()) b_[k_] = 'i';
  }
  void step2() {
    if (k_ < 1) return;
    switch (at(k_ - 1)) {
      case 'a':
        if (ends("ational"))
          r("ate");
        else if (ends("tional"))
          r("tion");
        break;
      case 'c':
        if (ends("enci"))
          r("ence");
        else if (ends("anci"))
          r("ance");
        break;
      case 'e':
        if (ends("izer")) r("ize");
        break;
      case 'l':
        if (ends("bli"))
          r("ble");
        else if (ends("alli"))
          r("al");
        else if (ends("entli"))
          r("ent");
        else if (ends("eli"))
          r("e");
        else if (ends("ousli"))
          r("ous");
        break;
      case 'o':
        if (ends("ization"))
          r("ize");
        else if (ends("ation"))
          r("ate");
        else if (ends("ator"))
          r("ate");
        break;
      case 's':
        if (ends("alism"))
          r("al");
        else if (ends("iveness"))
          r("ive");
        else if (ends("fulness"))
          r("ful");
        else if (ends("ousness"))
          r("ous");
        break;
      case 't':
        if (ends("aliti"))
          r("al");
        else if (ends("iviti"))
          r("ive");
        else if (ends("biliti"))
          r("ble");
        break;
      case 'g':
        if (ends("logi")) r("log");
        break;
      default:
        break;
    }
  }
  void step3() {
    switch (at(k_)) {
      case 'e':
        if (ends("icate"))
          r("ic");
        else if (ends("ative"))
          r("");
        else if (ends("alize"))
          r("al");
        break;
      case 'i':
        if (ends("iciti")) r("ic");
        break;
      case 'l':
        if (ends("ical"))
          r("ic");
        else if (ends("ful"))
          r("");
        break;
      case 's':
        if (ends("ness")) r("");
        break;
      default:
        break;
    }
  }
  void step4() {
    if (k_ < 1) return;
    switch (at(k_ - 1)) {
      case 'a':
        if (ends("al")) break;
        return;
      case 'c':
        if (ends("ance") || ends("ence")) break;
        return;
      case 'e':
        if (ends("er")) break;
        return;
      case 'i':
        if (ends("ic")) break;
        return;
      case 'l':
        if (ends("able") || ends("ible")) break;
        return;
      case 'n':
        if (ends("ant") || ends("ement") || ends("ment") || ends("ent")) break;
        return;
      case 'o':
        if (ends("ion") && j_ >= 0 && (at(j_) == 's' || at(j_) == 't')) break;
        if (ends("ou")) break;
        return;
      case 's':
        if (ends("ism")) break;
        return;
      case 't':
        if (ends("ate") || ends("iti")) break;
        return;
      case 'u':
        if (ends("ous")) break;
        return;
      case 'v':
        if (ends("ive")) break;
        return;
      case 'z':
        if (ends("ize")) break;
        return;
      default:
        return;
    }
    if (m() > 1) k_ = j_;
  }
  void step5() {
    j_ = k_;
    if (at(k_) == 'e') {
      int a = m();
      if (a > 1 || (a == 1 && !cvc(k_ - 1))) --k_;
    }
    if (at(k_) == 'l' && doublec(k_)) {
      j_ = k_;
      if (m() > 1) --k_;
    }
  }

  char b_[kMaxStemmedBytes + 8];
  int k_;
  int j_ = 0;
};

// Words recur: a code base uses a few thousand distinct words millions of times, so each thread
// keeps the stems of recent words in a small direct-mapped cache. Stemming was half the FTS5
// tokenizer's time, and the tokenizer runs inside the single writer thread.
class StemCache {
 public:
  static constexpr size_t kMaxWord = 22;  // longer words (rare) are stemmed every time

  // The cached stem of word (lower-case ASCII, 4..kMaxWord letters, of hash h), computing it on
  // a miss.
  std::string_view stem(std::string_view word, uint32_t h) {
    Entry& e = entries_[h & (kEntries - 1)];
    if (e.word_len != word.size() || std::memcmp(e.word, word.data(), word.size()) != 0) {
      PorterStemmer stemmer(word);
      std::string_view stem = stemmer.run();
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
    char stem[kMaxWord + 1];  // Porter may add one letter back ("conflat" -> "conflate")
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
  if (word.size() > StemCache::kMaxWord) {
    PorterStemmer stemmer(word);
    return copy_out(stemmer.run());
  }
  static thread_local auto cache = std::make_unique<StemCache>();
  return copy_out(cache->stem(word, hash));
}

std::string stem_word(std::string_view word) {
  StemBuffer buffer;
  return std::string(stem_word(word, buffer));
}

}  // namespace pf
