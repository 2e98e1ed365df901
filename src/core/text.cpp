// Text encodings (see text.h).
#include "core/text.h"

#include <array>
#include <random>

namespace pf {

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string trim_space(std::string_view text) {
  size_t b = text.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  size_t e = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(b, e - b + 1));
}

std::string random_id(size_t n) {
  static const char kAlphabet[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_int_distribution<size_t> pick(0, sizeof kAlphabet - 2);
  std::string id(n, '0');
  for (char& c : id) c = kAlphabet[pick(rng)];
  return id;
}
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

}  // namespace

std::string hex_encode(std::string_view bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    auto b = static_cast<unsigned char>(c);
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

std::string percent_decode(std::string_view in, bool plus_is_space) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%' && i + 2 < in.size() && hex_digit(in[i + 1]) >= 0 &&
        hex_digit(in[i + 2]) >= 0) {
      out += static_cast<char>(hex_digit(in[i + 1]) * 16 + hex_digit(in[i + 2]));
      i += 2;
    } else if (in[i] == '+' && plus_is_space) {
      out += ' ';
    } else {
      out += in[i];
    }
  }
  return out;
}

std::string redact_urls(std::string_view text, std::string_view replacement) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    size_t at = text.find("http", i);
    if (at == std::string_view::npos) break;
    size_t host = at + 4;
    if (host < text.size() && text[host] == 's') ++host;
    bool url = text.compare(host, 3, "://") == 0 && host + 3 < text.size() &&
               !is_space(text[host + 3]) && text[host + 3] != ':';
    if (!url) {
      out.append(text, i, at + 4 - i);
      i = at + 4;
      continue;
    }
    size_t end = host + 3;
    while (end < text.size() && !is_space(text[end])) ++end;
    out.append(text, i, at - i);
    out += replacement;
    i = end;
  }
  out.append(text, i);
  return out;
}

namespace {

// Byte classes for estimate_tokens: a word byte continues a token, punctuation is a token of its
// own, white space separates.
enum ByteClass : unsigned char { kSpace, kWordByte, kPunct };

constexpr std::array<unsigned char, 256> kByteClass = [] {
  std::array<unsigned char, 256> t{};
  for (int c = 0; c < 256; ++c) {
    bool word = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                c == '_' || c >= 0x80;
    bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    t[static_cast<size_t>(c)] = word ? kWordByte : space ? kSpace : kPunct;
  }
  return t;
}();

}  // namespace

// Branch-free over a table: it runs over every byte of every chunk.
int estimate_tokens(std::string_view text) {
  int tokens = 0;
  int prev_word = 0;
  for (char ch : text) {
    const unsigned char cls = kByteClass[static_cast<unsigned char>(ch)];
    const int word = cls == kWordByte;
    tokens += (cls == kPunct) | (word & (prev_word ^ 1));
    prev_word = word;
  }
  return tokens;
}

size_t code_points(std::string_view text) {
  size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

std::string base64_encode(std::string_view bytes) {
  static const char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = static_cast<uint8_t>(bytes[i]) << 16 | static_cast<uint8_t>(bytes[i + 1]) << 8 |
                 static_cast<uint8_t>(bytes[i + 2]);
    for (int shift : {18, 12, 6, 0}) out += kDigits[(v >> shift) & 63];
  }
  size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t v = static_cast<uint8_t>(bytes[i]) << 16;
    if (rest == 2) v |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    out += kDigits[(v >> 18) & 63];
    out += kDigits[(v >> 12) & 63];
    out += rest == 2 ? kDigits[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

}  // namespace pf
