// MEMORY.md upkeep (see memory.h).
#include "bridge/memory.h"

#include <sys/stat.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>

#include "core/clock.h"
#include "core/error.h"
#include "core/fs.h"

namespace pf {
namespace {

// The per-workspace lock: an in-process mutex by path (one bridge process per workspace).
std::mutex& workspace_lock(const std::string& root) {
  static std::mutex guard;
  static std::map<std::string, std::unique_ptr<std::mutex>> locks;
  std::lock_guard lock(guard);
  auto& slot = locks[root];
  if (!slot) slot = std::make_unique<std::mutex>();
  return *slot;
}

std::string iso_now() { return format_utc(unix_time_ms(), "%Y-%m-%dT%H:%M:%SZ"); }

std::string read_or_empty(const std::string& path) {
  try {
    return read_file(path);
  } catch (const Error&) {
    return "";
  }
}

void back_up(const std::string& root, const std::string& text) {
  write_file_atomic(root + "/.memory/MEMORY.md.bak", text);
}

std::optional<int64_t> mtime_ns(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

// The answer without a fence around it ("```markdown ... ```").
std::string strip_fences(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  size_t start = text.find_first_not_of(" \n");
  if (start == std::string::npos) return "";
  text = text.substr(start);
  if (text.rfind("```", 0) == 0) {
    size_t nl = text.find('\n');
    text = nl == std::string::npos ? "" : text.substr(nl + 1);
    if (text.size() >= 3 && text.compare(text.size() - 3, 3, "```") == 0) text.resize(text.size() - 3);
    while (!text.empty() && text.back() == '\n') text.pop_back();
  }
  return text + "\n";
}

}  // namespace

const char* consolidation_prompt() {
  return "You keep MEMORY.md, a repository's notes that a code assistant reads in later "
         "conversations. Rewrite it: remove duplicates and notes that are stale or trivial, merge "
         "every \"## Compaction Summary\" section into the permanent sections it belongs to, keep "
         "file paths and names exact, and stay under 200 lines. Answer with the new file only, "
         "in Markdown, with ## section headings.";
}

void append_compaction_summary(const std::string& root, const std::string& summary) {
  std::lock_guard lock(workspace_lock(root));  // waits: the summary cannot be made again
  std::string path = root + "/MEMORY.md";
  std::string old = read_or_empty(path);
  if (!old.empty()) back_up(root, old);
  std::string text = old;
  if (!text.empty() && text.back() != '\n') text += "\n";
  text += (text.empty() ? "" : "\n") + std::string("## Compaction Summary [") + iso_now() + "]\n\n" + summary;
  if (text.back() != '\n') text += "\n";
  write_file_atomic(path, text);
}

ConsolidateOutcome consolidate_memory(const std::string& root, const ConsolidateFn& model) {
  std::unique_lock lock(workspace_lock(root), std::try_to_lock);
  if (!lock.owns_lock()) return ConsolidateOutcome::kBusy;
  std::string path = root + "/MEMORY.md";
  std::optional<int64_t> before = mtime_ns(path);
  if (!before) return ConsolidateOutcome::kMissing;
  std::string text = read_or_empty(path);
  if (text.size() < 100) return ConsolidateOutcome::kTooSmall;
  back_up(root, text);
  std::optional<std::string> answer = model(text);
  if (!answer || answer->find_first_not_of(" \n") == std::string::npos) return ConsolidateOutcome::kModelFailed;
  std::string next = strip_fences(*answer);
  size_t lines = 0;
  for (char c : next) lines += c == '\n';
  if (lines >= 200) return ConsolidateOutcome::kTooLong;
  // The agent's own tools may have written it meanwhile (they take no lock): keep theirs.
  if (mtime_ns(path) != before) return ConsolidateOutcome::kChanged;
  write_file_atomic(path, next);
  return ConsolidateOutcome::kWritten;
}

}  // namespace pf
