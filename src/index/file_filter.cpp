// Name and content rules for files the indexer must never store.
#include "index/file_filter.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstring>

namespace pf {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
// glibc's memmem, unlike string_view::find, does not stop at every occurrence of the needle's
// first byte ('s' of "sk-ant-"), which made the secret scan a third of classify_content's time.
size_t find(std::string_view s, std::string_view part, size_t from = 0) {
  if (from > s.size()) return s.npos;
  const void* at = memmem(s.data() + from, s.size() - from, part.data(), part.size());
  return at ? static_cast<size_t>(static_cast<const char*>(at) - s.data()) : s.npos;
}
bool contains(std::string_view s, std::string_view part) {
  return find(s, part) != s.npos;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_alnum(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Counts [A-Za-z0-9] (plus extra) characters starting at p.
size_t run_length(std::string_view s, size_t p, std::string_view extra = "") {
  size_t n = 0;
  while (p + n < s.size() && (is_alnum(static_cast<unsigned char>(s[p + n])) ||
                              contains(extra, std::string_view(&s[p + n], 1))))
    ++n;
  return n;
}

bool has_token_with_prefix(std::string_view text, std::string_view prefix, size_t min_len,
                           std::string_view extra = "") {
  for (size_t at = find(text, prefix); at != text.npos; at = find(text, prefix, at + 1)) {
    if (at > 0 && is_alnum(static_cast<unsigned char>(text[at - 1]))) continue;
    if (run_length(text, at + prefix.size(), extra) >= min_len) return true;
  }
  return false;
}

bool has_secret_material(std::string_view text) {
  if (contains(text, "PRIVATE KEY-----") || contains(text, "PRIVATE KEY BLOCK-----")) {
    // Only a real key block: BEGIN line followed by base64 lines.
    size_t at = find(text, "-----BEGIN ");
    while (at != text.npos) {
      size_t eol = text.find('\n', at);
      std::string_view head = text.substr(at, eol == text.npos ? text.npos : eol - at);
      if (contains(head, "PRIVATE KEY") && eol != text.npos &&
          run_length(text, eol + 1, "+/=") >= 40)
        return true;
      at = find(text, "-----BEGIN ", at + 1);
    }
  }
  // AWS access key ids, GitHub, Slack, OpenAI and Anthropic tokens.
  for (size_t at = find(text, "AKIA"); at != text.npos; at = find(text, "AKIA", at + 1)) {
    size_t n = 0;
    while (at + 4 + n < text.size() && ((text[at + 4 + n] >= 'A' && text[at + 4 + n] <= 'Z') ||
                                        (text[at + 4 + n] >= '0' && text[at + 4 + n] <= '9')))
      ++n;
    if (n == 16) return true;
  }
  return has_token_with_prefix(text, "ghp_", 36) ||
         has_token_with_prefix(text, "github_pat_", 40, "_") ||
         has_token_with_prefix(text, "xoxb-", 24, "-") ||
         has_token_with_prefix(text, "xoxp-", 24, "-") ||
         has_token_with_prefix(text, "sk-ant-", 40, "-_") ||
         has_token_with_prefix(text, "sk-proj-", 40, "-_");
}

// Replaces invalid UTF-8 with U+FFFD; returns the number of replacements.
size_t repair_utf8(std::string* s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s->data());
  const size_t n = s->size();
  size_t i = 0;
  // Fast path: scan until the first non-ASCII byte, eight bytes at a time.
  for (uint64_t word; i + 8 <= n; i += 8) {
    std::memcpy(&word, p + i, 8);
    if (word & 0x8080808080808080ull) break;
  }
  while (i < n && p[i] < 0x80) ++i;
  if (i == n) return 0;
  std::string out;
  size_t bad = 0;
  size_t copied = 0;
  while (i < n) {
    unsigned char c = p[i];
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    bool ok = len > 0 && i + len <= n;
    for (size_t k = 1; ok && k < len; ++k) ok = (p[i + k] & 0xC0) == 0x80;
    if (ok && len == 2) ok = c >= 0xC2;
    if (ok && len == 3) {
      unsigned cp = ((c & 0x0F) << 12) | ((p[i + 1] & 0x3F) << 6) | (p[i + 2] & 0x3F);
      ok = cp >= 0x800 && (cp < 0xD800 || cp > 0xDFFF);
    }
    if (ok && len == 4) {
      unsigned cp = ((c & 0x07) << 18) | ((p[i + 1] & 0x3F) << 12) | ((p[i + 2] & 0x3F) << 6) |
                    (p[i + 3] & 0x3F);
      ok = cp >= 0x10000 && cp <= 0x10FFFF;
    }
    if (ok) {
      i += len;
      continue;
    }
    out.append(s->data() + copied, i - copied);
    out.append("\xEF\xBF\xBD");
    ++bad;
    ++i;
    copied = i;
  }
  if (bad) {
    out.append(s->data() + copied, n - copied);
    s->swap(out);
  }
  return bad;
}

}  // namespace

const char* skip_reason_name(SkipReason r) {
  static constexpr std::array<const char*, static_cast<size_t>(SkipReason::kCount)> names = {
      "none",   "ignored",  "default_dir", "secret_name", "secret_content", "test", "too_large",
      "binary", "minified", "generated",   "symlink",     "unreadable",     "empty"};
  return names[static_cast<size_t>(r)];
}

bool is_default_skipped_dir(std::string_view name) {
  // .pilotfish holds pilotfish's own files in a repository (chat attachments): never indexed.
  return name == ".git" || name == "node_modules" || name == ".hg" || name == ".svn" ||
         name == ".pilotfish";
}

bool is_secret_dir(std::string_view name) {
  std::string n = lower(name);
  return n == "secrets" || n == "credentials" || n == ".ssh" || n == ".aws" || n == ".gnupg";
}

bool is_secret_file(std::string_view name) {
  // Asked about every name a walk meets: a name fits a stack buffer (NAME_MAX is 255).
  char buf[256];
  std::string longer;
  std::string_view n;
  if (name.size() <= sizeof buf) {
    for (size_t i = 0; i < name.size(); ++i)
      buf[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(name[i])));
    n = std::string_view(buf, name.size());
  } else {
    longer = lower(name);
    n = longer;
  }
  if (n == ".env" || starts_with(n, ".env.") || ends_with(n, ".env")) return true;
  for (std::string_view ext : {".pem", ".key", ".p12", ".pfx", ".cert", ".crt", ".jks", ".keystore",
                               ".kdbx", ".secret", ".secrets", ".asc", ".gpg"})
    if (ends_with(n, ext)) return true;
  for (std::string_view pre : {"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"})
    if (starts_with(n, pre)) return true;
  // Both need two dots; most names have one.
  if (n.find('.') != n.rfind('.') && (contains(n, ".secret.") || contains(n, ".secrets.")))
    return true;
  return n == ".npmrc" || n == ".netrc" || n == ".pgpass" || n == ".htpasswd" ||
         n == "credentials.json" || n == ".git-credentials" || n == ".pypirc";
}

