// The server's blocking work — retrieval and tool calls read SQLite and files — runs on a few
// worker threads, never on the network thread that carries every stream. Each worker reads
// through a store connection of its own (a connection is used by one thread at a time), taken
// from a pool that opens them as needed.
#pragma once

#include <utility>  // before Asio's coroutine header, which uses std::exchange

#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
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

namespace detail {
boost::asio::awaitable<void> offload_call(boost::asio::thread_pool& pool, void* target,
                                          void (*call)(void*));
}  // namespace detail

// Runs work on pool and resumes the calling coroutine on its own executor afterwards; work's
// exception is rethrown there. work is borrowed until then (the caller's co_await keeps it), and
// must capture by reference or pointer: GCC 12 destroys the temporaries of a co_await twice,
// which freed a std::function's target twice (found by ASan), so nothing owning may be one.
template <class F>
boost::asio::awaitable<void> offload(boost::asio::thread_pool& pool, F&& work) {
  using Work = std::remove_reference_t<F>;
  static_assert(std::is_trivially_destructible_v<Work>,
                "offload's work must capture by reference: a co_await's temporaries are "
                "destroyed twice by GCC 12");
  return detail::offload_call(pool, const_cast<void*>(static_cast<const void*>(&work)),
                              [](void* w) { (*static_cast<Work*>(w))(); });
}

}  // namespace pf
