// The server's blocking work — retrieval and tool calls read SQLite and files — runs on a few
// worker threads, never on the network thread that carries every stream. Each worker reads
// through a store connection of its own (a connection is used by one thread at a time), taken
// from a pool that opens them as needed.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/workspace.h"

namespace pf {

class StorePool {
 public:
  explicit StorePool(std::string db_path) : db_path_(std::move(db_path)) {}

  // Runs work with a connection nobody else is using (opened read-only on first need).
  void with_store(const std::function<void(Store&)>& work);

 private:
  std::string db_path_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Store>> idle_;
};

class PooledWorkspace : public Workspace {
 public:
  PooledWorkspace(boost::asio::thread_pool& pool, StorePool& stores)
      : pool_(pool), stores_(stores) {}
  boost::asio::awaitable<void> run(std::function<void(Store&)> work) override;

 private:
  boost::asio::thread_pool& pool_;
  StorePool& stores_;
};

// Runs work on pool and resumes the calling coroutine on its own executor afterwards; work's
// exception is rethrown there.
boost::asio::awaitable<void> offload(boost::asio::thread_pool& pool, std::function<void()> work);

}  // namespace pf
