// The audit trail: every side-effecting tool call (write, shell, url, MCP) as it was decided and
// how it ended: who asked, where (a channel, an HTTP key, the terminal), the decision and the
// check or person behind it, the command or target, the exit code and the duration. The trail
// is append-only: the store that keeps it (the bridge's StateStore implements AuditLog) offers
// no way to change a record, and the sandbox cannot reach the store.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/trace.h"
#include "policy/permission.h"

namespace pf {

struct AuditRecord {
  int64_t id = 0;            // set by the store, increasing
  int64_t at_ms = 0;         // when it was decided, ms since the epoch
  std::string front;         // "chat", "http" or "cli"
  std::string place;         // channel key ("mattermost:abc"), the HTTP key's name, "terminal"
  std::string user;          // who asked; empty when unknown
  std::string bot;           // the bridge's bot; empty elsewhere
  std::string tool;          // the registry name
  std::string target;        // the command, path, URL or server/tool
  std::string decision;      // "approved", "denied" or "not-given"
  std::string decided_by;    // the engine's check ("config-allow", "stored-rule", "yolo", ...),
                             // "hook", or "@person" for a prompt's answer
  std::string detail;        // the rule or reason
  std::optional<int64_t> exit_code;  // run_command's
  int64_t duration_ms = -1;  // -1: it did not run
  std::string error;         // the call's error result, when it ran and failed
};

struct AuditQuery {
  int64_t since_ms = 0;   // records at or after
  std::string place;      // empty: every place
  int64_t limit = 1000;   // the newest this many, returned oldest first
};

// Where the trail is kept: used from one thread at a time (each front's network or answer
// thread); may throw pf::Error.
class AuditLog {
 public:
  virtual ~AuditLog() = default;
  // Appends a record (its id is assigned).
  virtual void add_audit(const AuditRecord& record) = 0;
  virtual std::vector<AuditRecord> audit_records(const AuditQuery& query) = 0;
};

// One answer's side of the trail: a gate notes each decision on a side-effecting call, and the
// call's result completes an approved one (AnswerOptions::after_tool), which is then written; a
// refused call is written at once. A log that throws is reported in the log, never to the
// answer. The trail is thread-safe; the log is written from the thread that calls decided() or
// ran(). log may be null (nothing is kept); it must outlive the trail.
class AuditTrail {
 public:
  // base: front, place, user and bot of every record.
  AuditTrail(AuditLog* log, AuditRecord base) : log_(log), base_(std::move(base)) {}
  // Writes what was approved but never ran (the answer was stopped first), saying so.
  ~AuditTrail();
  AuditTrail(const AuditTrail&) = delete;
  AuditTrail& operator=(const AuditTrail&) = delete;

  // The engine's (or a person's) decision on call. by: the check, "hook" or "@person".
  void decided(const ToolCall& call, const PermissionRequest& request, bool approved,
               const std::string& by, const std::string& detail, bool not_given = false);
  // The call ran with this result (JSON text); writes the record decided() kept for it.
  void ran(const ToolCall& call, const std::string& result);
  // The decision noted for a call of this answer (approved, denied or not-given; by whom; the
  // rule or reason), or nullopt when none was; and the same as a tool span's attributes.
  struct Decision {
    std::string decision, by, detail;
  };
  std::optional<Decision> decision_of(const ToolCall& call) const;
  void annotate(const ToolCall& call, Span& span) const;

 private:
  void write(AuditRecord record);
  AuditLog* log_;
  AuditRecord base_;
  mutable std::mutex mutex_;
  std::map<std::string, Decision> decisions_;  // by call id and name
  std::map<std::string, std::pair<AuditRecord, std::chrono::steady_clock::time_point>> pending_;
};

// What a request touches, as one line: the command, path, URL or "server/tool".
std::string audit_target(const PermissionRequest& request);

}  // namespace pf