// The reference's rules (test/, *.test.*, *.spec.*) plus the conventions of the other languages
// pilotfish parses, so that a Go or Python repository's tests do not crowd its search results.
bool is_test_dir(std::string_view name) {
  return name == "test" || name == "tests" || name == "__tests__";
}

bool is_test_file(std::string_view name) {
  if (contains(name, ".test.") || contains(name, ".spec.")) return true;
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return false;
  std::string_view stem = name.substr(0, dot), ext = name.substr(dot + 1);
  // Go, C/C++, Rust, Python: foo_test.go, foo_test.cc, foo_test.py; pytest: test_foo.py.
  if (ends_with(stem, "_test") && stem.size() > 5) return true;
  if (ext == "py" && (starts_with(stem, "test_") || stem == "conftest")) return true;
  // JUnit: FooTest.java, FooTests.java, FooIT.java (integration tests).
  if (ext == "java" || ext == "kt")
    return (ends_with(stem, "Test") && stem.size() > 4) ||
           (ends_with(stem, "Tests") && stem.size() > 5) ||
           (ends_with(stem, "IT") && stem.size() > 2 &&
            std::islower(static_cast<unsigned char>(stem[stem.size() - 3])));
  return false;
}

bool is_generated_name(std::string_view name) {
  return ends_with(name, ".min.js") || ends_with(name, ".min.mjs") || ends_with(name, ".min.css") ||
         ends_with(name, ".map") || name == "package-lock.json" || name == "yarn.lock" ||
         name == "pnpm-lock.yaml" || name == "npm-shrinkwrap.json" || name == "bun.lockb";
}

SkipReason classify_content(std::string* content) {
  std::string_view text(*content);
  size_t head = std::min<size_t>(text.size(), 8192);
  size_t control = 0;
  for (size_t i = 0; i < head; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == 0) return SkipReason::kBinary;
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != '\v' && c != 0x1b)
      ++control;
  }
  if (head > 0 && control * 10 > head) return SkipReason::kBinary;
  if (std::all_of(text.begin(), text.end(),
                  [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }))
    return SkipReason::kEmpty;

  // Minified or machine-written: most bytes sit on very long lines.
  size_t long_line_bytes = 0, line_start = 0;
  while (line_start <= text.size()) {
    const void* nl = std::memchr(text.data() + line_start, '\n', text.size() - line_start);
    size_t end = nl ? static_cast<size_t>(static_cast<const char*>(nl) - text.data()) : text.size();
    if (end - line_start > 1000) long_line_bytes += end - line_start;
    line_start = end + 1;
  }
  if (text.size() >= 1024 && long_line_bytes * 2 > text.size()) return SkipReason::kMinified;

  std::string_view top = text.substr(0, std::min<size_t>(text.size(), 600));
  if (contains(top, "@generated") || contains(top, "DO NOT EDIT") ||
      contains(top, "Code generated by"))
    return SkipReason::kGenerated;

  if (has_secret_material(text)) return SkipReason::kSecretContent;

  size_t bad = repair_utf8(content);
  if (bad * 10 > content->size()) return SkipReason::kBinary;
  return SkipReason::kNone;
}

}  // namespace pf
