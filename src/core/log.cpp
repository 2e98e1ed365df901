// Logger implementation: level filter, UTC time, subsystem tag, secrets masked, one line at a
// time under a mutex so that lines from worker threads never interleave; a log file is rotated
// by size under the same mutex (file -> file.1.gz, gzipped; the oldest beyond max_files goes).
#include "core/log.h"

#include <zlib.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/stat.h>

#include "core/clock.h"
#include "core/error.h"

namespace pf::log {
namespace {

std::atomic<Level> g_level{Level::kWarn};
std::mutex g_mutex;
Sink g_sink;                 // guarded by g_mutex
std::FILE* g_file = nullptr;  // g_sink.file, open; guarded by g_mutex
int64_t g_file_bytes = 0;
bool g_rotation_failed = false;

const char* name(Level l) {
  switch (l) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warn";
    case Level::kError:
      return "error";
    default:
      return "off";
  }
}

std::string upper_name(Level l) {
  std::string n = name(l);
  for (char& c : n) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return n;
}

bool token_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
         c == '~' || c == '+' || c == '/' || c == '=';
}

bool starts_with_nocase(std::string_view text, size_t at, std::string_view word) {
  if (text.size() - at < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(text[at + i])) != word[i]) return false;
  return true;
}

// Header names whose whole value is a secret, as "name: value", "name=value" or JSON.
constexpr std::string_view kSecretHeaders[] = {"proxy-authorization", "authorization",
                                               "x-api-key", "api-key", "x-goog-api-key",
                                               "set-cookie", "cookie"};
// Token shapes of providers and chat platforms, case as they are written.
constexpr std::string_view kTokenPrefixes[] = {"sk-", "xoxb-", "xoxp-", "xoxa-", "xoxe-",
                                               "xapp-", "ghp_", "gho_", "ghs_", "ghu_",
                                               "github_pat_", "glpat-", "hf_", "AKIA"};
// Query parameters whose value is a secret.
constexpr std::string_view kSecretParams[] = {"access_token=", "token=", "api_key=", "apikey=",
                                              "key=", "password=", "secret=", "sig="};

// The end of a header's value that starts at i: the line's, or a closing quote or comma.
size_t value_end(std::string_view text, size_t i) {
  while (i < text.size() && text[i] != '\n' && text[i] != '\r' && text[i] != '"' &&
         text[i] != ',' && text[i] != '}')
    ++i;
  return i;
}

}  // namespace

void set_level(Level level) {
  g_level.store(level);
}
Level level() {
  return g_level.load(std::memory_order_relaxed);
}

bool parse_level(std::string_view text, Level* out) {
  for (Level l : {Level::kDebug, Level::kInfo, Level::kWarn, Level::kError, Level::kOff}) {
    if (text == name(l)) {
      *out = l;
      return true;
    }
  }
  return false;
}

std::string redact_secrets(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    bool boundary = i == 0 || !token_char(text[i - 1]);
    if (boundary) {
      // A secret header: its name, then ':' or '=' (perhaps quoted, as in JSON), then the value.
      bool done = false;
      for (std::string_view h : kSecretHeaders) {
        if (!starts_with_nocase(text, i, h)) continue;
        size_t j = i + h.size();
        if (j < text.size() && text[j] == '"') ++j;
        while (j < text.size() && text[j] == ' ') ++j;
        if (j >= text.size() || (text[j] != ':' && text[j] != '=')) continue;
        ++j;
        while (j < text.size() && (text[j] == ' ' || text[j] == '"')) ++j;
        size_t end = value_end(text, j);
        if (end == j) continue;
        out.append(text.substr(i, j - i)).append("[redacted]");
        i = end;
        done = true;
        break;
      }
      if (done) continue;
      if (starts_with_nocase(text, i, "bearer ")) {
        size_t j = i + 7, end = j;
        while (end < text.size() && token_char(text[end])) ++end;
        if (end - j >= 8) {
          out.append(text.substr(i, 7)).append("[redacted]");
          i = end;
          continue;
        }
      }
      for (std::string_view p : kTokenPrefixes) {
        if (text.substr(i, p.size()) != p) continue;
        size_t end = i + p.size();
        while (end < text.size() && token_char(text[end])) ++end;
        if (end - i - p.size() < 12) continue;
        out.append(p).append("[redacted]");
        i = end;
        done = true;
        break;
      }
      if (done) continue;
    }
    if (i > 0 && (text[i - 1] == '?' || text[i - 1] == '&')) {
      bool done = false;
      for (std::string_view p : kSecretParams) {
        if (!starts_with_nocase(text, i, p)) continue;
        size_t end = i + p.size();
        while (end < text.size() && text[end] != '&' && text[end] != ' ' && text[end] != '"' &&
               text[end] != '#' && text[end] != '\n')
          ++end;
        out.append(text.substr(i, p.size())).append("[redacted]");
        i = end;
        done = true;
        break;
      }
      if (done) continue;
    }
    out.push_back(text[i++]);
  }
  return out;
}

