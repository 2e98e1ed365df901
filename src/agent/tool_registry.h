// The tools a model may call in one answer, as one list of entries: each with its schema, the
// kind of permission it needs, its output cap and how it runs. The repository's read-only tools
// are one set of entries (tools.h); a transport extends a copy with its own (the chat bridge's
// chat tools), and the permission engine decides on every entry whose kind is not kNone.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "llm/chat.h"

namespace pf {

class Store;

// What a call may touch, which is what a permission rule is written against.
// kAdmin: an admin bot's tools (bridge/admin_tools.h), asked of a person every time.
enum class ToolPermission { kNone, kWrite, kShell, kUrl, kMcp, kAdmin };

// What one call would touch, for the permission engine and a person's prompt.
struct ToolTarget {
  std::string command;  // kShell: the command line; kAdmin: what the call would do
  std::string path;     // kWrite: absolute, as the tool would resolve it
  std::string url;      // kUrl
  std::string mcp_server, mcp_tool;  // kMcp
  std::string intent;   // the model's stated reason, when it gave one
  std::string error;    // the arguments are unusable: the call fails without asking anyone
};

struct ToolEntry {
  ToolSpec spec;
  ToolPermission permission = ToolPermission::kNone;
  // A result whose JSON text is longer becomes an error result asking for less.
  size_t max_output_bytes = 32 * 1024;
  // For entries with a permission: reads the call's arguments (JSON text) into its target.
  // Thread-safe; never throws.
  std::function<ToolTarget(const std::string& arguments)> describe;
  // Runs one call on a worker thread with that thread's store connection (null when there is
  // none): arguments is the JSON text the model wrote. Failures the model can act on are
  // {"error": "..."} results, not exceptions. Called from several threads at once.
  std::function<nlohmann::json(const std::string& arguments, Store* store)> run;
  // Needs no permission, yet its call acts later or elsewhere (schedule, ask_agent): plan mode
  // leaves it out (agent/plan_mode.h).
  bool acts = false;
};

// Built before answering, then only read: reads may come from any thread, add() may not race
// them. Copyable, so a transport can extend a copy of a shared set.
class ToolRegistry {
 public:
  // Adds the entry, replacing one of the same name.
  void add(ToolEntry entry);
  // Keeps only the entries keep says yes to, in their order.
  void retain(const std::function<bool(const ToolEntry&)>& keep);
  const ToolEntry* find(std::string_view name) const;
  bool empty() const { return entries_.empty(); }
  // The entries' specs in the order added; one shared copy until the next add().
  std::shared_ptr<const std::vector<ToolSpec>> specs() const { return specs_; }
  // Runs a call: an unknown tool, or output over the entry's cap, is an error result.
  nlohmann::json call(const std::string& name, const std::string& arguments, Store* store) const;

 private:
  void publish_specs();  // specs_ from entries_

  std::vector<ToolEntry> entries_;
  std::shared_ptr<const std::vector<ToolSpec>> specs_ =
      std::make_shared<const std::vector<ToolSpec>>();
};

}  // namespace pf
