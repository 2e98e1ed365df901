// The audit trail's per-answer recorder (see audit.h).
#include "policy/audit.h"

#include "core/error.h"
#include "core/json.h"
#include "core/log.h"

namespace pf {

std::string audit_target(const PermissionRequest& r) {
  switch (r.kind) {
    case ToolPermission::kShell:
    case ToolPermission::kAdmin:
      return r.command;
    case ToolPermission::kWrite:
      return r.path;
    case ToolPermission::kUrl:
      return r.url;
    case ToolPermission::kMcp:
      return r.mcp_server + "/" + r.mcp_tool;
    default:
      return {};
  }
}

void AuditTrail::decided(const ToolCall& call, const PermissionRequest& request, bool approved,
                         const std::string& by, const std::string& detail, bool not_given) {
  AuditRecord r = base_;
  r.at_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  r.tool = call.name;
  r.target = audit_target(request);
  r.decision = approved ? "approved" : not_given ? "not-given" : "denied";
  r.decided_by = by;
  r.detail = detail;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    decisions_[call.id + "\n" + call.name] = {r.decision, by, detail};
  }
  if (!approved) {
    write(std::move(r));
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  pending_[call.id + "\n" + call.name] = {std::move(r), std::chrono::steady_clock::now()};
}

std::optional<AuditTrail::Decision> AuditTrail::decision_of(const ToolCall& call) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = decisions_.find(call.id + "\n" + call.name);
  if (it == decisions_.end()) return std::nullopt;
  return it->second;
}

void AuditTrail::annotate(const ToolCall& call, Span& span) const {
  std::optional<Decision> d = decision_of(call);
  if (!d) return;
  span.set("pilotfish.permission.decision", d->decision);
  span.set("pilotfish.permission.by", d->by);
  if (!d->detail.empty()) span.set("pilotfish.permission.rule", d->detail.substr(0, 500));
}

AuditTrail::~AuditTrail() {
  for (auto& [key, pending] : pending_) {
    pending.first.error = "not run: the answer ended before the call";
    write(std::move(pending.first));
  }
}

void AuditTrail::ran(const ToolCall& call, const std::string& result) {
  AuditRecord r;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = pending_.find(call.id + "\n" + call.name);
    if (it == pending_.end()) return;
    r = std::move(it->second.first);
    r.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - it->second.second)
                        .count();
    pending_.erase(it);
  }
  nlohmann::json j = parse_json(result);
  if (j.is_object()) {
    if (j.contains("exit_code") && j["exit_code"].is_number_integer())
      r.exit_code = j["exit_code"].get<int64_t>();
    if (j.contains("duration_ms") && j["duration_ms"].is_number_integer())
      r.duration_ms = j["duration_ms"].get<int64_t>();
    if (j.contains("error") && j["error"].is_string()) r.error = j["error"].get<std::string>();
    if (j.contains("isError") && j["isError"] == true && r.error.empty()) r.error = "the MCP tool failed";
  }
  write(std::move(r));
}

void AuditTrail::write(AuditRecord record) {
  if (!log_) return;
  try {
    log_->add_audit(record);
  } catch (const Error& e) {
    log::error("policy", "the audit trail could not keep a record of " + record.tool + " (" +
                             record.decision + "): " + e.what());
  }
}

}  // namespace pf
