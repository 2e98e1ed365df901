// Worker threads and their store connections (see worker_pool.h).
#include "runtime/worker_pool.h"

#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <exception>

namespace pf {

namespace asio = boost::asio;

void StorePool::with_store(const std::function<void(Store&)>& work) {
  std::unique_ptr<Store> store;
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      store = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (!store) store = open_store(db_path_, OpenMode::kReadOnly);
  try {
    work(*store);
  } catch (...) {
    std::lock_guard lock(mu_);
    idle_.push_back(std::move(store));
    throw;
  }
  std::lock_guard lock(mu_);
  idle_.push_back(std::move(store));
}

asio::awaitable<void> detail::offload_call(asio::thread_pool& pool, void* target,
                                           void (*call)(void*)) {
  // Only pointers are captured (see offload in the header): the initiation below is itself a
  // temporary of a co_await.
  auto home = co_await asio::this_coro::executor;
  decltype(home)* back = &home;
  asio::thread_pool* workers = &pool;
  co_await asio::async_initiate<decltype(asio::use_awaitable), void(std::exception_ptr)>(
      [workers, target, call, back](auto handler) {
        asio::post(*workers, [target, call, back, handler = std::move(handler)]() mutable {
          std::exception_ptr failure;
          try {
            call(target);
          } catch (...) {
            failure = std::current_exception();
          }
          asio::post(*back, [handler = std::move(handler), failure]() mutable {
            std::move(handler)(failure);
          });
        });
      },
      asio::use_awaitable);
}

asio::awaitable<void> PooledWorkspace::run(std::function<void(Store&)> work) {
  co_await offload(pool_, [this, &work] { stores_.with_store(work); });
}

}  // namespace pf
