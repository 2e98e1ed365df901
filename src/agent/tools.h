// The tools a model may call while answering: read_file, list_directory, search_code and grep,
// over one indexed repository. They can never reach outside its root — not through "..",
// absolute paths, symlinks, percent-encoding or NUL bytes — nor read secrets (by name or by
// content) or pilotfish's own files (own_files.h: not readable, not listed, not matched, not
// found by search), and every output is size-capped and says when it was cut. Results are JSON objects
// in the reference copilot's shapes; failures are {"error": "..."} results the model can read,
// never exceptions.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agent/own_files.h"
#include "agent/tool_registry.h"
#include "llm/chat.h"
#include "search/hybrid.h"

namespace pf {

struct ToolLimits {
  size_t max_read_bytes = 64 * 1024;
  int max_read_lines = 400;
  size_t max_entries = 500;
  int max_grep_matches = 100;
  int64_t max_grep_bytes = 32 * 1024 * 1024;
};

class RepositoryTools {
 public:
  // root: the repository's directory (as indexed); search and embedder configure search_code;
  // own: pilotfish's own paths, which no call may reach.
  RepositoryTools(std::string root, const HybridOptions& search, Embedder* embedder,
                  OwnFiles own = {}, ToolLimits limits = {});

  // The four tools as registry entries (permission-free, 32 KiB output cap each), built once;
  // they call back into this object, which must outlive every copy of the registry.
  const ToolRegistry& registry() const { return registry_; }
  // The same entries, with one folder under the own paths made readable (a chat channel's
  // attachments, for that channel's turn). The same lifetime rule.
  ToolRegistry registry_exposing(const std::string& folder) const;
  // Runs one call; arguments is the JSON text the model wrote. search_code reads store (the
  // caller's connection: a store is used by one thread at a time); null makes it an error.
  // view: the own paths to honour (null: the constructor's).
  nlohmann::json call(const std::string& name, const std::string& arguments, Store* store,
                      const OwnFiles* view = nullptr) const;

  nlohmann::json read_file(const std::string& path, std::optional<int> start,
                           std::optional<int> end, const OwnFiles* view = nullptr) const;
  nlohmann::json list_directory(const std::string& path, const OwnFiles* view = nullptr) const;
  nlohmann::json search_code(Store& store, const std::string& query, int limit) const;
  nlohmann::json grep(const std::string& pattern, const std::string& path,
                      const OwnFiles* view = nullptr) const;

  // The absolute path of a repository-relative path, or nullopt (with *why) when it escapes the
  // root, names a secret or one of pilotfish's own files, or does not exist.
  std::optional<std::string> resolve(const std::string& user_path, std::string* why,
                                     const OwnFiles* view = nullptr) const;

  const OwnFiles& own() const { return own_; }

 private:
  std::vector<ToolSpec> build_specs() const;
  ToolRegistry make_registry(std::shared_ptr<const OwnFiles> view) const;

  std::string root_;  // realpath
  OwnFiles own_;
  HybridOptions search_;
  Embedder* embedder_;
  ToolLimits limits_;
  ToolRegistry registry_;
};

}  // namespace pf
