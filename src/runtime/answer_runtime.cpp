// The shared answering runtime (see answer_runtime.h).
#include "runtime/answer_runtime.h"

#include <filesystem>

#include "core/log.h"
#include "index/git_source.h"
#include "runtime/own_paths.h"
#include "search/retrieval_config.h"
#include "store/store.h"

namespace pf {

AnswerRuntime::AnswerRuntime(const Config& config, std::string db_path, int workers)
    : config_(config),
      db_path_(std::move(db_path)),
      pool_(static_cast<size_t>(std::max(1, workers))),
      stores_(db_path_),
      workspace_(pool_, stores_) {
  search_.mode = SearchMode::kLexical;
  apply_retrieval(retrieval_config(config_), search_);
  if (!config_.defaults.embedding_model.empty()) {
    embedder_ = make_embedder(config_, config_.defaults.embedding_model);
    search_.mode = SearchMode::kHybrid;
  }
}

AnswerRuntime::~AnswerRuntime() {
  repositories_.clear();  // index jobs finish first: they hold no worker, but read the config
  pool_.join();
}

Repository& AnswerRuntime::repository(const std::string& root, IndexJob::RunObserver on_index_run) {
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec))
    throw UsageError("the repository " + root + " is not a directory");
  std::string canonical = std::filesystem::canonical(root, ec).string();
  auto it = repositories_.find(canonical);
  if (it != repositories_.end()) return *it->second;
  auto repo = std::make_unique<Repository>();
  repo->root = canonical;
  repo->search = search_;
  {
    auto store = open_store(db_path_, OpenMode::kReadWrite);
    repo->search.base.repo_id = store->ensure_repository(canonical);
    repo->indexed = store->has_chunks(repo->search.base.repo_id);
  }
  repo->tools = std::make_unique<RepositoryTools>(canonical, repo->search, embedder_.get(),
                                                  own_paths(config_, db_path_, canonical));
  repo->index_job =
      std::make_unique<IndexJob>(db_path_, canonical, config_, std::move(on_index_run));
  return *repositories_.emplace(canonical, std::move(repo)).first->second;
}

std::string find_server_root(const Config& config, const std::string& db_path,
                             const std::string& explicit_root) {
  std::string root = !explicit_root.empty() ? explicit_root : config.server.repository;
  if (is_git_url(root)) {
    GitSource source = parse_git_source(root);
    std::string dir = clone_folder(source, git_config(config).clone_dir);
    std::error_code ec;
    if (!std::filesystem::exists(dir, ec)) {
      log::info("index", "cloning " + source.url + " into " + dir);
      sync_checkout(source, dir, git_config(config));
    }
    root = dir;
  }
  if (!root.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(root, ec))
      throw UsageError("the repository " + root + " is not a directory");
    return std::filesystem::canonical(root, ec).string();
  }
  auto store = open_store(db_path, OpenMode::kReadWrite);
  std::vector<RepositoryInfo> repositories = store->list_repositories();
  if (repositories.size() == 1) return repositories.front().root;
  if (repositories.size() > 1)
    throw UsageError("the store holds " + std::to_string(repositories.size()) +
                     " repositories: name the one to serve with --repo DIR");
  return {};
}

}  // namespace pf
