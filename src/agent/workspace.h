// Where an answer's blocking work runs — retrieval and tool calls, which read SQLite and files —
// and which store connection it reads. The command line runs it inline on its one store; the
// server runs it on a pool of worker threads, each with its own connection, so the network
// thread that carries thousands of streams never waits on a disk.
#pragma once

#include <functional>
#include "net/awaitable.h"

#include "store/store.h"

namespace pf {

class Workspace {
 public:
  virtual ~Workspace() = default;
  // Runs work with a store connection and resumes the caller when it is done; work's exceptions
  // reach the caller.
  virtual boost::asio::awaitable<void> run(std::function<void(Store&)> work) = 0;
};

// Runs the work at once, on the caller's thread, with one store.
class InlineWorkspace : public Workspace {
 public:
  explicit InlineWorkspace(Store& store) : store_(store) {}
  boost::asio::awaitable<void> run(std::function<void(Store&)> work) override {
    work(store_);
    co_return;
  }

 private:
  Store& store_;
};

}  // namespace pf
