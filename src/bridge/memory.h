// MEMORY.md, a workspace's notes kept across conversations (spec §14). A compacted
// conversation's summary is appended to it (after a backup, waiting for the workspace's lock:
// the summary cannot be made again); after a quiet spell a consolidation asks a model to
// dedupe, prune and merge it under 200 lines, and writes the answer only if the file did not
// change meanwhile (its mtime) and the lock was free. The system prompt's pointer to it is
// the bridge's (bridge.cpp, instructions()).
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace pf {

// What a consolidation asks of the model: the file's text in, the new text out (nullopt: the
// model failed). Called with the workspace locked, on the caller's thread; it must return
// within its own time limit.
using ConsolidateFn = std::function<std::optional<std::string>(const std::string& memory)>;

enum class ConsolidateOutcome { kWritten, kTooSmall, kBusy, kModelFailed, kTooLong, kChanged, kMissing };

// Appends "## Compaction Summary [<ISO time>]" and the summary to <root>/MEMORY.md (created if
// missing), first copying the old file to <root>/.memory/MEMORY.md.bak. Waits for the lock.
// Throws pf::Error when the file cannot be written. Thread-safe.
void append_compaction_summary(const std::string& root, const std::string& summary);

// One consolidation run (see above): files under 100 characters are left alone, a busy lock
// skips the run, code fences around the answer are stripped, an answer of 200 lines or more is
// refused. Thread-safe.
ConsolidateOutcome consolidate_memory(const std::string& root, const ConsolidateFn& model);

// The instructions a consolidation model gets.
const char* consolidation_prompt();

}  // namespace pf
