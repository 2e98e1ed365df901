// Runs a coroutine to completion on a private io_context. The command line is synchronous; the
// server is not; both share one asynchronous implementation of everything that waits on the
// network, and this is the bridge from the former to it.
#pragma once

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>
#include "net/awaitable.h"

namespace pf {

template <typename T>
T run_sync(boost::asio::awaitable<T> work) {
  boost::asio::io_context io;
  std::exception_ptr failure;
  if constexpr (std::is_void_v<T>) {
    boost::asio::co_spawn(io, std::move(work), [&](std::exception_ptr e) { failure = e; });
    io.run();
    if (failure) std::rethrow_exception(failure);
  } else {
    std::optional<T> result;
    boost::asio::co_spawn(io, std::move(work), [&](std::exception_ptr e, T r) {
      failure = e;
      if (!e) result.emplace(std::move(r));
    });
    io.run();
    if (failure) std::rethrow_exception(failure);
    return std::move(*result);
  }
}

}  // namespace pf