namespace {

// file -> file.1.gz, file.k.gz -> file.(k+1).gz, the one past max_files removed. Under g_mutex.
bool rotate(std::string* why) {
  const std::string& path = g_sink.file;
  if (g_file) std::fclose(g_file);
  g_file = nullptr;
  std::remove((path + "." + std::to_string(g_sink.max_files) + ".gz").c_str());
  for (int k = g_sink.max_files - 1; k >= 1; --k)
    std::rename((path + "." + std::to_string(k) + ".gz").c_str(),
                (path + "." + std::to_string(k + 1) + ".gz").c_str());
  bool ok = true;
  if (g_sink.max_files > 0) {
    std::string gz = path + ".1.gz";
    std::FILE* in = std::fopen(path.c_str(), "rb");
    gzFile out = in ? gzopen(gz.c_str(), "wb6") : nullptr;
    if (!in || !out) {
      *why = "cannot gzip " + path + " to " + gz + ": " + std::strerror(errno);
      ok = false;
    } else {
      char buf[1 << 16];
      size_t n;
      while (ok && (n = std::fread(buf, 1, sizeof buf, in)) > 0)
        ok = gzwrite(out, buf, static_cast<unsigned>(n)) == static_cast<int>(n);
      if (!ok) *why = "cannot write " + gz;
    }
    if (in) std::fclose(in);
    if (out && gzclose(out) != Z_OK && ok) {
      *why = "cannot write " + gz;
      ok = false;
    }
  }
  std::remove(path.c_str());
  g_file = std::fopen(path.c_str(), "ae");
  g_file_bytes = 0;
  if (!g_file) {
    *why = "cannot reopen " + path + ": " + std::strerror(errno);
    return false;
  }
  return ok;
}

std::string format_line(Level lvl, std::string_view subsystem, const std::string& message,
                        bool json) {
  int64_t now = unix_time_ms();
  if (json) {
    nlohmann::json j = {{"time", format_utc_ms(now)},
                        {"level", name(lvl)},
                        {"tag", std::string(subsystem)},
                        {"message", message}};
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  // The same stamp's time of day: "18:59:01.123".
  std::string line = format_utc_ms(now).substr(11, 12);
  line.reserve(message.size() + 32);
  line.append(" ").append(upper_name(lvl)).append(" [");
  line.append(subsystem).append("] ").append(message).append("\n");
  return line;
}

}  // namespace

void set_sink(const Sink& sink) {
  std::FILE* f = nullptr;
  int64_t bytes = 0;
  if (!sink.file.empty()) {
    f = std::fopen(sink.file.c_str(), "ae");
    if (!f) throw Error("cannot open the log file " + sink.file + ": " + std::strerror(errno));
    struct stat st{};
    if (::fstat(fileno(f), &st) == 0) bytes = st.st_size;
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_file) std::fclose(g_file);
  g_sink = sink;
  if (g_sink.max_bytes < 1024) g_sink.max_bytes = 1024;
  g_file = f;
  g_file_bytes = bytes;
  g_rotation_failed = false;
}

void write(Level lvl, std::string_view subsystem, std::string_view message) {
  if (lvl < level()) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  std::string line = format_line(lvl, subsystem, redact_secrets(message), g_sink.json);
  if (!g_file) {
    std::fwrite(line.data(), 1, line.size(), stderr);
    return;
  }
  if (g_file_bytes > 0 && g_file_bytes + static_cast<int64_t>(line.size()) > g_sink.max_bytes) {
    std::string why;
    if (!rotate(&why) && !g_rotation_failed) {
      g_rotation_failed = true;
      std::fprintf(stderr, "pilotfish: log rotation: %s\n", why.c_str());
    }
    if (!g_file) {
      std::fwrite(line.data(), 1, line.size(), stderr);
      return;
    }
  }
  std::fwrite(line.data(), 1, line.size(), g_file);
  std::fflush(g_file);
  g_file_bytes += static_cast<int64_t>(line.size());
}

}  // namespace pf::log
