// The tool registry (see tool_registry.h).
#include "agent/tool_registry.h"

namespace pf {

void ToolRegistry::add(ToolEntry entry) {
  bool replaced = false;
  for (auto& e : entries_)
    if (e.spec.name == entry.spec.name) {
      e = entry;
      replaced = true;
    }
  if (!replaced) entries_.push_back(std::move(entry));
  publish_specs();
}

void ToolRegistry::retain(const std::function<bool(const ToolEntry&)>& keep) {
  std::vector<ToolEntry> kept;
  for (auto& e : entries_)
    if (keep(e)) kept.push_back(std::move(e));
  entries_ = std::move(kept);
  publish_specs();
}

void ToolRegistry::publish_specs() {
  auto specs = std::make_shared<std::vector<ToolSpec>>();
  for (const auto& e : entries_) specs->push_back(e.spec);
  specs_ = std::move(specs);
}

const ToolEntry* ToolRegistry::find(std::string_view name) const {
  for (const auto& e : entries_)
    if (e.spec.name == name) return &e;
  return nullptr;
}

nlohmann::json ToolRegistry::call(const std::string& name, const std::string& arguments,
                                  Store* store) const {
  const ToolEntry* entry = find(name);
  if (!entry) return {{"error", "unknown tool: " + name}};
  nlohmann::json result = entry->run(arguments, store);
  size_t size = result.dump().size();
  if (size > entry->max_output_bytes)
    return {{"error",
             "the tool's output was too large (" + std::to_string(size) + " bytes); ask for less"}};
  return result;
}

}  // namespace pf
