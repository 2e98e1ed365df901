// The tools a model may call while answering: read_file, list_directory, search_code and grep,
// over one indexed repository. They can never reach outside its root — not through "..",
// absolute paths, symlinks, percent-encoding or NUL bytes — nor read secrets (by name or by
// content), and every output is size-capped and says when it was cut. Results are JSON objects
// in the reference copilot's shapes; failures are {"error": "..."} results the model can read,
// never exceptions.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

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
  // root: the repository's directory (as indexed); search and embedder configure search_code.
  RepositoryTools(std::string root, const HybridOptions& search, Embedder* embedder,
                  ToolLimits limits = {});

  // The four tools as registry entries (permission-free, 32 KiB output cap each), built once;
  // they call back into this object, which must outlive every copy of the registry.
  const ToolRegistry& registry() const { return registry_; }
  // Runs one call; arguments is the JSON text the model wrote. search_code reads store (the
  // caller's connection: a store is used by one thread at a time); null makes it an error.
  nlohmann::json call(const std::string& name, const std::string& arguments, Store* store);

  nlohmann::json read_file(const std::string& path, std::optional<int> start,
                           std::optional<int> end);
  nlohmann::json list_directory(const std::string& path);
  nlohmann::json search_code(Store& store, const std::string& query, int limit);
  nlohmann::json grep(const std::string& pattern, const std::string& path);

  // The absolute path of a repository-relative path, or nullopt (with *why) when it escapes the
  // root, names a secret, or does not exist.
  std::optional<std::string> resolve(const std::string& user_path, std::string* why) const;

 private:
  std::vector<ToolSpec> build_specs() const;

  std::string root_;  // realpath
  HybridOptions search_;
  Embedder* embedder_;
  ToolLimits limits_;
  ToolRegistry registry_;
};

}  // namespace pf
