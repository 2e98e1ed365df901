// The answering runtime every transport shares — the HTTP API and the chat bridge — so both
// answer the same way from the same parts: one embedder, worker threads that each read through
// their own store connection, and for each repository answered about its id in the store, its
// tools and its background indexer. The process's main function owns it; every transport that
// borrows it must be gone before it is destroyed.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <map>
#include <memory>
#include <string>

#include "agent/tools.h"
#include "agent/workspace.h"
#include "core/config.h"
#include "llm/embeddings.h"
#include "runtime/index_job.h"
#include "runtime/worker_pool.h"
#include "search/hybrid.h"

namespace pf {

// One repository the runtime answers about.
struct Repository {
  std::string root;      // canonical path
  HybridOptions search;  // the runtime's search settings, narrowed to this repository
  std::unique_ptr<RepositoryTools> tools;
  std::unique_ptr<IndexJob> index_job;  // re-indexes it in the background
  // The store held chunks of it when it was first asked for, or a transport has since started
  // its first index run (transports use it to index a repository once).
  bool indexed = false;
};

class AnswerRuntime {
 public:
  // config is copied; workers: threads for retrieval and tool calls. Throws pf::ConfigError for
  // an embedding model that cannot be set up.
  AnswerRuntime(const Config& config, std::string db_path, int workers);
  ~AnswerRuntime();  // joins the workers: no answer may still be running
  AnswerRuntime(const AnswerRuntime&) = delete;
  AnswerRuntime& operator=(const AnswerRuntime&) = delete;

  const Config& config() const { return config_; }
  const std::string& db_path() const { return db_path_; }
  // Where answers' blocking work runs (any thread may co_await it).
  Workspace& workspace() { return workspace_; }
  boost::asio::thread_pool& pool() { return pool_; }
  // Null when no embedding model is configured (lexical search only).
  Embedder* embedder() const { return embedder_.get(); }
  // Lexical, or hybrid when an embedding model is configured; all repositories.
  const HybridOptions& search_defaults() const { return search_; }

  // The repository at root (made canonical), registered in the store on first use and kept for
  // the runtime's life; the reference stays valid as long as the runtime. on_index_run is given
  // to its index job when it is created. Call from one thread (the network thread). Throws
  // UsageError when root is not a directory, pf::Error when the store cannot be opened.
  Repository& repository(const std::string& root, IndexJob::RunObserver on_index_run = {});

 private:
  Config config_;
  std::string db_path_;
  boost::asio::thread_pool pool_;
  StorePool stores_;
  PooledWorkspace workspace_;
  std::unique_ptr<Embedder> embedder_;
  HybridOptions search_;
  std::map<std::string, std::unique_ptr<Repository>> repositories_;
};

// The repository a server answers about when it has one: explicit (--repo), else the config's
// server.repository, else the store's only repository; empty when there is none. A git URL is
// its clone's folder, cloned now when it is not there yet. Throws UsageError for a path that is
// not a directory or a store of several repositories, pf::Error when a clone fails.
std::string find_server_root(const Config& config, const std::string& db_path,
                             const std::string& explicit_root);

}  // namespace pf
